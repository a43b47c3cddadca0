package insight

import (
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
)

// limitEvents makes events whose "page" takes 40 values with counts that
// tie often (1 + 7i mod 13 events for page i), plus a large group without
// the property, over ten days; "plan" splits them three ways, "amount"
// is a number with exact binary sums on most of them.
func limitEvents() []testEvent {
	start := time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC)
	var out []testEvent
	add := func(page any, n, i int) {
		for j := range n {
			e := testEvent{
				event: []string{"$pageview", "purchase"}[j%2],
				actor: fmt.Sprintf("u%d", (i*3+j)%11),
				ts:    start.Add(time.Duration((i*5+j*7)%240) * time.Hour),
				props: map[string]any{"plan": []string{"free", "pro", "team"}[(i+j)%3]},
			}
			if page != nil {
				e.props["page"] = page
			}
			if (i+j)%4 != 0 {
				e.props["amount"] = float64((i*j)%17) * 0.25
			}
			out = append(out, e)
		}
	}
	for i := range 40 {
		add(fmt.Sprintf("p%02d", i), 2*(1+(7*i)%13), i)
	}
	add(nil, 30, 99)
	return out
}

// foldTop is the breakdown limit written plainly, over a result with every
// value: for each query series (told apart by its events, which prefix the
// labels), the limit series of largest Count, ties by values in byte
// order, then one series summing the others interval by interval.
func foldTop(t *testing.T, all *Result, events []string, limit int, hide bool, breakdowns int) *Result {
	t.Helper()
	values := func(s TrendsSeries) []string {
		if v, ok := s.BreakdownValue.(string); ok {
			return []string{v}
		}
		return s.BreakdownValue.([]string)
	}
	out := &Result{Kind: Trends, Series: []TrendsSeries{}}
	for _, ev := range events {
		prefix := ""
		if len(events) > 1 {
			prefix = ev + " - "
		}
		var mine []TrendsSeries
		for _, s := range all.Series {
			if strings.HasPrefix(s.Label, prefix) {
				got, want := strings.TrimPrefix(s.Label, prefix), OtherLabel
				require.NotEqual(t, want, got, "the full result has no other series: strings.TrimPrefix(s.Label, prefix)")
				mine = append(mine, s)
			}
		}
		slices.SortStableFunc(mine, func(a, b TrendsSeries) int {
			if a.Count != b.Count {
				if a.Count > b.Count {
					return -1
				}
				return 1
			}
			return slices.Compare(values(a), values(b))
		})
		if len(mine) <= limit {
			out.Series = append(out.Series, mine...)
			continue
		}
		out.HasMore = true
		out.Series = append(out.Series, mine[:limit]...)
		if hide {
			continue
		}
		other := TrendsSeries{Label: prefix + OtherLabel, Days: mine[0].Days, Labels: mine[0].Labels, Data: make([]float64, len(mine[0].Data))}
		if breakdowns == 1 {
			other.BreakdownValue = OtherBreakdownValue
		} else {
			other.BreakdownValue = slices.Repeat([]string{OtherBreakdownValue}, breakdowns)
		}
		for _, s := range mine[limit:] {
			for i, v := range s.Data {
				other.Data[i] += v
				other.Count += v
			}
		}
		out.Series = append(out.Series, other)
	}
	return out
}

// withLimit returns a copy of q with another breakdown limit.
func withLimit(q *Query, limit int, hide bool) *Query {
	c := q.clone()
	c.BreakdownLimit, c.HideOther = limit, hide
	return c
}

// compiledRows compiles q at now and returns its rows unshaped.
func compiledRows(t *testing.T, db *sql.DB, q *Query, now time.Time) (*Compiled, [][]any) {
	t.Helper()
	c, err := Compile(q, engine.SQLite, now)
	require.NoError(t, err)
	return c, queryRows(t, db, c.SQL, c.Args)
}

// TestBreakdownLimitFoldsTheRest: for every math, one and two breakdowns,
// limits below, at and above the number of values, with and without the
// other series, the limited run equals the fold of the run with every
// value; the statement returns at most limit+1 series' rows per query
// series, so that the limit bounds what the engine sends, not only the
// answer.
func TestBreakdownLimitFoldsTheRest(t *testing.T) {
	events := limitEvents()
	db := eventsDB(t, events)
	now := time.Date(2025, 5, 12, 0, 0, 0, 0, time.UTC)
	breakdowns := map[int]string{
		1: `{"breakdown":"page","breakdown_type":"event"}`,
		2: `{"breakdowns":[{"property":"page"},{"property":"plan"}]}`,
	}
	for _, m := range maths {
		prop := ""
		if m.needsProperty() {
			prop = `,"math_property":"amount"`
		}
		for nb, filter := range breakdowns {
			text := fmt.Sprintf(`{"kind":"TrendsQuery","series":[{"kind":"EventsNode","event":"$pageview"},{"kind":"EventsNode","event":"purchase","math":%q%s}],
				"dateRange":{"date_from":"2025-05-01","date_to":"2025-05-10"},"breakdownFilter":%s}`, m, prop, filter)
			saved := mustDecode(t, text)
			require.Equal(t, 0, saved.BreakdownLimit)
			all := run(t, db, withLimit(saved, 1_000_000, false), now)
			a, b := len(all.Series), 2*DefaultBreakdownLimit
			require.True(t, (a > b), "enough values to limit: len(all.Series) = %v, want > %v", a, b)
			for _, lc := range []struct {
				limit int
				hide  bool
			}{{1, false}, {7, true}, {0, false}, {0, true}, {1000, false}} {
				limit, hide := lc.limit, lc.hide
				name := fmt.Sprintf("%s/%d breakdowns/limit %d/hide %v", m, nb, limit, hide)
				t.Run(name, func(t *testing.T) {
					q := withLimit(saved, limit, hide)
					c, rows := compiledRows(t, db, q, now)
					got, err := c.Shape(rows)
					require.NoError(t, err)
					effective := q.breakdownLimit()
					want := foldTop(t, all, []string{"$pageview", "purchase"}, effective, hide, nb)
					requireSameJSON(t, want, got)
					if got, want := got.HasMore, want.HasMore; got != want {
						t.Fatalf("hasMore: got.HasMore = %v, want %v", got, want)
					}
					if got, want := got.HasMore, limit != 1000; got != want {
						t.Fatalf("more values than the limit: got.HasMore = %v, want %v", got, want)
					}

					perSeries := map[any]map[string]bool{}
					for _, row := range rows {
						key, err := breakdownValues(0, row[2:2+nb])
						require.NoError(t, err)
						if perSeries[row[0]] == nil {
							perSeries[row[0]] = map[string]bool{}
						}
						perSeries[row[0]][key+fmt.Sprint(row[len(row)-1])] = true
					}
					for s, keys := range perSeries {
						a, b := len(keys), effective+1
						require.True(t, (a <= b), "series %v returns rows of %d series: len(keys) = %v, want <= %v", s, len(keys), a, b)
					}
				})
			}
		}
	}
}

// TestBreakdownLimitTies: equal totals are kept in ascending order of
// their values, and the unset value competes by its total like any other.
func TestBreakdownLimitTies(t *testing.T) {
	at := time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC)
	var events []testEvent
	for page, n := range map[any]int{"b": 2, "a": 2, "d": 2, "c": 2, "z": 3, "B": 2, nil: 1} {
		for range n {
			e := testEvent{event: "e", actor: "u", ts: at, props: map[string]any{}}
			if page != nil {
				e.props["page"] = page
			}
			events = append(events, e)
		}
	}
	db := eventsDB(t, events)
	now := time.Date(2025, 5, 2, 0, 0, 0, 0, time.UTC)
	labels := func(limit int, extra string) []string {
		q := mustDecode(t, fmt.Sprintf(`{"kind":"TrendsQuery","series":[{"kind":"EventsNode","event":"e"}],"dateRange":{"date_from":"2025-05-01","date_to":"2025-05-01"},
			"breakdownFilter":{"breakdown":"page","breakdown_limit":%d%s}}`, limit, extra))
		var out []string
		for _, s := range run(t, db, q, now).Series {
			out = append(out, fmt.Sprintf("%s=%v", s.Label, s.Count))
		}
		return out
	}
	// Byte order: "B" before "a".
	require.Equal(t, []string{"z=3", "B=2", "a=2", "Other (i.e. all remaining values)=7"}, labels(3, ""))
	require.Equal(t, []string{"z=3", "B=2", "a=2", "b=2", "c=2", "d=2", "none=1"}, labels(7, ""))
	require.Equal(t, []string{"z=3", "B=2", "a=2", "b=2", "c=2", "d=2"}, labels(6, `,"breakdown_hide_other_aggregation":true`))

	// The unset value is no less a value: with the most events it is
	// kept first.
	for range 5 {
		events = append(events, testEvent{event: "e", actor: "u", ts: at, props: map[string]any{}})
	}
	db = eventsDB(t, events)
	require.Equal(t, []string{"none=6", "Other (i.e. all remaining values)=13"}, labels(1, ""))
}

// TestBreakdownVariableOutsideTheLimit: a breakdown variable selects its
// value even when the limit does not keep it, inline and from a
// materialized table alike; without variables a materialized read keeps
// and folds the same values as the inline run.
func TestBreakdownVariableOutsideTheLimit(t *testing.T) {
	events := limitEvents()
	db := eventsDB(t, events)
	at := time.Date(2025, 5, 12, 0, 0, 0, 0, time.UTC)
	for name, text := range map[string]string{
		"one breakdown": `{"kind":"TrendsQuery","series":[{"kind":"EventsNode","event":"$pageview","math":"dau"}],"dateRange":{"date_from":"2025-05-01","date_to":"2025-05-10"},
			"breakdownFilter":{"breakdown":"page","breakdown_limit":5}}`,
		"two breakdowns": `{"kind":"TrendsQuery","series":[{"kind":"EventsNode","event":"purchase","math":"avg","math_property":"amount"}],"dateRange":{"date_from":"2025-05-01","date_to":"2025-05-10"},
			"breakdownFilter":{"breakdowns":[{"property":"page"},{"property":"plan"}],"breakdown_limit":4}}`,
		"hidden other": `{"kind":"TrendsQuery","series":[{"kind":"EventsNode"},{"kind":"EventsNode","event":"purchase","math":"max","math_property":"amount"}],"interval":"week",
			"dateRange":{"date_from":"2025-05-01","date_to":"2025-05-10"},"breakdownFilter":{"breakdown":"page","breakdown_limit":3,"breakdown_hide_other_aggregation":true}}`,
	} {
		t.Run(name, func(t *testing.T) {
			saved := mustDecode(t, text)
			table := "limit_" + strings.ReplaceAll(name, " ", "_")
			stmts, err := Materialize(saved, engine.SQLite, table, at)
			require.NoError(t, err)
			for _, s := range stmts {
				_, err := db.Exec(s.SQL, s.Args...)
				require.NoError(t, err, "%v", s.SQL)
			}
			all := run(t, db, withLimit(saved, 1_000_000, false), at)
			limited := run(t, db, saved, at)
			a, b := len(limited.Series), len(all.Series)
			require.True(t, (a < b), "len(limited.Series) = %v, want < %v", a, b)
			inList := func(res *Result, bv any) bool {
				for _, s := range res.Series {
					if fmt.Sprint(s.BreakdownValue) == fmt.Sprint(bv) {
						return true
					}
				}
				return false
			}
			read := func(values map[string]any) *Result {
				c, err := ReadMaterialized(saved, engine.SQLite, table, values, at)
				require.NoError(t, err)
				res, err := c.Shape(queryRows(t, db, c.SQL, c.Args))
				require.NoError(t, err)
				return res
			}
			requireSameJSON(t, limited, read(nil))

			// Every fifth value outside the limit: enough to see, few
			// enough to stay quick.
			outside := 0
			for i, s := range all.Series {
				if inList(limited, s.BreakdownValue) || i%5 != 0 {
					continue
				}
				outside++
				values := map[string]any{}
				first := map[string]any{}
				switch v := s.BreakdownValue.(type) {
				case string:
					values[saved.Breakdowns[0].Property] = v
				case []string:
					for i, b := range saved.Breakdowns {
						values[b.Property] = v[i]
					}
					first[saved.Breakdowns[0].Property] = v[0]
				}
				applied, err := saved.Apply(values)
				require.NoError(t, err)
				inline := run(t, db, applied, at)
				require.True(t, inList(inline, s.BreakdownValue), "%v not selected by its variables: inList(inline, s.BreakdownValue) is false", s.BreakdownValue)
				got := len(inline.Series)
				require.Equal(t, countOf(all, s.BreakdownValue), got, "one series per query series with events of %v: len(inline.Series) = %d, want %d: %v", s.BreakdownValue, got, countOf(all, s.BreakdownValue), inline.Series)
				requireSameJSON(t, inline, read(values))
				if len(first) > 0 {
					applied, err := saved.Apply(first)
					require.NoError(t, err)
					requireSameJSON(t, run(t, db, applied, at), read(first))
				}
			}
			if a, b := outside, 3; !(a > b) {
				t.Fatalf("outside = %v, want > %v", a, b)
			}
		})
	}
}

// countOf is how many series of res have the breakdown values bv: one per
// query series with events of those values.
func countOf(res *Result, bv any) int {
	n := 0
	for _, s := range res.Series {
		if fmt.Sprint(s.BreakdownValue) == fmt.Sprint(bv) {
			n++
		}
	}
	return n
}

// TestBreakdownLimitStatementBounds: the limit travels as a bound
// argument, never in the SQL text, on every engine.
func TestBreakdownLimitStatementBounds(t *testing.T) {
	q := mustDecode(t, `{"kind":"TrendsQuery","series":[{"kind":"EventsNode"}],"breakdownFilter":{"breakdown":"page","breakdown_limit":987654,"breakdown_hide_other_aggregation":true}}`)
	for _, d := range dialects {
		c, err := Compile(q, d, compileNow)
		require.NoError(t, err)
		require.NotContains(t, c.SQL, "987654")
		require.Contains(t, fmt.Sprint(c.Args), "987654")
	}
}
