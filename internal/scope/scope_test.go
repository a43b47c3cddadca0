package scope

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint/access"
	"github.com/endpointkit/endpointkit/endpoint/engine"
	"github.com/endpointkit/endpointkit/insight"
	"github.com/endpointkit/endpointkit/materialize"
	"github.com/endpointkit/endpointkit/variable"
)

var eventsByProject = &access.Rules{Tables: []access.Table{{Name: "events", TenantColumn: "project_id"}}}

// TestRenderBindsTheTenant: a scoped template reads the events of its
// scope's project, whatever value of the tenant placeholder a caller puts
// in the values.
func TestRenderBindsTheTenant(t *testing.T) {
	sc := New(eventsByProject, "7", engine.PostgreSQL)
	tmpl, scoped, err := sc.Compile("SELECT count(*) FROM events WHERE event = {variables.e}")
	require.NoError(t, err)
	assert.True(t, scoped)
	assert.True(t, tmpl.Tenant())
	st, err := tmpl.Render(map[string]any{"e": "purchase", TenantVariable: "8"})
	require.NoError(t, err)
	assert.Contains(t, st.SQL(), `project_id = $`)
	assert.ElementsMatch(t, []any{"7", "purchase"}, st.Args(), "the scope's project, not the caller's")

	plain, scoped, err := New(nil, "7", engine.SQLite).Compile("SELECT 1 FROM t")
	require.NoError(t, err)
	assert.False(t, scoped, "without a policy nothing is rewritten")
	assert.False(t, plain.Tenant())

	_, _, err = sc.Compile("SELECT * FROM orders")
	var ae *access.Error
	require.True(t, errors.As(err, &ae), "a table the rules do not list: %v", err)
	assert.Equal(t, "orders", ae.Table)
}

// TestPlanStatementsAreScoped: a stored table is built from the scoped
// pre-compute query, and a read off the buckets' boundaries reads its
// partial bucket from the scoped source, the tenant bound in both.
func TestPlanStatementsAreScoped(t *testing.T) {
	a, err := materialize.Analyze("SELECT event, count(*) AS n FROM events WHERE timestamp >= {variables.from} GROUP BY event",
		materialize.Options{Engine: engine.SQLite, Types: map[string]variable.Type{"from": variable.Date}})
	require.NoError(t, err)
	require.True(t, a.Materializable(), a.Reason())
	p, err := New(eventsByProject, "7", engine.SQLite).Plan(a.Plan)
	require.NoError(t, err)
	build, err := p.Build("stored_next", time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	require.Len(t, build, 2)
	assert.Contains(t, build[1].SQL(), "project_id")
	assert.Contains(t, build[1].Args(), "7")
	read, err := p.ReadPage("stored", map[string]any{"from": variable.Timestamp{Time: time.Date(2025, 5, 31, 12, 0, 0, 0, time.UTC)}}, 10, 0)
	require.NoError(t, err)
	assert.Contains(t, read.SQL(), `UNION ALL SELECT "event" AS "_k0", count(*) AS "_a0" FROM (SELECT * FROM "events" WHERE "events".project_id = ?) AS "events"`,
		"the partial bucket reads the scoped source")
	assert.Contains(t, read.Args(), "7")
}

// TestInsightTakesTheScopesTenant: an insight statement reads the events
// of the scope's project, whatever tenant the query held, and a scope that
// may not read the events refuses it.
func TestInsightTakesTheScopesTenant(t *testing.T) {
	q, err := insight.Decode([]byte(`{"kind": "TrendsQuery", "series": [{"kind": "EventsNode", "event": "$pageview"}]}`))
	require.NoError(t, err)
	q.Tenant = &insight.Tenant{Column: "project_id", Value: "8"}
	st, _, err := New(eventsByProject, "7", engine.SQLite).Insight(q, time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	assert.Contains(t, st.Args(), "7")
	assert.NotContains(t, st.Args(), "8")
	assert.Equal(t, "8", q.Tenant.Value, "the query itself is not changed")

	_, _, err = New(&access.Rules{Tables: []access.Table{{Name: "orders"}}}, "7", engine.SQLite).Insight(q, time.Now())
	var ae *access.Error
	assert.True(t, errors.As(err, &ae), "events are not readable: %v", err)
}
