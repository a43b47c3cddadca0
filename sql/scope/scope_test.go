package scope

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/insight"
	"github.com/endpointkit/endpointkit/materialize"
	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/tree"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var eventsByProject = &access.Rules{Tables: []access.Table{{Name: "events", TenantColumn: "project_id"}}}

// TestRenderBindsTheTenant: a scoped template reads the events of its
// scope's project, whatever value of the tenant placeholder a caller puts
// in the values.
func TestRenderBindsTheTenant(t *testing.T) {
	sc := New(eventsByProject, "7", engine.PostgreSQL)
	tmpl, scoped, err := sc.Compile("SELECT count(*) FROM events WHERE event = {variables.e}")
	require.NoError(t, err)
	assert.True(t, scoped, "scoped is false")
	assert.True(t, tmpl.Tenant(), "tmpl.Tenant() is false")
	st, err := tmpl.Render(map[string]any{"e": "purchase", TenantVariable: "8"})
	require.NoError(t, err)
	assert.Contains(t, st.SQL(), `project_id = $`)
	assert.ElementsMatch(t, []any{"7", "purchase"}, st.Args(), "the scope's project, not the caller's")

	plain, scoped, err := New(nil, "7", engine.SQLite).Compile("SELECT 1 FROM t")
	require.NoError(t, err)
	assert.False(t, scoped, "without a policy nothing is rewritten: scoped is true")
	assert.False(t, plain.Tenant(), "plain.Tenant() is true")

	_, _, err = sc.Compile("SELECT * FROM orders")
	var ae *access.Error
	require.ErrorAs(t, err, &ae, "a table the rules do not list")
	assert.Equal(t, "orders", ae.Table)
}

// TestPlanStatementsAreScoped: a stored table is built from the scoped
// pre-compute query, and a read off the buckets' boundaries reads its
// partial bucket from the scoped source, the tenant bound in both.
func TestPlanStatementsAreScoped(t *testing.T) {
	a, err := materialize.Analyze("SELECT event, count(*) AS n FROM events WHERE timestamp >= {variables.from} GROUP BY event",
		materialize.Options{Engine: engine.SQLite, Types: map[string]variable.Type{"from": variable.Date}})
	require.NoError(t, err)
	require.True(t, a.Materializable(), "%v: a.Materializable() is false", a.Reason())
	p, err := New(eventsByProject, "7", engine.SQLite).Plan(a.Plan)
	require.NoError(t, err)
	build, err := p.Build("stored_next", time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	require.Len(t, build, 2)
	assert.Contains(t, build[1].SQL(), "project_id")
	args := build[1].Args()
	assert.True(t, slices.Contains(args, any("7")), "build[1].Args() = %v, want the project %q among them", args, "7")
	read, err := p.ReadPage("stored", map[string]any{"from": variable.Timestamp{Time: time.Date(2025, 5, 31, 12, 0, 0, 0, time.UTC)}}, 10, 0)
	require.NoError(t, err)
	assert.Contains(t, read.SQL(), `UNION ALL SELECT "event" AS "_k0", count(*) AS "_a0" FROM (SELECT * FROM "events" WHERE "events".project_id = ?) AS "events"`, "the partial bucket reads the scoped source")
	if args := read.Args(); !slices.Contains(args, any("7")) {
		t.Errorf("read.Args() = %v, want the project %q among them", args, "7")
	}
}

// TestInsightTakesTheScopesTenant: an insight statement reads the events
// of the scope's project, whatever tenant the query held, and a scope that
// may not read the events refuses it.
func TestInsightTakesTheScopesTenant(t *testing.T) {
	q, err := insight.Decode([]byte(`{"kind": "TrendsQuery", "series": [{"kind": "EventsNode", "event": "$pageview"}]}`))
	require.NoError(t, err)
	q.Tenant = &tree.Confinement{Table: tree.Table{Parts: []string{"events"}, TenantColumn: "project_id"}, Tenant: "8"}
	st, _, err := New(eventsByProject, "7", engine.SQLite).Insight(q, time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	args := st.Args()
	if assert.True(t, slices.Contains(args, any("7")), "st.Args() = %v, want the scope's %q and not the query's %q", args, "7", "8") {
		assert.False(t, slices.Contains(args, any("8")), "st.Args() = %v, want the scope's %q and not the query's %q", args, "7", "8")
	}
	assert.Equal(t, "8", q.Tenant.Tenant, "the query itself is not changed: q.Tenant.Tenant")

	_, _, err = New(&access.Rules{Tables: []access.Table{{Name: "orders"}}}, "7", engine.SQLite).Insight(q, time.Now())
	var ae *access.Error
	assert.ErrorAs(t, err, &ae, "events are not readable")
}

// TestInsightIsConfinedByThePrinter: every read of the events of an
// insight statement and of the build of its stored table is the printer's
// derived table, the project bound; rules that list the events' columns
// confine the reads to them, and refuse an insight that reads a column
// they do not list; without a policy the events are read as they are.
func TestInsightIsConfinedByThePrinter(t *testing.T) {
	now := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	for _, text := range []string{
		`{"kind": "TrendsQuery", "series": [{"kind": "EventsNode", "event": "$pageview"}], "breakdownFilter": {"breakdown": "$browser"}}`,
		`{"kind": "RetentionQuery", "retentionFilter": {"targetEntity": {"id": "a", "type": "events"}, "returningEntity": {"id": "b", "type": "events"}}}`,
		`{"kind": "LifecycleQuery", "series": [{"kind": "EventsNode", "event": "$pageview"}]}`,
	} {
		q, err := insight.Decode([]byte(text))
		require.NoError(t, err)
		sc := New(eventsByProject, "7", engine.PostgreSQL)
		st, _, err := sc.Insight(q, now)
		require.NoError(t, err)
		derived := `FROM (SELECT * FROM "events" WHERE "events".project_id = $`
		reads := strings.Count(st.SQL(), `FROM "events"`)
		require.Positive(t, reads)
		assert.Equal(t, reads, strings.Count(st.SQL(), derived), "%s: every read is confined:\n%s", text, st.SQL())
		build, err := sc.InsightBuild(q, "stored_next", now)
		require.NoError(t, err)
		fill := build[len(build)-1]
		assert.Equal(t, reads, strings.Count(fill.SQL(), derived), "%s: the build is confined:\n%s", text, fill.SQL())
		assert.Equal(t, reads, countOf(fill.Args(), "7"))

		listed := &access.Rules{Tables: []access.Table{{Name: "events", TenantColumn: "project_id", Columns: []string{"uuid", "event", "distinct_id", "timestamp", "properties"}}}}
		st, _, err = New(listed, "7", engine.SQLite).Insight(q, now)
		require.NoError(t, err)
		assert.Contains(t, st.SQL(), `FROM (SELECT uuid, event, distinct_id, timestamp, properties FROM "events" WHERE "events".project_id = ?) AS "events"`)

		hidden := &access.Rules{Tables: []access.Table{{Name: "events", TenantColumn: "project_id", Columns: []string{"event", "timestamp"}}}}
		_, _, err = New(hidden, "7", engine.SQLite).Insight(q, now)
		var ae *access.Error
		require.ErrorAs(t, err, &ae, "a column the rules hide")
		assert.Equal(t, access.ReasonColumn, ae.Reason)
		assert.Equal(t, "events", ae.Table)
		assert.Contains(t, ae.Detail, "distinct_id")

		st, _, err = New(nil, "7", engine.SQLite).Insight(q, now)
		require.NoError(t, err)
		assert.NotContains(t, st.SQL(), "project_id", "no policy, no tenant")
	}
}

// countOf is how many of args equal v.
func countOf(args []any, v any) int {
	n := 0
	for _, a := range args {
		if a == v {
			n++
		}
	}
	return n
}
