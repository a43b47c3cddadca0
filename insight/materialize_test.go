package insight

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/sql/engine"
)

func TestMaterializedEqualsInline(t *testing.T) {
	events := genEvents(2500, 5)
	db := openDB(t, events)
	at := time.Date(2025, 5, 20, 9, 30, 0, 0, time.UTC)
	queries := map[string]string{
		"no breakdown": `{"kind":"TrendsQuery","series":[{"kind":"EventsNode","event":"$pageview"},{"kind":"EventsNode","event":"signed_up","math":"dau"}],"interval":"day"}`,
		"relative range": `{"kind":"TrendsQuery","series":[{"kind":"EventsNode","event":"purchase","math":"max","math_property":"amount"}],
			"interval":"week","dateRange":{"date_from":"-6w"},"breakdownFilter":{"breakdown":"$browser"}}`,
		"two breakdowns": twoBreakdowns,
		"hourly": `{"kind":"TrendsQuery","series":[{"kind":"EventsNode","event":"$pageview","math":"avg","math_property":"amount"}],
			"interval":"hour","dateRange":{"date_from":"-3d","date_to":"-1d"},"breakdownFilter":{"breakdowns":[{"property":"$os"}]}}`,
		"retention": `{"kind":"RetentionQuery","retentionFilter":{"targetEntity":{"id":"$pageview","type":"events"},"returningEntity":{"id":"purchase","type":"events"},
			"period":"Day","totalIntervals":10,"retentionType":"retention_recurring"},"dateRange":{"date_from":"-20d"},"breakdownFilter":{"breakdown":"$browser"}}`,
		"lifecycle": `{"kind":"LifecycleQuery","series":[{"kind":"EventsNode","event":"$pageview"}],"interval":"day",
			"dateRange":{"date_from":"-30d"},"properties":[{"key":"$os","value":"Linux","operator":"is_not","type":"event"}]}`,
		"lifecycle all events monthly": `{"kind":"LifecycleQuery","series":[{"kind":"EventsNode"}],"interval":"month","dateRange":{"date_from":"2025-03-01"}}`,
		"retention first time": `{"kind":"RetentionQuery","retentionFilter":{"targetEntity":{"id":"signed_up","type":"events"},"returningEntity":{"id":"$pageview","type":"events"},
			"period":"Month","totalIntervals":3,"retentionType":"retention_first_time"},"breakdownFilter":{"breakdowns":[{"property":"$os"},{"property":"$browser"}]}}`,
	}
	i := 0
	for name, text := range queries {
		i++
		table := fmt.Sprintf("insight_mat_%d", i)
		t.Run(name, func(t *testing.T) {
			saved := mustDecode(t, text)
			stmts, err := Materialize(saved, engine.SQLite, table, at)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			for range 2 { // building twice replaces the table
				for _, s := range stmts {
					_, err := db.Exec(s.SQL, s.Args...)
					if err != nil {
						t.Fatalf("%v: unexpected error: %v", s.SQL, err)
					}
				}
			}
			var valueSets []map[string]any
			valueSets = append(valueSets, map[string]any{})
			if len(saved.Breakdowns) > 0 {
				full := run(t, db, saved, at)
				for key := range groupByBreakdown(t, full) {
					var parts []string
					if err := json.Unmarshal([]byte(key), &parts); err != nil {
						t.Fatalf("unexpected error: %v", err)
					}
					values := map[string]any{}
					for j, b := range saved.Breakdowns {
						values[b.Property] = parts[j]
					}
					valueSets = append(valueSets, values)
					// Only the first breakdown given.
					valueSets = append(valueSets, map[string]any{saved.Breakdowns[0].Property: parts[0]})
				}
				valueSets = append(valueSets, map[string]any{saved.Breakdowns[0].Property: "no such value"})
				if a, b := len(valueSets), 4; !(a > b) {
					t.Fatalf("len(valueSets) = %v, want > %v", a, b)
				}
			}
			for _, values := range valueSets {
				applied, err := saved.Apply(values)
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				inline := run(t, db, applied, at)

				read, err := ReadMaterialized(saved, engine.SQLite, table, values, at)
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				got, err := read.Shape(queryRows(t, db, read.SQL, read.Args))
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				requireSameJSON(t, inline, got)
			}
		})
	}
}

func TestReadMaterializedRefusesDates(t *testing.T) {
	saved := mustDecode(t, twoBreakdowns)
	at := time.Date(2025, 5, 20, 0, 0, 0, 0, time.UTC)
	for _, values := range []map[string]any{
		{"date_from": "2025-04-01"},
		{"date_to": "2025-04-01", "$browser": "Chrome"},
		{"country": "US"},
	} {
		_, err := ReadMaterialized(saved, engine.SQLite, "t", values, at)
		var unknown *UnknownVariablesError
		if !errors.As(err, &unknown) {
			t.Fatalf("%v: errors.As(err, &unknown) is false", err)
		}
		if !errors.Is(err, ErrUnknownVariable) {
			t.Fatalf("errors.Is(err, ErrUnknownVariable) is false")
		}
	}
	_, err := ReadMaterialized(saved, engine.SQLite, "t", map[string]any{"date_to": "x", "date_from": "y"}, at)
	if err := err; err == nil || err.Error() != "Unknown variable(s): date_from, date_to" {
		t.Fatalf("error = %v, want %q", err, "Unknown variable(s): date_from, date_to")
	}
	_, err = ReadMaterialized(saved, engine.SQLite, "t", map[string]any{"$os": true}, at)
	if err := err; !errors.Is(err, ErrInvalidValue) {
		t.Fatalf("error %v is not %v", err, ErrInvalidValue)
	}
	_, err = Materialize(saved, engine.SQLite, "", at)
	if err == nil {
		t.Fatalf("got no error, want one")
	}
}

func TestMaterializeStatements(t *testing.T) {
	saved := mustDecode(t, twoBreakdowns)
	at := time.Date(2025, 5, 20, 0, 0, 0, 0, time.UTC)
	for _, d := range []engine.Engine{engine.SQLite, engine.PostgreSQL, engine.MySQL, engine.ClickHouse} {
		stmts, err := Materialize(saved, d, "mat", at)
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		// The table stores every value: the inline rows before the limit.
		every, err := compile(saved, d, at, false)
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if s, sub := stmts[0].SQL, "DROP TABLE IF EXISTS"; !strings.Contains(s, sub) {
			t.Fatalf("%q does not contain %q", s, sub)
		}
		if s, sub := stmts[1].SQL, "CREATE TABLE"; !strings.Contains(s, sub) {
			t.Fatalf("%q does not contain %q", s, sub)
		}
		if got, want := stmts[2].Args, every.Args; !reflect.DeepEqual(got, want) {
			t.Fatalf("the fill binds what the inline query binds: stmts[2].Args = %+v, want %+v", got, want)
		}
		if s, sub := stmts[2].SQL, every.SQL; !strings.Contains(s, sub) {
			t.Fatalf("%q does not contain %q", s, sub)
		}
		if s, sub := stmts[2].SQL, "dense_rank"; strings.Contains(s, sub) {
			t.Fatalf("%q contains %q", s, sub)
		}
		for _, s := range stmts {
			if s, sub := s.SQL, "Chrome"; strings.Contains(s, sub) {
				t.Fatalf("%q contains %q", s, sub)
			}
			if s, sub := s.SQL, "$browser"; strings.Contains(s, sub) {
				t.Fatalf("%q contains %q", s, sub)
			}
		}
		// Every breakdown given: one combination, which the limit keeps,
		// so the read is the stored rows themselves.
		read, err := ReadMaterialized(saved, d, "mat", map[string]any{"$browser": "Chrome", "$os": "Linux"}, at)
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if got, want := read.Args, ([]any{"Chrome", "Linux"}); !reflect.DeepEqual(got, want) {
			t.Fatalf("read.Args = %+v, want %+v", got, want)
		}
		if s, sub := read.SQL, "dense_rank"; strings.Contains(s, sub) {
			t.Fatalf("no window over one combination: %q contains %q", s, sub)
		}
		if s, sub := read.SQL, "Chrome"; strings.Contains(s, sub) {
			t.Fatalf("%q contains %q", s, sub)
		}
		// One omitted (optional): every value of it, so the limit ranks them.
		read, err = ReadMaterialized(saved, d, "mat", map[string]any{"$browser": "Chrome"}, at)
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if !slices.Contains(read.Args, any("Chrome")) {
			t.Fatalf("read.Args = %v, want the value %q among them", read.Args, "Chrome")
		}
		if got := len(read.Args); got != 4 {
			t.Fatalf("the value and the limit, bound once per use: len(read.Args) = %d, want %d: %v", got, 4, read.Args)
		}
		if s, sub := read.SQL, "dense_rank"; !strings.Contains(s, sub) {
			t.Fatalf("the read applies the limit: %q does not contain %q", s, sub)
		}
	}
}
