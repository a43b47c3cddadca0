//go:build chdb

package chdb

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/endpointtest"
	"github.com/endpointkit/endpointkit/endpoint/executortest"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/insight"
	"github.com/endpointkit/endpointkit/internal/exportbench"
	"github.com/endpointkit/endpointkit/internal/heldexec"
	"github.com/endpointkit/endpointkit/internal/jsonrule"
	"github.com/endpointkit/endpointkit/internal/stmt"
	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	shared     *Executor
	sharedErr  error
	sharedOnce sync.Once
)

// executor returns the process's one chDB (in memory), kept open: chDB runs
// one engine per process and should not be restarted.
func executor(t testing.TB) *Executor {
	t.Helper()
	sharedOnce.Do(func() { shared, sharedErr = Open("") })
	require.NoError(t, sharedErr)
	return shared
}

// execAll runs each of stmts on x, alone and outside a transaction; a
// failure fails t, naming the statement.
func execAll(t testing.TB, ctx context.Context, x *Executor, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		require.NoError(t, x.Exec(ctx, []driver.Statement{stmt.New(q, nil)}, driver.Write{Tx: false}), "%v", q)
	}
}

func TestConformance(t *testing.T) {
	executortest.Run(t, func(t *testing.T) driver.Executor { return executor(t) })
}

// FuzzParamRoundTrip: every string bound as a parameter reads back as
// itself, whatever bytes it holds.
func FuzzParamRoundTrip(f *testing.F) {
	for _, s := range []string{"", "plain", `a\b`, "it's", "tab\tnl\nr\r", "nul\x00byte", `\'`, "{p1:String}", "é ’ 🙂", "\\N", "\b\f\v\a"} {
		f.Add(s)
	}
	x := executor(f)
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			t.Skip("the executor binds text")
		}
		res, err := x.Query(context.Background(), stmt.New("SELECT {p1:String} AS v, length({p1:String}) AS n", []any{s}), driver.Bounds{})
		require.NoError(t, err, "%q", s)
		require.Equal(t, s, res.Rows[0][0])
		got, want := res.Rows[0][1], int64(len(s))
		require.Equal(t, want, got, "%q: length", s)
	})
}

// TestReadStatistics: a query reports what the engine read, as a run's
// statistics show it.
func TestReadStatistics(t *testing.T) {
	res, err := executor(t).Query(context.Background(), stmt.New("SELECT count() AS n FROM numbers(12345)", nil), driver.Bounds{})
	require.NoError(t, err)
	require.NotNil(t, res.RowsRead, "res.RowsRead is nil")
	require.NotNil(t, res.BytesRead, "res.BytesRead is nil")
	got, want := *res.RowsRead, int64(12345)
	require.Equal(t, want, got, "*res.RowsRead")
	if got, want := *res.BytesRead, int64(12345*8); got != want {
		t.Fatalf("*res.BytesRead = %d, want %d", got, want)
	}
}

// TestRunStatistics: a run on ClickHouse answers rows_read and bytes_read
// as the engine counted them, where SQLite answers null; a cached answer
// keeps them.
func TestRunStatistics(t *testing.T) {
	x := executor(t)
	ctx := context.Background()
	svc, err := endpoint.New(endpoint.Config{Endpoints: memstore.New(), Variables: variable.NewMemoryStore(), Executor: x,
		ResultCache: memstore.NewResultCache(1 << 20)})
	require.NoError(t, err)
	_, err = svc.Create(ctx, "1", endpoint.CreateRequest{Name: "numbers", Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT count() AS n FROM numbers(5000)"}})
	require.NoError(t, err)
	for _, cached := range []bool{false, true} {
		res, err := svc.Run(ctx, "1", "numbers", endpoint.RunRequest{})
		require.NoError(t, err)
		require.Equal(t, cached, res.IsCached)
		require.NotNil(t, res.Statistics.RowsRead, "res.Statistics.RowsRead is nil")
		got, want := *res.Statistics.RowsRead, int64(5000)
		require.Equal(t, want, got, "*res.Statistics.RowsRead")
		if got, want := *res.Statistics.BytesRead, int64(5000*8); got != want {
			t.Fatalf("*res.Statistics.BytesRead = %d, want %d", got, want)
		}
	}
}

// TestMain closes the process's chDB once the tests are done: left open,
// a process built with -race hangs on exit.
func TestMain(m *testing.M) {
	code := m.Run()
	if shared != nil {
		shared.Close()
	}
	os.Exit(code)
}

// TestJSONRule checks the library's one JSON rule on ClickHouse, with the
// rows of the engine package's TestJSONRule (which runs on the
// database/sql engines): the text of a property is empty when it is
// missing, JSON null or "", the value of a string, and the JSON text of a
// number or of true and false; its number is the value of a JSON number
// and NULL for anything else, a number stored as text included.
func TestJSONRule(t *testing.T) {
	x := executor(t)
	ctx := context.Background()
	rows := jsonrule.Cases
	e := engine.ClickHouse
	execAll(t, ctx, x, "DROP TABLE IF EXISTS json_rule", "CREATE TABLE json_rule (id Int64, p Nullable(String)) ENGINE = MergeTree ORDER BY id")
	for i, r := range rows {
		b := placeholder.NewBuilder(e)
		jsonrule.WriteInsert(b, "json_rule", i, r)
		require.NoError(t, x.Exec(ctx, []driver.Statement{stmt.New(b.SQL(), b.Args())}, driver.Write{Tx: false}))
	}
	b := placeholder.NewBuilder(e)
	b.WriteString("SELECT ")
	e.JSONText(b, "p", "k")
	b.WriteString(" AS text, ")
	e.JSONNumber(b, "p", "k")
	b.WriteString(" AS num FROM json_rule ORDER BY id")
	res, err := x.Query(ctx, stmt.New(b.SQL(), b.Args()), driver.Bounds{})
	require.NoError(t, err, "%v", b.SQL())
	require.Len(t, res.Rows, len(rows))
	for i, r := range rows {
		got, want := res.Rows[i][0], r.Text
		assert.Equal(t, want, got, "text of %v: res.Rows[i][0]", r.JSON)
		if got, want := res.Rows[i][1], r.Num; !reflect.DeepEqual(got, want) {
			t.Errorf("number of %v: res.Rows[i][1] = %+v, want %+v", r.JSON, got, want)
		}
	}
	got, want := res.Types, ([]string{"String", "Nullable(Float64)"})
	assert.Equal(t, want, got, "the text is never NULL: res.Types")
}

// TestTimesInUTC: the session is UTC whatever the process's zone (chDB's
// default) and whatever a session set before (a query's guard sends
// session_timezone): a DateTime without a zone of its own compares with
// text as UTC, and every date-time answers as a time.Time in UTC, a Date
// as its day.
func TestTimesInUTC(t *testing.T) {
	x := executor(t)
	ctx := context.Background()
	execAll(t, ctx, x,
		"DROP TABLE IF EXISTS times",
		"CREATE TABLE times (plain DateTime, utc DateTime('UTC'), la DateTime64(3, 'America/Los_Angeles'), day Date) ENGINE = MergeTree ORDER BY plain",
		"INSERT INTO times VALUES ('2025-05-01 00:00:00', '2025-05-01 00:00:00', '2025-05-01 00:00:00.250', '2025-05-01')",
	)
	execAll(t, ctx, x, "SET session_timezone = 'America/Los_Angeles'")
	t.Cleanup(func() {
		require.NoError(t, x.Exec(context.Background(), []driver.Statement{stmt.New("SET session_timezone = 'UTC'", nil)}, driver.Write{Tx: false}))
	})
	b := placeholder.NewBuilder(engine.ClickHouse)
	b.WriteString("SELECT plain, utc, la, day, toUnixTimestamp(plain) AS unix FROM times WHERE plain = ")
	b.Bind(time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC))
	res, err := x.Query(ctx, stmt.New(b.SQL(), b.Args()), driver.Bounds{})
	require.NoError(t, err)
	got := len(res.Rows)
	require.Equal(t, 1, got, "the bound UTC text matches the stored instant: len(res.Rows) = %d, want %d: %v", got, 1, res.Rows)
	may := time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC)
	if got, want := res.Rows[0], ([]any{may, may, time.Date(2025, 5, 1, 7, 0, 0, 250e6, time.UTC), may, may.Unix()}); !reflect.DeepEqual(got, want) {
		t.Errorf("res.Rows[0] = %+v, want %+v", got, want)
	}
	for _, v := range res.Rows[0][:4] {
		got, want := v.(time.Time).Location(), time.UTC
		assert.Equal(t, want, got, "v.(time.Time).Location()")
	}
}

// TestExecWithDeadline: a statement run with a deadline gets it as
// max_execution_time, whatever its kind (an INSERT ... VALUES cannot end
// with SETTINGS), and the session's limit is reset after it.
func TestExecWithDeadline(t *testing.T) {
	x := executor(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	execAll(t, ctx, x,
		"DROP TABLE IF EXISTS deadline",
		"CREATE TABLE deadline (n Int64) ENGINE = MergeTree ORDER BY n",
		"INSERT INTO deadline VALUES (1), (2)",
	)
	short, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	err := x.Exec(short, []driver.Statement{stmt.New("INSERT INTO deadline SELECT number FROM numbers(50) WHERE sleepEachRow(0.05) = 0 SETTINGS max_block_size = 10", nil)}, driver.Write{Tx: false})
	require.ErrorIs(t, err, context.DeadlineExceeded, "the engine stops the statement at its limit")
	a, b := time.Since(start), 2*time.Second
	assert.True(t, (a < b), "time.Since(start) = %v, want < %v", a, b)

	res, err := x.Query(context.Background(), stmt.New("SELECT count() AS n, getSetting('max_execution_time') AS limit FROM deadline", nil), driver.Bounds{})
	require.NoError(t, err)
	if got, want := res.Rows[0][0], any(int64(2)); got != want {
		t.Errorf("count() = %#v, want %#v", got, want)
	}
	if got, want := res.Rows[0][1], any(0.0); got != want {
		t.Errorf("reset after the statement: max_execution_time = %#v, want %#v", got, want)
	}
}

// TestClusterDDLParses runs every statement the engine of a cluster
// writes (expanded as an executor runs them) on chDB, which has no
// cluster: each must fail for the cluster, a table or distributed DDL
// being missing, never as a syntax error (Code: 62), so the text is
// ClickHouse's.
func TestClusterDDLParses(t *testing.T) {
	x := executor(t)
	e, err := engine.ClickHouseCluster("{cluster}")
	require.NoError(t, err)
	ex := e.(engine.Expander)
	var stmts []string
	stmts = append(stmts, ex.Expand(e.CreateTableAs("c_next", "SELECT 'a' AS k, count() AS n FROM numbers({p1:Int64}) GROUP BY k"))...)
	stmts = append(stmts, ex.Expand(e.CreateTable("c_next", []engine.Column{{Name: "k", Kind: engine.Text}, {Name: "value", Kind: engine.Float}}))...)
	swap, _ := e.Swap("c_next", "c")
	for _, s := range swap {
		stmts = append(stmts, ex.Expand(s)...)
	}
	stmts = append(stmts, ex.Expand(e.DropTable("c"))...)
	for _, s := range stmts {
		err := x.Exec(context.Background(), []driver.Statement{stmt.New(s, []any{"10"})}, driver.Write{Tx: false})
		require.Error(t, err, "%v: got no error, want one", s)
		for _, sub := range []string{"Code: 62.", "SYNTAX_ERROR"} {
			assert.NotContains(t, err.Error(), sub, "%v: error %q contains", s, err)
		}
	}
	res, err := x.Query(context.Background(), stmt.New(e.Tables(), nil), driver.Bounds{})
	require.NoError(t, err, "the cluster's list of tables runs on one server")
	assert.Equal(t, []string{"name"}, res.Columns)
}

const events = 3000

// loadDemo creates the events table in chDB and loads the demo events of
// project 1, as demo.Load does on SQLite.
func loadDemo(t testing.TB, x *Executor) {
	t.Helper()
	ctx := context.Background()
	for _, stmt := range append([]string{"DROP TABLE IF EXISTS events"}, demo.SchemaFor(engine.ClickHouse)...) {
		require.NoError(t, x.Load(ctx, stmt, nil), "%v", stmt)
	}
	require.NoError(t, demo.InsertWith(ctx, x, engine.ClickHouse, "1", events, endpointtest.DemoSeed))
}

// bothServices returns a Service on chDB and one on SQLite (with its
// test environment), both loaded with the same demo events.
func bothServices(t *testing.T) (*endpoint.Service, *endpointtest.Env) {
	t.Helper()
	x := executor(t)
	loadDemo(t, x)
	ch, err := endpoint.New(endpoint.Config{Endpoints: memstore.New(), Variables: variable.NewMemoryStore(), Executor: x})
	require.NoError(t, err)
	return ch, endpointtest.New(t, endpointtest.WithDemoEvents(events))
}

// TestServiceOnClickHouse runs the same endpoints on chDB and on SQLite,
// loaded with the same demo events: inline runs answer alike, and a
// materialized run on ClickHouse answers as its inline run.
func TestServiceOnClickHouse(t *testing.T) {
	ch, lite := bothServices(t)
	ctx := context.Background()

	cases := []struct {
		name, sql   string
		materialize bool
		runs        []map[string]any
	}{
		{"by_event", "SELECT event, count(*) AS n FROM events WHERE event = {variables.event} GROUP BY event", true,
			[]map[string]any{{"event": "purchase"}, {"event": "$pageview"}, {"event": "nothing"}}},
		{"daily", "SELECT substr(timestamp, 1, 10) AS day, count(*) AS n FROM events WHERE event = {variables.event} AND timestamp >= {variables.from} AND timestamp < {variables.to} GROUP BY day ORDER BY day", false,
			[]map[string]any{{"event": "purchase", "from": "2025-05-01", "to": "2025-05-08"}, {"event": "signed_up", "from": "2025-04-01", "to": "2025-04-03"}}},
		// An average of nothing but NULLs over a range: ClickHouse
		// cannot cast the NULL sum to a Float64 that is not Nullable, and
		// the stored read failed into an inline run.
		{"avg_of_nulls", "SELECT event, avg(CASE WHEN event = 'nothing' THEN 1 END) AS mean, count(*) AS n FROM events WHERE timestamp >= {variables.from} GROUP BY event ORDER BY event", true,
			[]map[string]any{{"from": "2025-05-01"}, {"from": "2025-05-01T12:30:00Z"}}},
		{"users", "SELECT distinct_id FROM events WHERE distinct_id = {variables.user} ORDER BY uuid", false,
			[]map[string]any{{"user": "user-00007"}, {"user": "it's \\ nobody"}}},
	}
	types := map[string]variable.Type{"event": variable.String, "user": variable.String, "from": variable.Date, "to": variable.Date}
	for _, svc := range []*endpoint.Service{ch, lite.Service} {
		ids := map[string]string{}
		for name, typ := range types {
			v, err := svc.CreateVariable(ctx, "1", variable.Variable{Name: name, CodeName: name, Type: typ})
			require.NoError(t, err)
			ids[name] = v.ID
		}
		for _, c := range cases {
			refs := map[string]driver.VariableRef{}
			for name, id := range ids {
				if strings.Contains(c.sql, "{variables."+name+"}") {
					refs[id] = driver.VariableRef{VariableID: id, CodeName: name}
				}
			}
			q := endpoint.Query{Kind: driver.KindSQL, SQL: c.sql, Variables: refs}
			_, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: c.name, Query: &q, IsMaterialized: c.materialize})
			require.NoError(t, err, "%v", c.name)
		}
	}
	for _, c := range cases {
		for _, vars := range c.runs {
			want, err := lite.Service.Run(ctx, "1", c.name, endpoint.RunRequest{Variables: vars})
			require.NoError(t, err)
			got, err := ch.Run(ctx, "1", c.name, endpoint.RunRequest{Variables: vars})
			require.NoError(t, err, "%s %v", c.name, vars)
			if got, want := norm(got.Results), norm(want.Results); got != want {
				t.Errorf("%s %v: norm(got.Results) = %q, want %q", c.name, vars, got, want)
			}
		}
		if !c.materialize {
			continue
		}
		require.NoError(t, ch.Materialize(ctx, "1", c.name))
		for _, vars := range c.runs {
			inline, err := lite.Service.Run(ctx, "1", c.name, endpoint.RunRequest{Variables: vars})
			require.NoError(t, err)
			stored, err := ch.Run(ctx, "1", c.name, endpoint.RunRequest{Variables: vars})
			require.NoError(t, err)
			require.True(t, stored.EndpointMaterialized, "%v: stored.EndpointMaterialized is false", c.name)
			got, want := norm(stored.Results), norm(inline.Results)
			assert.Equal(t, want, got, "materialized %s %v: norm(stored.Results)", c.name, vars)
		}
	}
}

// norm prints rows so that engines' number types compare alike.
func norm(results any) string { return fmt.Sprint(results) }

// TestInsightsOnClickHouse: Trends and Retention compile to ClickHouse SQL
// that answers as SQLite does on the same events, inline and materialized.
func TestInsightsOnClickHouse(t *testing.T) {
	ch, lite := bothServices(t)
	ctx := context.Background()
	queries := map[string]string{
		"trends_daily_by_browser": `{"kind": "TrendsQuery", "series": [{"kind": "EventsNode", "event": "$pageview", "math": "total"},
			{"kind": "EventsNode", "event": "purchase", "math": "sum", "math_property": "amount"}], "interval": "week",
			"dateRange": {"date_from": "2025-04-01", "date_to": "2025-05-31"}, "breakdownFilter": {"breakdown": "$browser", "breakdown_type": "event"}}`,
		"trends_dau_hourly": `{"kind": "TrendsQuery", "series": [{"kind": "EventsNode", "math": "dau"}], "interval": "hour",
			"dateRange": {"date_from": "2025-05-10", "date_to": "2025-05-11"}}`,
		"retention": `{"kind": "RetentionQuery", "retentionFilter": {"targetEntity": {"id": "signed_up", "type": "events"},
			"returningEntity": {"id": "purchase", "type": "events"}, "period": "Week", "totalIntervals": 4},
			"dateRange": {"date_from": "2025-04-01", "date_to": "2025-05-31"}}`,
	}
	for name, q := range queries {
		kind := driver.KindTrends
		if strings.Contains(q, "RetentionQuery") {
			kind = driver.KindRetention
		}
		query := endpoint.Query{Kind: kind, Insight: []byte(q)}
		for _, svc := range []*endpoint.Service{ch, lite.Service} {
			_, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: name, Query: &query})
			require.NoError(t, err, "%v", name)
		}
		want, err := lite.Service.Run(ctx, "1", name, endpoint.RunRequest{})
		require.NoError(t, err, "%v", name)
		got, err := ch.Run(ctx, "1", name, endpoint.RunRequest{})
		require.NoError(t, err, "%v", name)
		wantJSON, _ := json.Marshal(want.Results)
		gotJSON, _ := json.Marshal(got.Results)
		assert.JSONEq(t, string(wantJSON), string(gotJSON), "%s: chDB results %s, want SQLite's %s", name, gotJSON, wantJSON)
	}
}

// TestQueryCheckedAtSave: on ClickHouse too, a query that reads an unknown
// column or table, or does not parse, is refused at Create, Update and the
// editor's query route with a 400 query_error saying what and where, the
// nearest names for a name; nothing is saved, and the last version of an
// endpoint whose update was refused still runs. Text the SQL tree cannot
// read is refused before ClickHouse sees it, where the tree stopped (the
// second comma of "event,,"). Neither the statement the
// Service wrapped around the query nor ClickHouse's SETTINGS show.
func TestQueryCheckedAtSave(t *testing.T) {
	x := executor(t)
	loadDemo(t, x)
	policy, err := access.NewStatic(access.Rules{Tables: []access.Table{{Name: "events", TenantColumn: "project_id"}}, AnyTable: true}, nil)
	require.NoError(t, err)
	svc, err := endpoint.New(endpoint.Config{Endpoints: memstore.New(), Variables: variable.NewMemoryStore(), Executor: x, Access: policy})
	require.NoError(t, err)
	endpointtest.RefusedAtSave(t, svc, "1", []endpointtest.BadQuery{
		{Name: "unknown column", SQL: "SELECT evnt FROM events", Want: []string{"evnt", "(line 1, column 8)", "did you mean event?"}, Line: 1, Column: 8},
		{Name: "unknown table", SQL: "SELECT event FROM evnts", Want: []string{"evnts", "(line 1, column 19)", "There is no table evnts; did you mean events?"}, Line: 1, Column: 19},
		{Name: "syntax error at the end", SQL: "SELECT event FROM events WHERE", Want: []string{"yntax error", "line 1, column 31", "found the end of the query"}, Line: 1, Column: 31},
		{Name: "syntax error inside", SQL: "SELECT event,, 1 FROM events", Want: []string{"yntax error", "line 1, column 14", `found ","`}, Line: 1, Column: 14},
	}, "endpoint_q", "SETTINGS", "max_execution_time", "project_id", "{p1:")
}

// BenchmarkSave: Create of a SQL endpoint on ClickHouse (chDB), with the
// check (ClickHouse analyzes the scoped query with LIMIT 0) and without it
// (an executor that answers at once), as endpoint's BenchmarkSave on the
// other engines.
//
//	eval "$(scripts/engines env)"; go test -tags chdb ./endpoint/chdb -run '^$' -bench BenchmarkSave -benchtime 2s
func BenchmarkSave(b *testing.B) {
	x := executor(b)
	loadDemo(b, x)
	policy, err := access.NewStatic(access.Rules{Tables: []access.Table{{Name: "events", TenantColumn: "project_id"}}}, nil)
	require.NoError(b, err)
	q := &endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT event, count(*) AS n, count(DISTINCT distinct_id) AS users FROM events " +
		"WHERE timestamp >= '2025-01-01' AND event <> 'x' GROUP BY event ORDER BY n DESC"}
	// answersAtOnce answers every query with no column at once, without
	// the engine: a save over it does all a save does but the engine's work
	// of the check.
	answersAtOnce := func(x driver.Executor) driver.Executor {
		return heldexec.NewFake(x, heldexec.Answer(&driver.Result{}), heldexec.Unrecorded())
	}
	for _, mode := range []struct {
		name string
		x    driver.Executor
	}{{"check", x}, {"nocheck", answersAtOnce(x)}} {
		b.Run(mode.name, func(b *testing.B) {
			svc, err := endpoint.New(endpoint.Config{Endpoints: memstore.New(), Variables: variable.NewMemoryStore(), Executor: mode.x, Access: policy})
			require.NoError(b, err)
			ctx := context.Background()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				_, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "e" + strconv.Itoa(i), Query: q})
				require.NoError(b, err)
			}
		})
	}
}

// TestInsightBreakdownLimitOnClickHouse: a trends insight broken down by
// browser, country and plan (about 200 combinations of the demo events)
// answers on chDB as on SQLite: 25 combinations per query series and an
// Other series by default, none with breakdown_hide_other_aggregation,
// every one under a large limit; materialized on chDB, it answers as its
// inline run, without variables and with the variables of a combination
// outside the 25.
func TestInsightBreakdownLimitOnClickHouse(t *testing.T) {
	ch, lite := bothServices(t)
	ctx := context.Background()
	query := func(filter string) *endpoint.Query {
		return &endpoint.Query{Kind: endpoint.KindTrends, Insight: []byte(`{"kind": "TrendsQuery",
			"series": [{"kind": "EventsNode", "event": "$pageview"}, {"kind": "EventsNode", "event": "purchase", "math": "dau"}],
			"interval": "week", "dateRange": {"date_from": "2025-04-01", "date_to": "2025-05-31"},
			"breakdownFilter": {"breakdowns": [{"property": "$browser"}, {"property": "country"}, {"property": "plan"}]` + filter + `}}`)}
	}
	variants := map[string]string{
		"pages":  ``,
		"hidden": `, "breakdown_hide_other_aggregation": true`,
		"every":  `, "breakdown_limit": 1000`,
	}
	series := func(svc *endpoint.Service, name string, vars map[string]any) ([]insight.TrendsSeries, bool) {
		t.Helper()
		res, err := svc.Run(ctx, "1", name, endpoint.RunRequest{Variables: vars})
		require.NoError(t, err, "%s %v", name, vars)
		return res.Results.(*insight.Result).Series, res.EndpointMaterialized
	}
	asJSON := func(v any) string {
		out, err := json.Marshal(v)
		require.NoError(t, err)
		return string(out)
	}
	for name, filter := range variants {
		for _, svc := range []*endpoint.Service{ch, lite.Service} {
			_, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: name, Query: query(filter)})
			require.NoError(t, err, "%v", name)
		}
		want, _ := series(lite.Service, name, nil)
		got, _ := series(ch, name, nil)
		g, w := asJSON(got), asJSON(want)
		require.JSONEq(t, w, g, "%s: chDB series %s, want SQLite's %s", name, g, w)
	}
	limited, _ := series(ch, "pages", nil)
	require.Len(t, limited, 2*(insight.DefaultBreakdownLimit+1))
	require.Equal(t, []string{insight.OtherBreakdownValue, insight.OtherBreakdownValue, insight.OtherBreakdownValue}, limited[insight.DefaultBreakdownLimit].BreakdownValue)
	hidden, _ := series(ch, "hidden", nil)
	require.Len(t, hidden, 2*insight.DefaultBreakdownLimit)
	every, _ := series(ch, "every", nil)
	a, b := len(every), 4*insight.DefaultBreakdownLimit
	require.True(t, (a > b), "len(every) = %v, want > %v", a, b)

	_, err := ch.Create(ctx, "1", endpoint.CreateRequest{Name: "mat", Query: query(``), IsMaterialized: true,
		OptionalBreakdowns: []string{"$browser", "country", "plan"}})
	require.NoError(t, err)
	require.NoError(t, ch.Materialize(ctx, "1", "mat"))
	runs := []map[string]any{nil, {"$browser": "Chrome"}}
	var outside any
	for _, s := range every {
		kept := false
		for _, l := range limited {
			kept = kept || fmt.Sprint(l.BreakdownValue) == fmt.Sprint(s.BreakdownValue)
		}
		if !kept {
			v := s.BreakdownValue.([]string)
			runs = append(runs, map[string]any{"$browser": v[0], "country": v[1], "plan": v[2]})
			outside = s.BreakdownValue
			break
		}
	}
	got := len(runs)
	require.Equal(t, 3, got, "a combination outside the 25: len(runs) = %d, want %d: %v", got, 3, runs)
	for _, vars := range runs {
		stored, materialized := series(ch, "mat", vars)
		require.True(t, materialized, "%v: materialized is false", vars)
		inline, _ := series(ch, "pages", vars)
		g, w := asJSON(stored), asJSON(inline)
		require.JSONEq(t, w, g, "materialized %v: series %s, want the inline run's %s", vars, g, w)
		if len(vars) == 3 {
			v := stored
			require.NotEmpty(t, v, "stored is empty")
			for _, s := range stored {
				got, want := s.BreakdownValue, outside
				require.Equal(t, want, got, "only the combination's own series: s.BreakdownValue")
			}
		}
	}
}

// TestChDBAnswersAreTheirOwn: the answers of one flight on chDB (its
// strings and numbers boxed from blocks shared by the rows of one answer)
// share nothing: a host writing over one answer's rows, in its own
// goroutine while the others read theirs, changes no other answer, nor
// what the result cache answers next.
func TestChDBAnswersAreTheirOwn(t *testing.T) {
	x := executor(t)
	loadDemo(t, x)
	held := heldexec.New(x, 8)
	svc, err := endpoint.New(endpoint.Config{Endpoints: memstore.New(), Variables: variable.NewMemoryStore(), Executor: held,
		ResultCache: memstore.NewResultCache(1 << 20)})
	require.NoError(t, err)
	ctx := context.Background()
	q := &endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT distinct_id, event, timestamp, toInt64(length(distinct_id)) * 1000 AS big FROM events ORDER BY uuid LIMIT 40"}
	if _, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "users", Query: q}); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	const n = 4
	var answers []*endpoint.RunResult
	for attempt := 0; ; attempt++ {
		answers = flight(t, svc, held, "users", endpoint.RunRequest{Refresh: endpoint.RefreshForce}, n)
		joined := 0
		for _, a := range answers {
			if a.IsCached {
				joined++
			}
		}
		if joined == n-1 {
			break
		}
		require.NotEqual(t, 5, attempt, "in 6 attempts, %d of %d runs joined the flight", joined, n-1)
	}
	want := make([]string, n)
	for i, a := range answers {
		b, err := json.Marshal(a.Results)
		require.NoError(t, err)
		want[i] = string(b)
		if i > 0 && want[i] != want[0] {
			t.Fatalf("answer %d: %s, answer 0: %s", i, want[i], want[0])
		}
	}
	var wg sync.WaitGroup
	for i, a := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 1 {
				for range 3 {
					if b, err := json.Marshal(a.Results); err != nil || string(b) != want[0] {
						t.Errorf("answer %d read %s while others were written over (%v), want %s", i, b, err, want[0])
						return
					}
				}
				return
			}
			switch rows := a.Results.(type) {
			case [][]any:
				for _, row := range rows {
					for j := range row {
						row[j] = "vandal"
					}
				}
			case json.RawMessage:
				for j := range rows {
					rows[j] = '!'
				}
			}
		}()
	}
	wg.Wait()
	res, err := svc.Run(ctx, "1", "users", endpoint.RunRequest{})
	require.NoError(t, err)
	b, _ := json.Marshal(res.Results)
	require.True(t, res.IsCached, "the cache answers %s (cached %v), want %s", b, res.IsCached, want[0])
	require.Equal(t, want[0], string(b), "the cache answers %s (cached %v), want %s", b, res.IsCached, want[0])
}

// flight runs req n times at once, the first run holding its query for
// the others to join its flight.
func flight(t *testing.T, svc *endpoint.Service, held *heldexec.Executor, name string, req endpoint.RunRequest, n int) []*endpoint.RunResult {
	t.Helper()
	held.Hold()
	out := make([]*endpoint.RunResult, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	run := func(i int) {
		defer wg.Done()
		out[i], errs[i] = svc.Run(context.Background(), "1", name, req)
	}
	wg.Add(n)
	go run(0)
	<-held.Started
	for i := 1; i < n; i++ {
		go run(i)
	}
	time.Sleep(100 * time.Millisecond) // for the others to join
	held.Release()
	// A run that came late computed alone, past the gate.
	for drained := false; !drained; {
		select {
		case <-held.Started:
		default:
			drained = true
		}
	}
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "run %d", i)
	}
	return out
}

// TestScopedReadsUseTheSortKey: the demo table is sorted by
// (project_id, toDate(timestamp), event), and a read the Service scopes to
// a project narrows that key by the tenant (EXPLAIN indexes = 1 shows
// project_id among the primary key's keys used), as the derived table of
// the scope is one ClickHouse sees through.
func TestScopedReadsUseTheSortKey(t *testing.T) {
	x := executor(t)
	loadDemo(t, x)
	ctx := context.Background()
	ddl, err := x.Read(ctx, "SELECT sorting_key FROM system.tables WHERE database = currentDatabase() AND name = 'events'", nil)
	require.NoError(t, err)
	assert.Equal(t, "project_id, toDate(timestamp), event", ddl.Rows[0][0])

	policy, err := access.NewStatic(access.Rules{Tables: []access.Table{{Name: "events", TenantColumn: "project_id"}}}, nil)
	require.NoError(t, err)
	rec := heldexec.NewFake(x) // keeps the statements the Service ran
	svc, err := endpoint.New(endpoint.Config{Endpoints: memstore.New(), Variables: variable.NewMemoryStore(), Executor: rec, Access: policy})
	require.NoError(t, err)
	_, err = svc.Create(ctx, "1", endpoint.CreateRequest{Name: "purchases", Query: &endpoint.Query{Kind: endpoint.KindSQL,
		SQL: "SELECT count() AS n FROM events WHERE event = 'purchase'"}})
	require.NoError(t, err)
	_, err = svc.Run(ctx, "1", "purchases", endpoint.RunRequest{})
	require.NoError(t, err)
	st := rec.Last()
	res, err := x.Read(ctx, "EXPLAIN indexes = 1 "+st.SQL, st.Args)
	require.NoError(t, err, "%v", st.SQL)
	var plan strings.Builder
	for _, r := range res.Rows {
		fmt.Fprintln(&plan, r...)
	}
	p := plan.String()
	i := strings.Index(p, "PrimaryKey")
	a, b := i, 0
	require.True(t, (a >= b), "no primary key in the plan of %s:\n%s: i = %v, want >= %v", st.SQL, p, a, b)
	assert.Contains(t, p[i:], "project_id", "the scope narrows the sort key:\n%s", p)
}

// runBenchEvents is how many demo events BenchmarkChDBRun reads.
const runBenchEvents = 200_000

// runBenchQueries are BenchmarkChDBRun's endpoints: one row by its uuid,
// ten groups (the countries), ten thousand groups (the users); decode is
// how a caller who wrote the query by hand reads its answer, into a slice
// of the capacity given.
var runBenchQueries = []struct {
	name, sql string
	decode    func(out string, capacity int) (int, error)
}{
	{"point", "SELECT uuid, event, timestamp FROM events WHERE uuid = {variables.id}", decodeEvents},
	{"group10", "SELECT JSONExtractString(properties, 'country') AS country, count() AS n FROM events GROUP BY country ORDER BY country", decodeCounts},
	{"group10k", "SELECT distinct_id, count() AS n, max(timestamp) AS last FROM events GROUP BY distinct_id ORDER BY distinct_id", decodeUsers},
}

// The rows of runBenchQueries as a caller who wrote each query by hand
// decodes them: one struct a row, the text cut from the answer, in a slice
// sized for the rows the query answers.
type (
	eventRow struct{ UUID, Event, Timestamp string }
	countRow struct {
		Country string
		N       uint64
	}
	userRow struct {
		DistinctID string
		N          uint64
		Last       string
	}
)

// handReader reads a RowBinaryWithNamesAndTypes answer as a caller of one
// known query does: the header checked against the types it expects, then
// each value by its column's type.
type handReader struct {
	out string
	off int
	err error
}

func (r *handReader) uvarint() uint64 {
	v, n := binary.Uvarint([]byte(r.out[r.off:min(len(r.out), r.off+binary.MaxVarintLen64)]))
	if n <= 0 {
		r.err, r.off = errShort, len(r.out)
		return 0
	}
	r.off += n
	return v
}

func (r *handReader) string() string {
	n := r.uvarint()
	if n > uint64(len(r.out)-r.off) {
		r.err, r.off = errShort, len(r.out)
		return ""
	}
	s := r.out[r.off : r.off+int(n)]
	r.off += int(n)
	return s
}

func (r *handReader) uint64() uint64 {
	if len(r.out)-r.off < 8 {
		r.err, r.off = errShort, len(r.out)
		return 0
	}
	v := binary.LittleEndian.Uint64([]byte(r.out[r.off : r.off+8]))
	r.off += 8
	return v
}

// header reads the columns' names and checks their types.
func (r *handReader) header(types ...string) {
	n := int(r.uvarint())
	for range n {
		r.string()
	}
	for i := range n {
		if typ := r.string(); r.err == nil && (n != len(types) || typ != types[i]) {
			r.err = fmt.Errorf("column %d is %s, want one of %v", i, typ, types)
		}
	}
}

func (r *handReader) more() bool { return r.err == nil && r.off < len(r.out) }

// decodeHand reads out's rows, each with row, after a header of types,
// into a slice of capacity rows.
func decodeHand[T any](out string, capacity int, row func(*handReader) T, types ...string) (int, error) {
	r := &handReader{out: out}
	r.header(types...)
	rows := make([]T, 0, capacity)
	for r.more() {
		rows = append(rows, row(r))
	}
	return len(rows), r.err
}

func decodeEvents(out string, capacity int) (int, error) {
	return decodeHand(out, capacity, func(r *handReader) eventRow { return eventRow{r.string(), r.string(), r.string()} },
		"String", "String", "String")
}

func decodeCounts(out string, capacity int) (int, error) {
	return decodeHand(out, capacity, func(r *handReader) countRow { return countRow{r.string(), r.uint64()} }, "String", "UInt64")
}

func decodeUsers(out string, capacity int) (int, error) {
	return decodeHand(out, capacity, func(r *handReader) userRow { return userRow{r.string(), r.uint64(), r.string()} },
		"String", "UInt64", "String")
}

// BenchmarkChDBRun runs each endpoint of runBenchQueries on 200,000 demo
// events of project 1 in chDB: library, through Service.Run (scoped to the
// project, no result cache, no run log); direct, the same statement (the
// scoped SQL the Service ran, recorded, with its parameters) sent
// straight to chDB through its C API, answering the same format, the
// bytes copied to Go and decoded as a caller who wrote the query by hand
// would (one struct a row, the text cut from the answer, the slice of rows
// allocated once: the leanest reading of it into Go values). .../interleaved runs both in turn and
// reports the ratio of their medians (library/direct), the library's
// cost, which should stay within 1.05, and the ratio to the statement
// sent directly whose answer is not decoded at all (library/undecoded):
//
//	go test -tags chdb -run '^$' -bench BenchmarkChDBRun -benchtime 40x ./endpoint/chdb/
func BenchmarkChDBRun(b *testing.B) {
	x := executor(b)
	ctx := context.Background()
	for _, q := range []string{"CREATE DATABASE IF NOT EXISTS chdbrun", "USE chdbrun"} {
		require.NoError(b, x.Load(ctx, q, nil))
	}
	b.Cleanup(func() { x.Load(context.Background(), "USE default", nil) }) //nolint:errcheck // the next Load says
	res, err := x.Read(ctx, "SELECT count() AS n FROM system.tables WHERE database = 'chdbrun' AND name = 'events'", nil)
	require.NoError(b, err)
	if res.Rows[0][0] != int64(1) {
		for _, s := range demo.SchemaFor(engine.ClickHouse) {
			require.NoError(b, x.Load(ctx, s, nil))
		}
		// Another project's rows, which the scope leaves out.
		require.NoError(b, loadEvents(ctx, x, b.TempDir(), runBenchEvents, runBenchEvents/10))
	}
	policy, err := access.NewStatic(access.Rules{Tables: []access.Table{{Name: "events", TenantColumn: "project_id"}}}, nil)
	require.NoError(b, err)
	rec := heldexec.NewFake(x) // keeps the statements the Service ran
	svc, err := endpoint.New(endpoint.Config{Endpoints: memstore.New(), Variables: variable.NewMemoryStore(), Executor: x, Access: policy})
	require.NoError(b, err)
	recSvc, err := endpoint.New(endpoint.Config{Endpoints: memstore.New(), Variables: variable.NewMemoryStore(), Executor: rec, Access: policy})
	require.NoError(b, err)
	const idVar = "5d1c2a34-0000-4000-8000-00000000000a"
	for _, s := range []*endpoint.Service{svc, recSvc} {
		_, err := s.CreateVariable(ctx, "1", variable.Variable{ID: idVar, Name: "id", Type: variable.String})
		require.NoError(b, err)
	}
	limit := 20_000
	for _, q := range runBenchQueries {
		var refs map[string]endpoint.VariableRef
		req := endpoint.RunRequest{Limit: &limit}
		if strings.Contains(q.sql, "{variables.id}") {
			refs = map[string]endpoint.VariableRef{idVar: {VariableID: idVar, CodeName: "id"}}
			req.Variables = map[string]any{"id": "00000000-0000-4000-8000-000000001234"}
		}
		for _, s := range []*endpoint.Service{svc, recSvc} {
			_, err := s.Create(ctx, "1", endpoint.CreateRequest{Name: q.name, Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: q.sql, Variables: refs}})
			require.NoError(b, err)
		}
		got, err := recSvc.Run(ctx, "1", q.name, req)
		require.NoError(b, err)
		st := rec.Last()
		// Only the count is kept (the closures below hold it): the answer
		// itself, held for the whole benchmark, would be scanned by every
		// collection of both sides.
		answer, _ := got.Results.([][]any)
		rows := len(answer)
		// direct sends the statement and decodes its answer by hand.
		direct := func() (int, error) {
			out, _, err := x.run(ctx, st.SQL, resultFormat, st.Args)
			if err != nil {
				return 0, err
			}
			return q.decode(out, rows)
		}
		n, err := direct()
		require.NoError(b, err)
		require.GreaterOrEqual(b, n, rows, "%s: the library answered rows, the statement sent directly %d", q.name, n)
		require.NotEqual(b, 0, rows, "%s: the library answered rows, the statement sent directly %d", q.name, n)
		b.Run(q.name+"/library", func(b *testing.B) {
			for b.Loop() {
				_, err := svc.Run(ctx, "1", q.name, req)
				require.NoError(b, err)
			}
			b.ReportMetric(float64(rows), "rows")
		})
		b.Run(q.name+"/direct", func(b *testing.B) {
			for b.Loop() {
				_, err := direct()
				require.NoError(b, err)
			}
			b.ReportMetric(float64(n), "rows")
		})
		// Both in turn, each iteration one run of each: the ratio of their
		// medians holds on a machine whose load changes between the two
		// sub-benchmarks above.
		b.Run(q.name+"/interleaved", func(b *testing.B) {
			var lib, dir, raw []time.Duration
			for i := 0; b.Loop(); i++ {
				// The three in turn, each first in one iteration of three.
				for k := range 3 {
					start := time.Now()
					switch (i + k) % 3 {
					case 0:
						_, err := svc.Run(ctx, "1", q.name, req)
						require.NoError(b, err)
						lib = append(lib, time.Since(start))
					case 1:
						_, err := direct()
						require.NoError(b, err)
						dir = append(dir, time.Since(start))
					case 2:
						_, _, err := x.run(ctx, st.SQL, resultFormat, st.Args)
						require.NoError(b, err)
						raw = append(raw, time.Since(start))
					}
				}
			}
			l, d, u := median(lib), median(dir), median(raw)
			b.ReportMetric(float64(l.Microseconds()), "library-us")
			b.ReportMetric(float64(d.Microseconds()), "direct-us")
			b.ReportMetric(float64(l)/float64(d), "library/direct")
			b.ReportMetric(float64(l)/float64(u), "library/undecoded")
		})
	}
}

// loadEvents loads n demo events of project 1 and other of project 2 into
// the session's events table through a TabSeparated file, which chDB
// reads in one INSERT (bound INSERTs of 150 rows each would take minutes).
func loadEvents(ctx context.Context, x *Executor, dir string, n, other int) error {
	path := filepath.Join(dir, "events.tsv")
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	esc := strings.NewReplacer(`\`, `\\`, "\t", `\t`, "\n", `\n`)
	for _, p := range []struct {
		project string
		n       int
		seed    uint64
	}{{"1", n, endpointtest.DemoSeed}, {"2", other, endpointtest.DemoSeed + 1}} {
		err := demo.Generate(p.n, p.seed, func(ev demo.Event) error {
			props, err := json.Marshal(ev.Properties)
			if err != nil {
				return err
			}
			for i, v := range []string{p.project, ev.UUID, ev.Event, ev.DistinctID, ev.Timestamp.Format(demo.TimeLayout), string(props)} {
				if i > 0 {
					w.WriteByte('\t')
				}
				w.WriteString(esc.Replace(v))
			}
			return w.WriteByte('\n')
		})
		if err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return x.Load(ctx, "INSERT INTO events SELECT * FROM file("+string(engine.ClickHouse.AppendString(nil, path))+
		", 'TabSeparated', 'project_id String, uuid String, event String, distinct_id String, timestamp String, properties String')", nil)
}

// median is the middle of times (which it sorts).
func median(times []time.Duration) time.Duration {
	slices.Sort(times)
	return times[len(times)/2]
}

var exportRows = flag.Int("chdb.export-rows", 1_000_000, "rows BenchmarkExportCSV exports from chDB")

// exportSQL is the export's query: an integer, a text (a third of them
// quoted in CSV), a float and a time, in id order.
const exportSQL = "SELECT id, name, amount, at FROM export_bench.rows ORDER BY id"

// loadExport fills export_bench.rows with n rows, once.
func loadExport(tb testing.TB, x *Executor, n int) {
	tb.Helper()
	ctx := context.Background()
	res, err := x.Read(ctx, "SELECT count() FROM system.tables WHERE database = 'export_bench' AND name = 'rows'", nil)
	require.NoError(tb, err)
	if res.Rows[0][0] == int64(1) {
		res, err = x.Read(ctx, "SELECT count() FROM export_bench.rows", nil)
		require.NoError(tb, err)
		if res.Rows[0][0] == int64(n) {
			return
		}
	}
	for _, q := range []string{
		"DROP DATABASE IF EXISTS export_bench",
		"CREATE DATABASE export_bench",
		"CREATE TABLE export_bench.rows (id Int64, name String, amount Float64, at DateTime('UTC')) ENGINE = MergeTree ORDER BY id",
		fmt.Sprintf(`INSERT INTO export_bench.rows SELECT number, if(number %% 3 = 0, concat('user-', toString(number), ', "vip"'), concat('user-', toString(number))),
			number * 1.25, toDateTime('2025-01-01 00:00:00', 'UTC') + number * 60 FROM numbers(%d)`, n),
	} {
		require.NoError(tb, x.Load(ctx, q, nil), "%s", q)
	}
}

// csvSink writes the rows the executor hands over with encoding/csv, each
// value formatted as a host would: what a host writes without the library
// over the engine's own row iterator (QueryRows).
type csvSink struct {
	w   *csv.Writer
	rec []string
}

func (c *csvSink) Columns(names, _ []string) error {
	c.rec = make([]string, len(names))
	return c.w.Write(names)
}

func (c *csvSink) Row(row []any) error {
	exportbench.FormatCSV(c.rec, row)
	return c.w.Write(c.rec)
}

// directCSV is the export without the library: the query through the
// executor's row iterator, encoding/csv.
func directCSV(x *Executor, w io.Writer, n int) error {
	bw := bufio.NewWriterSize(w, 32<<10)
	s := &csvSink{w: csv.NewWriter(bw)}
	if _, err := x.QueryRows(context.Background(), stmt.New(exportSQL+" LIMIT "+strconv.Itoa(n), nil), driver.Bounds{}, s); err != nil {
		return err
	}
	s.w.Flush()
	if err := s.w.Error(); err != nil {
		return err
	}
	return bw.Flush()
}

// exportService serves endpoint "export" (exportSQL) of project 1 on x,
// no result cache, runs of up to n rows, no bound on their bytes.
func exportService(tb testing.TB, x *Executor, n int) http.Handler {
	tb.Helper()
	h, _ := endpointtest.Serve(tb, endpoint.Config{Executor: x, MaxLimit: n, MaxResultBytes: -1, RunTimeout: 10 * time.Minute}, "export", exportSQL, exportKey)
	return h
}

const exportKey = "ek_export_bench_key_0123456789abcdef"

// exportOnce exports n rows through h as CSV.
func exportOnce(tb testing.TB, h http.Handler, n int) {
	body := fmt.Sprintf(`{"limit": %d, "format": "csv"}`, n)
	req, _ := http.NewRequest("POST", "/api/projects/1/endpoints/export/run", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+exportKey)
	req.Header.Set("Content-Type", "application/json")
	w := exportbench.NewDiscard()
	h.ServeHTTP(w, req)
	require.Equal(tb, http.StatusOK, w.Status)
	require.Empty(tb, w.Head.Get(httpapi.HeaderError))
}

// BenchmarkExportCSV: exporting -chdb.export-rows rows (1,000,000) from
// chDB as CSV through the handler (the row limit raised to allow it)
// against the same rows read with the executor's row iterator and written
// with encoding/csv, alternated in each iteration, in one run: the time
// ratio library/direct, and the peak growth of the Go heap in use and of
// the process's resident memory (chDB's included) during the first
// library export after a warm one.
//
//	go test -tags chdb ./endpoint/chdb -run '^$' -bench BenchmarkExportCSV -benchtime 3x
func BenchmarkExportCSV(b *testing.B) {
	x := executor(b)
	n := *exportRows
	loadExport(b, x, n)
	h := exportService(b, x, n)
	library := func() { exportOnce(b, h, n) }
	direct := func() {
		require.NoError(b, directCSV(x, io.Discard, n))
	}
	exportbench.Versus(b, library, direct)
}

// TestExportCSVMemory: a CSV export of 200,000 rows from chDB is streamed
// (QueryRows): the Go heap in use grows by less than 16 MiB while it runs
// (the answer held whole took far more).
func TestExportCSVMemory(t *testing.T) {
	const n = 200_000
	x := executor(t)
	loadExport(t, x, n)
	h := exportService(t, x, n)
	heap, res := exportbench.PeakGrowth(func() { exportOnce(t, h, n) })
	t.Logf("%d rows: heap in use grew by at most %.1f MiB, resident memory by %.1f MiB", n, float64(heap)/(1<<20), float64(res)/(1<<20))
	assert.Less(t, heap, uint64(16<<20), "heap in use grew by %.1f MiB, want less than 16 MiB", float64(heap)/(1<<20))
}
