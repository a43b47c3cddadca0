package insight

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
)

func TestMaterializedEqualsInline(t *testing.T) {
	events := genEvents(2500, 5)
	db := eventsDB(t, events)
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
			require.NoError(t, err)
			for range 2 { // building twice replaces the table
				for _, s := range stmts {
					_, err := db.Exec(s.SQL, s.Args...)
					require.NoError(t, err, "%v", s.SQL)
				}
			}
			var valueSets []map[string]any
			valueSets = append(valueSets, map[string]any{})
			if len(saved.Breakdowns) > 0 {
				full := run(t, db, saved, at)
				for key := range groupByBreakdown(t, full) {
					var parts []string
					require.NoError(t, json.Unmarshal([]byte(key), &parts))
					values := map[string]any{}
					for j, b := range saved.Breakdowns {
						values[b.Property] = parts[j]
					}
					valueSets = append(valueSets, values)
					// Only the first breakdown given.
					valueSets = append(valueSets, map[string]any{saved.Breakdowns[0].Property: parts[0]})
				}
				valueSets = append(valueSets, map[string]any{saved.Breakdowns[0].Property: "no such value"})
				a, b := len(valueSets), 4
				require.True(t, (a > b), "len(valueSets) = %v, want > %v", a, b)
			}
			for _, values := range valueSets {
				applied, err := saved.Apply(values)
				require.NoError(t, err)
				inline := run(t, db, applied, at)

				read, err := ReadMaterialized(saved, engine.SQLite, table, values, at)
				require.NoError(t, err)
				got, err := read.Shape(queryRows(t, db, read.SQL, read.Args))
				require.NoError(t, err)
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
		require.ErrorAs(t, err, &unknown)
		require.ErrorIs(t, err, ErrUnknownVariable, "errors.Is(err, ErrUnknownVariable) is false")
	}
	_, err := ReadMaterialized(saved, engine.SQLite, "t", map[string]any{"date_to": "x", "date_from": "y"}, at)
	if err := err; err == nil || err.Error() != "Unknown variable(s): date_from, date_to" {
		t.Fatalf("error = %v, want %q", err, "Unknown variable(s): date_from, date_to")
	}
	_, err = ReadMaterialized(saved, engine.SQLite, "t", map[string]any{"$os": true}, at)
	require.ErrorIs(t, err, ErrInvalidValue)
	_, err = Materialize(saved, engine.SQLite, "", at)
	require.Error(t, err)
}

func TestMaterializeStatements(t *testing.T) {
	saved := mustDecode(t, twoBreakdowns)
	at := time.Date(2025, 5, 20, 0, 0, 0, 0, time.UTC)
	for _, d := range []engine.Engine{engine.SQLite, engine.PostgreSQL, engine.MySQL, engine.ClickHouse} {
		stmts, err := Materialize(saved, d, "mat", at)
		require.NoError(t, err)
		// The table stores every value: the inline rows before the limit.
		every, err := compile(saved, d, at, false)
		require.NoError(t, err)
		require.Contains(t, stmts[0].SQL, "DROP TABLE IF EXISTS")
		require.Contains(t, stmts[1].SQL, "CREATE TABLE")
		got, want := stmts[2].Args, every.Args
		require.Equal(t, want, got, "the fill binds what the inline query binds: stmts[2].Args")
		require.Contains(t, stmts[2].SQL, every.SQL)
		require.NotContains(t, stmts[2].SQL, "dense_rank")
		for _, s := range stmts {
			require.NotContains(t, s.SQL, "Chrome")
			require.NotContains(t, s.SQL, "$browser")
		}
		// Every breakdown given: one combination, which the limit keeps,
		// so the read is the stored rows themselves.
		read, err := ReadMaterialized(saved, d, "mat", map[string]any{"$browser": "Chrome", "$os": "Linux"}, at)
		require.NoError(t, err)
		require.Equal(t, []any{"Chrome", "Linux"}, read.Args)
		require.NotContains(t, read.SQL, "dense_rank", "no window over one combination")
		require.NotContains(t, read.SQL, "Chrome")
		// One omitted (optional): every value of it, so the limit ranks them.
		read, err = ReadMaterialized(saved, d, "mat", map[string]any{"$browser": "Chrome"}, at)
		require.NoError(t, err)
		require.True(t, slices.Contains(read.Args, any("Chrome")), "read.Args = %v, want the value %q among them", read.Args, "Chrome")
		if got := len(read.Args); got != 4 {
			t.Fatalf("the value and the limit, bound once per use: len(read.Args) = %d, want %d: %v", got, 4, read.Args)
		}
		require.Contains(t, read.SQL, "dense_rank", "the read applies the limit")
	}
}
