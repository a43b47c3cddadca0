package endpoint_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/insight"
	"github.com/endpointkit/endpointkit/internal/stmt"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/require"
)

// pageValues is how many values the "page" property takes in the events
// of loadPages: the 300, far past the default limit of 25.
const pageValues = 300

// pageEvents are the events of loadPages: page i has 1 + 7i mod 13
// $pageview events (so that totals tie often), every third one also a
// purchase by the same user, over ten days of May 2025; 40 more
// pageviews have no page.
func pageEvents() [][]any {
	start := time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC)
	var rows [][]any
	add := func(props map[string]any, n, i int) {
		for j := range n {
			for _, ev := range []string{"$pageview", "purchase"} {
				if ev == "purchase" && j%3 != 0 {
					continue
				}
				p, _ := json.Marshal(props)
				ts := start.Add(time.Duration((i*5+j*7)%240) * time.Hour).Format(demo.TimeLayout)
				rows = append(rows, []any{"1", fmt.Sprintf("e%d-%d-%s", i, j, ev), ev, fmt.Sprintf("u%d", (i+j)%17), ts, string(p)})
			}
		}
	}
	for i := range pageValues {
		add(map[string]any{"page": fmt.Sprintf("/p%03d", i), "amount": float64(i%9) * 0.5}, 1+(7*i)%13, i)
	}
	add(map[string]any{"amount": 1}, 40, pageValues)
	return rows
}

// loadPages creates the events table through x and inserts pageEvents,
// every value bound.
func loadPages(t *testing.T, x driver.Executor) {
	t.Helper()
	ctx := context.Background()
	e := x.Engine()
	for _, ddl := range demo.SchemaFor(e) {
		require.NoError(t, x.Exec(ctx, []driver.Statement{stmt.New(ddl, nil)}, driver.Write{Tx: false}), "%s", ddl)
	}
	rows := pageEvents()
	for len(rows) > 0 {
		n := min(len(rows), 100)
		q := []byte("INSERT INTO events (project_id, uuid, event, distinct_id, timestamp, properties) VALUES ")
		var args []any
		for i, row := range rows[:n] {
			if i > 0 {
				q = append(q, ", "...)
			}
			q = append(q, '(')
			for j, v := range row {
				if j > 0 {
					q = append(q, ", "...)
				}
				arg, typ, err := e.Arg(v)
				require.NoError(t, err)
				args = append(args, arg)
				q = e.Marker(q, len(args), typ)
			}
			q = append(q, ')')
		}
		require.NoError(t, x.Exec(ctx, []driver.Statement{stmt.New(string(q), args)}, driver.Write{Tx: false}), "insert")
		rows = rows[n:]
	}
}

// pagesQuery is a daily trends query of pageviews and of purchasing users
// by page; filter is added to its breakdownFilter.
func pagesQuery(t *testing.T, filter string) *endpoint.Query {
	return insightQuery(t, `{"kind": "TrendsQuery",
		"series": [{"kind": "EventsNode", "event": "$pageview"}, {"kind": "EventsNode", "event": "purchase", "math": "dau"}],
		"interval": "day", "dateRange": {"date_from": "2025-05-01", "date_to": "2025-05-10"},
		"breakdownFilter": {"breakdown": "page", "breakdown_type": "event"`+filter+`}}`)
}

// trendsOf runs an insight endpoint and returns its series.
func trendsOf(t *testing.T, svc *endpoint.Service, name string, vars map[string]any) ([]insight.TrendsSeries, *endpoint.RunResult) {
	t.Helper()
	res, err := svc.Run(context.Background(), "1", name, endpoint.RunRequest{Variables: vars})
	require.NoError(t, err, "Run(%s, %v)", name, vars)
	return res.Results.(*insight.Result).Series, res
}

// foldPages is the breakdown limit written plainly over the series of
// every value: per query series (by the event that prefixes its labels),
// the limit largest Counts, ties by value, then one Other series of the
// rest's sums unless hidden.
func foldPages(all []insight.TrendsSeries, limit int, hide bool) []insight.TrendsSeries {
	out := []insight.TrendsSeries{}
	for _, ev := range []string{"$pageview", "purchase"} {
		var mine []insight.TrendsSeries
		for _, s := range all {
			if strings.HasPrefix(s.Label, ev+" - ") {
				mine = append(mine, s)
			}
		}
		slices.SortStableFunc(mine, func(a, b insight.TrendsSeries) int {
			if a.Count != b.Count {
				if a.Count > b.Count {
					return -1
				}
				return 1
			}
			return strings.Compare(a.BreakdownValue.(string), b.BreakdownValue.(string))
		})
		if len(mine) <= limit {
			out = append(out, mine...)
			continue
		}
		out = append(out, mine[:limit]...)
		if hide {
			continue
		}
		other := insight.TrendsSeries{Label: ev + " - " + insight.OtherLabel, BreakdownValue: insight.OtherBreakdownValue,
			Days: mine[0].Days, Labels: mine[0].Labels, Data: make([]float64, len(mine[0].Data))}
		for _, s := range mine[limit:] {
			for i, v := range s.Data {
				other.Data[i] += v
				other.Count += v
			}
		}
		out = append(out, other)
	}
	return out
}

func requireSameSeries(t *testing.T, what string, want, got []insight.TrendsSeries) {
	t.Helper()
	w, _ := json.Marshal(want)
	g, _ := json.Marshal(got)
	require.Equal(t, string(g), string(w), "%s:\ngot  %s\nwant %s", what, g, w)
}

// checkBreakdownLimit runs the breakdown limit's checks on a Service whose
// executor holds pageEvents, and returns the default-limited series for a
// comparison across engines:
//   - 300 values answer 25 per query series and an Other series summing
//     the rest, exactly the fold of the run of every value;
//   - breakdown_hide_other_aggregation drops Other, and a breakdown_limit
//     of its own replaces the default;
//   - a breakdown variable selects a value outside the 25;
//   - a materialized endpoint answers as the inline one, without a
//     variable (limit and Other included) and with one outside the 25.
func checkBreakdownLimit(t *testing.T, svc *endpoint.Service) []insight.TrendsSeries {
	t.Helper()
	ctx := context.Background()
	create := func(name string, q *endpoint.Query, mat bool) {
		t.Helper()
		req := endpoint.CreateRequest{Name: name, Query: q, IsMaterialized: mat}
		if mat {
			req.OptionalBreakdowns = []string{"page"}
		}
		_, err := svc.Create(ctx, "1", req)
		require.NoError(t, err, "Create(%s)", name)
	}
	create("every", pagesQuery(t, `, "breakdown_limit": 1000`), false)
	create("pages", pagesQuery(t, ``), false)
	create("hidden", pagesQuery(t, `, "breakdown_hide_other_aggregation": true`), false)
	create("seven", pagesQuery(t, `, "breakdown_limit": 7`), false)
	create("mat", pagesQuery(t, ``), true)

	all, res := trendsOf(t, svc, "every", nil)
	require.GreaterOrEqual(t, len(all), pageValues, "%d series of every value (hasMore %v), want at least %d", len(all), res.HasMore, pageValues)
	require.False(t, res.HasMore, "%d series of every value (hasMore %v), want at least %d", len(all), res.HasMore, pageValues)
	limited, res := trendsOf(t, svc, "pages", nil)
	require.Len(t, limited, 2*(insight.DefaultBreakdownLimit+1), "%d series (hasMore %v), want 25 and Other for each of the 2 query series", len(limited), res.HasMore)
	require.True(t, res.HasMore, "%d series (hasMore %v), want 25 and Other for each of the 2 query series", len(limited), res.HasMore)
	requireSameSeries(t, "default limit", foldPages(all, insight.DefaultBreakdownLimit, false), limited)
	hidden, res := trendsOf(t, svc, "hidden", nil)
	requireSameSeries(t, "hidden other", foldPages(all, insight.DefaultBreakdownLimit, true), hidden)
	require.True(t, res.HasMore, "hidden Other: hasMore false, want true as PostHog answers")
	seven, _ := trendsOf(t, svc, "seven", nil)
	requireSameSeries(t, "limit 7", foldPages(all, 7, false), seven)

	var outside string
	for _, s := range all {
		v := s.BreakdownValue.(string)
		if !slices.ContainsFunc(limited, func(l insight.TrendsSeries) bool { return l.BreakdownValue == v }) {
			outside = v
		}
	}
	require.NotEqual(t, "", outside, "every value is within the limit")
	one, _ := trendsOf(t, svc, "pages", map[string]any{"page": outside})
	var want []insight.TrendsSeries
	for _, s := range all {
		if s.BreakdownValue == outside {
			want = append(want, s)
		}
	}
	requireSameSeries(t, "a value outside the limit, by its variable", want, one)

	require.NoError(t, svc.Materialize(ctx, "1", "mat"), "Materialize")
	for _, vars := range []map[string]any{nil, {"page": outside}, {"page": ""}, {"page": "/p007"}} {
		got, res := trendsOf(t, svc, "mat", vars)
		require.True(t, res.EndpointMaterialized, "%v: not read from the table", vars)
		inline, inlineRes := trendsOf(t, svc, "pages", vars)
		requireSameSeries(t, fmt.Sprintf("materialized = inline with %v", vars), inline, got)
		require.Equal(t, inlineRes.HasMore, res.HasMore, "%v: hasMore materialized, %v inline", vars, inlineRes.HasMore)
		require.Equal(t, vars == nil, res.HasMore, "%v: hasMore materialized, %v inline", vars, inlineRes.HasMore)
	}
	return limited
}

// TestInsightBreakdownLimit: checkBreakdownLimit on SQLite, then the
// Service's settings: a breakdown_limit above MaxBreakdownLimit (or below
// 1) is a 400 naming breakdown_limit and the maximum, at create and at
// update; DefaultBreakdownLimit replaces 25; New refuses a default above
// the maximum.
func TestInsightBreakdownLimit(t *testing.T) {
	db, err := sql.Open("sqlite", ":memory:")
	require.NoError(t, err)
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	x := sqlexec.New(db, engine.SQLite)
	loadPages(t, x)
	newSvc := func(cfg endpoint.Config) *endpoint.Service {
		t.Helper()
		cfg.Endpoints, cfg.Variables, cfg.Executor = memstore.New(), variable.NewMemoryStore(), x
		svc, err := endpoint.New(cfg)
		require.NoError(t, err)
		return svc
	}
	checkBreakdownLimit(t, newSvc(endpoint.Config{}))

	ctx := context.Background()
	svc := newSvc(endpoint.Config{})
	for _, limit := range []string{"1001", "0", "-1", "2.5"} {
		_, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "too_many", Query: pagesQuery(t, `, "breakdown_limit": `+limit)})
		wantLimit(t, err, endpoint.LimitMaxBreakdownLimit, endpoint.DefaultMaxBreakdownLimit)
		e := asError(t, err)
		if e.Status != 400 || e.Attr != "query.breakdownFilter.breakdown_limit" ||
			!strings.Contains(e.Detail, "breakdown_limit") || !strings.Contains(e.Detail, "1000") {
			t.Fatalf("breakdown_limit %s: %d %s %q", limit, e.Status, e.Attr, e.Detail)
		}
	}
	if _, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "most", Query: pagesQuery(t, `, "breakdown_limit": 1000`)}); err != nil {
		t.Fatalf("the maximum itself: %v", err)
	}
	q := pagesQuery(t, `, "breakdown_limit": 5000`)
	_, err = svc.Update(ctx, "1", "most", endpoint.UpdateRequest{Query: q})
	wantLimit(t, err, endpoint.LimitMaxBreakdownLimit, endpoint.DefaultMaxBreakdownLimit)
	wantError(t, err, 400, endpoint.CodeInvalidInput,
		"Invalid insight query: breakdownFilter.breakdown_limit: 5000 is more than the maximum; breakdown_limit may be 1 to 1000 (max_breakdown_limit).",
		"query.breakdownFilter.breakdown_limit")

	small := newSvc(endpoint.Config{DefaultBreakdownLimit: 3, MaxBreakdownLimit: 10})
	_, err = small.Create(ctx, "1", endpoint.CreateRequest{Name: "eleven", Query: pagesQuery(t, `, "breakdown_limit": 11`)})
	wantLimit(t, err, endpoint.LimitMaxBreakdownLimit, 10)
	if _, err := small.Create(ctx, "1", endpoint.CreateRequest{Name: "pages", Query: pagesQuery(t, ``)}); err != nil {
		t.Fatal(err)
	}
	got, _ := trendsOf(t, small, "pages", nil)
	if len(got) != 2*(3+1) || got[3].Label != "$pageview - "+insight.OtherLabel {
		t.Fatalf("a default of 3: %d series, the fourth %q", len(got), got[min(3, len(got)-1)].Label)
	}

	_, err = endpoint.New(endpoint.Config{Endpoints: memstore.New(), Variables: variable.NewMemoryStore(), Executor: x, MaxBreakdownLimit: 10})
	require.ErrorContains(t, err, "DefaultBreakdownLimit 25 exceeds MaxBreakdownLimit 10", "a default above the maximum")
	_, err = endpoint.New(endpoint.Config{Endpoints: memstore.New(), Variables: variable.NewMemoryStore(), Executor: x, DefaultBreakdownLimit: -1})
	require.Error(t, err, "a negative default breakdown limit was accepted")
}

// TestInsightBreakdownLimitOnEngines: checkBreakdownLimit on PostgreSQL and
// MariaDB (when their variables are set: scripts/engines env), each
// answering with the same series as SQLite.
func TestInsightBreakdownLimitOnEngines(t *testing.T) {
	reference := func() []insight.TrendsSeries {
		db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "ref.db"))
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		x := sqlexec.New(db, engine.SQLite)
		loadPages(t, x)
		svc, err := endpoint.New(endpoint.Config{Endpoints: memstore.New(), Variables: variable.NewMemoryStore(), Executor: x})
		require.NoError(t, err)
		if _, err := svc.Create(context.Background(), "1", endpoint.CreateRequest{Name: "pages", Query: pagesQuery(t, ``)}); err != nil {
			t.Fatal(err)
		}
		s, _ := trendsOf(t, svc, "pages", nil)
		return s
	}
	for _, e := range []struct {
		name string
		env  string
		eng  engine.Engine
		open func(testing.TB) *sql.DB
	}{
		{"postgres", testdb.PostgresEnv, engine.PostgreSQL, testdb.Postgres},
		{"mysql", testdb.MySQLEnv, engine.MySQL, testdb.MySQL},
	} {
		t.Run(e.name, func(t *testing.T) {
			testdb.Require(t, e.env)
			x := sqlexec.New(e.open(t), e.eng)
			t.Cleanup(func() { x.Close() })
			loadPages(t, x)
			svc, err := endpoint.New(endpoint.Config{Endpoints: memstore.New(), Variables: variable.NewMemoryStore(), Executor: x})
			require.NoError(t, err)
			got := checkBreakdownLimit(t, svc)
			requireSameSeries(t, e.name+" as SQLite", reference(), got)
		})
	}
}
