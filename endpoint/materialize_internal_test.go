package endpoint

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/scope"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fixedDialect is an Executor that only knows its dialect: verdicts never
// execute anything.
type fixedDialect struct{ driver.Executor }

func (fixedDialect) Engine() engine.Engine { return engine.SQLite }

// TestVerdictMemoized: a version is analysed once per bucket set, however
// the buckets' map is ordered, so runs and Gets never analyse again.
func TestVerdictMemoized(t *testing.T) {
	s := &Service{cfg: Config{Executor: fixedDialect{}}, now: func() time.Time { return time.Unix(0, 0).UTC() }}
	tmpl, err := placeholder.Compile("SELECT count(*) AS n FROM events WHERE timestamp >= {variables.from} AND country = {variables.country}")
	require.NoError(t, err)
	c := &compiled{
		query: driver.Query{Kind: KindSQL, SQL: tmpl.Source()},
		tmpl:  tmpl,
		vars:  []variable.Variable{{CodeName: "country", Type: variable.String}, {CodeName: "from", Type: variable.Date}},
		index: map[string]int{"country": 0, "from": 1},
		scope: scope.New(nil, "1", engine.SQLite),
	}
	v := s.verdict(context.Background(), c, nil, "")
	require.True(t, v.ok, "verdict %+v", v)
	require.NotNil(t, v.plan, "verdict %+v", v)
	if again := s.verdict(context.Background(), c, map[string]engine.Bucket{}, ""); again != v {
		t.Fatal("no buckets and an empty map were analysed twice")
	}
	hour := s.verdict(context.Background(), c, map[string]engine.Bucket{"from": engine.Hour}, "")
	if hour == v || !hour.ok {
		t.Fatalf("other buckets share a verdict: %+v", hour)
	}
	if again := s.verdict(context.Background(), c, map[string]engine.Bucket{"from": engine.Hour}, ""); again != hour {
		t.Fatal("the same buckets were analysed twice")
	}
	require.Equal(t, "a=hour;b=day;", bucketKey(map[string]engine.Bucket{"b": "day", "a": "hour"}), "bucketKey")
}

// TestVariableVerdicts: each variable says how it is materialized (key,
// list, range with its bucket, match) or why not, and the tenant variable, the
// library's own, is not listed.
func TestVariableVerdicts(t *testing.T) {
	s := &Service{cfg: Config{Executor: fixedDialect{}}, now: func() time.Time { return time.Unix(0, 0).UTC() }}
	verdictOf := func(sql string) *verdict {
		tmpl, err := placeholder.Compile(sql)
		require.NoError(t, err)
		c := &compiled{query: driver.Query{Kind: KindSQL, SQL: tmpl.Source()}, tmpl: tmpl,
			vars: []variable.Variable{{CodeName: "from", Type: variable.Date}}, scope: scope.New(nil, "1", engine.SQLite)}
		return s.verdict(context.Background(), c, map[string]engine.Bucket{"from": engine.Hour}, "")
	}
	v := verdictOf(`SELECT count(*) AS n FROM events WHERE json_extract(properties, '$.country') = {variables.country}
		AND event IN {variables.events} AND timestamp >= {variables.from} AND project_id = {variables.` + tenantVariable + `}`)
	want := []VariableVerdict{
		{CodeName: "country", As: "key", Expression: `json_extract("properties", '$.country')`},
		{CodeName: "events", As: "list", Expression: `"event"`},
		{CodeName: "from", As: "range", Expression: `"timestamp"`, Bucket: "hour"},
	}
	require.True(t, v.ok, "verdict ok=%v variables\n%#v\nwant\n%#v", v.ok, v.variables, want)
	require.Equal(t, want, v.variables, "verdict ok=%v variables\n%#v\nwant\n%#v", v.ok, v.variables, want)
	v = verdictOf(`SELECT count(*) AS n FROM events WHERE event = {variables.event} AND distinct_id LIKE {variables.who}`)
	want = []VariableVerdict{
		{CodeName: "event", As: "key", Expression: `"event"`},
		{CodeName: "who", As: "match", Expression: `"distinct_id"`},
	}
	require.True(t, v.ok, "verdict ok=%v variables\n%#v\nwant\n%#v", v.ok, v.variables, want)
	require.Equal(t, want, v.variables, "verdict ok=%v variables\n%#v\nwant\n%#v", v.ok, v.variables, want)
	v = verdictOf(`SELECT count(*) AS n FROM events WHERE event = {variables.event} AND distinct_id GLOB {variables.who}`)
	want = []VariableVerdict{
		{CodeName: "event", As: "key", Expression: `"event"`},
		{CodeName: "who", Code: "unsupported_operator", Reason: "variable 'who' is used with the operator GLOB; only =, !=, >=, >, <, <=, [NOT] IN, [NOT] LIKE and [NOT] ILIKE can be materialized"},
	}
	require.False(t, v.ok, "verdict ok=%v variables\n%#v\nwant\n%#v", v.ok, v.variables, want)
	require.Equal(t, want, v.variables, "verdict ok=%v variables\n%#v\nwant\n%#v", v.ok, v.variables, want)
}

// saveChecks is an Observer that keeps the SaveCheckEvents it is told of.
type saveChecks struct {
	SlogObserver
	mu     sync.Mutex
	events []SaveCheckEvent
}

func (o *saveChecks) ObserveSaveCheck(_ context.Context, ev SaveCheckEvent) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.events = append(o.events, ev)
}

// TestTailColumnUncheckedCounted: a query the syntax tree cannot read is
// saved with its live tail's column unchecked, and that fallback is told
// to the Observer as a SaveCheckEvent (endpoint/metrics counts it in
// endpointkit_unchecked_saves_total), not only logged; a query it reads
// is judged, and tells nothing.
func TestTailColumnUncheckedCounted(t *testing.T) {
	ctx := context.Background()
	obs := &saveChecks{}
	s := &Service{cfg: Config{Executor: edgeStub(engine.SQLite)}, observer: obs}
	next := &driver.Endpoint{ProjectID: "1", Name: "weekly"}

	unreadable := &compiled{query: driver.Query{SQL: "SELECT count(* FROM events WHERE timestamp >= {variables.from}"}}
	assert.Equal(t, "", s.tailColumnUnread(ctx, next, unreadable, "timestamp"), "an unreadable query is not judged")
	require.Len(t, obs.events, 1, "the unchecked tail column is told to the observer")
	assert.Equal(t, "1", obs.events[0].Project)
	assert.Equal(t, "weekly", obs.events[0].Endpoint)
	assert.ErrorContains(t, obs.events[0].Err, `the live tail's column "timestamp" could not be checked`)

	derived := &compiled{query: driver.Query{SQL: "SELECT day, count(*) AS n FROM (SELECT distinct_id, min(timestamp) AS day FROM events GROUP BY distinct_id) f WHERE day >= {variables.from} GROUP BY day"}}
	assert.Equal(t, "'timestamp' is not a column of the query's FROM, which gives f (distinct_id, day); the live tail's column is the column holding each row's time among the columns of the query's outermost FROM",
		s.tailColumnUnread(ctx, next, derived, "timestamp"))
	assert.Equal(t, "the query's FROM has no table or alias named 'x' (it reads f (distinct_id, day))", s.tailColumnUnread(ctx, next, derived, "x.day"))
	assert.Equal(t, "", s.tailColumnUnread(ctx, next, derived, "f.day"))
	assert.Len(t, obs.events, 1, "a query the tree reads tells nothing")
}
