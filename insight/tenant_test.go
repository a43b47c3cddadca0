package insight

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/tree"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// byProject confines the events to the rows of project, as package
// sql/scope does for rules that give the events a tenant column.
func byProject(project any) *tree.Confinement {
	return &tree.Confinement{Table: tree.Table{Parts: []string{"events"}, TenantColumn: "project_id"}, Tenant: project}
}

// TestTenantIsWrittenByThePrinter: with a tenant, every read of the
// events, in every kind of query and in the build of a stored table, is
// the printer's derived table (tree.WriteTable) with the tenant bound; a
// tenant column with no tenant fails rather than read the table whole.
func TestTenantIsWrittenByThePrinter(t *testing.T) {
	for name, text := range goldenCases {
		for _, d := range []engine.Engine{engine.SQLite, engine.PostgreSQL, engine.MySQL, engine.ClickHouse} {
			q := mustDecode(t, text)
			plain, err := Compile(q, d, compileNow)
			require.NoError(t, err)
			reads := strings.Count(plain.SQL, "FROM "+d.QuoteIdent("events"))
			require.Positive(t, reads, "%s on %s reads no events", name, d.Name())

			q.Tenant = byProject("p-7")
			c, err := Compile(q, d, compileNow)
			require.NoError(t, err)
			ev := d.QuoteIdent("events")
			derived := "(SELECT * FROM " + ev + " WHERE " + ev + ".project_id = "
			assert.Equal(t, reads, strings.Count(c.SQL, derived), "%s on %s: every read of the events is confined:\n%s", name, d.Name(), c.SQL)
			assert.Equal(t, reads, strings.Count(c.SQL, "FROM "+ev), "%s on %s: no read of the events outside the derived tables:\n%s", name, d.Name(), c.SQL)
			assert.Equal(t, reads, count(c.Args, "p-7"), "%s on %s: the tenant is bound once per read", name, d.Name())
			assert.NotContains(t, c.SQL, "p-7", "the tenant is never text")

			built, err := Materialize(q, d, "stored", compileNow)
			require.NoError(t, err)
			fill := built[len(built)-1]
			assert.Equal(t, reads, strings.Count(fill.SQL, derived), "%s on %s: the build of a stored table is confined", name, d.Name())
			assert.Equal(t, reads, count(fill.Args, "p-7"))

			q.Tenant = byProject(nil)
			_, err = Compile(q, d, compileNow)
			require.ErrorIs(t, err, tree.ErrUnscoped, "%s on %s: a tenant column without a tenant", name, d.Name())
			_, err = Materialize(q, d, "stored", compileNow)
			require.ErrorIs(t, err, tree.ErrUnscoped, "%s on %s: a build without a tenant", name, d.Name())
		}
	}
}

// TestTenantColumnsAndTable: a scope that lists the events' columns
// confines a read to them; a confinement of another table is refused.
func TestTenantColumnsAndTable(t *testing.T) {
	q := mustDecode(t, goldenCases["trends_total_daily"])
	q.Tenant = &tree.Confinement{Table: tree.Table{Parts: []string{"events"}, TenantColumn: "project_id", Columns: EventsColumns()}, Tenant: "1"}
	c, err := Compile(q, engine.PostgreSQL, compileNow)
	require.NoError(t, err)
	assert.Contains(t, c.SQL, `FROM (SELECT event, distinct_id, timestamp, properties FROM "events" WHERE "events".project_id = $1) AS "events"`)

	q.Tenant = &tree.Confinement{Table: tree.Table{Parts: []string{"events"}, Columns: EventsColumns()}}
	c, err = Compile(q, engine.SQLite, compileNow)
	require.NoError(t, err, "columns alone need no tenant")
	assert.Contains(t, c.SQL, `FROM (SELECT event, distinct_id, timestamp, properties FROM "events") AS "events"`)

	q.Tenant = &tree.Confinement{Table: tree.Table{Parts: []string{"orders"}, TenantColumn: "project_id"}, Tenant: "1"}
	_, err = Compile(q, engine.SQLite, compileNow)
	require.ErrorIs(t, err, tree.ErrUnscoped)
	assert.ErrorContains(t, err, `the confinement of table "orders" was given for table "events"`)
}

// tenantCases are queries of every kind over genEvents' properties.
var tenantCases = map[string]string{
	"trends": `{"kind":"TrendsQuery","interval":"week","series":[{"kind":"EventsNode","event":"$pageview"},{"kind":"EventsNode","event":"$pageview","math":"dau"},
		{"kind":"EventsNode","event":"purchase","math":"sum","math_property":"amount"}],"dateRange":{"date_from":"2025-03-01","date_to":"2025-05-31"},
		"breakdownFilter":{"breakdowns":[{"property":"$browser","type":"event"}],"breakdown_limit":3}}`,
	"retention_first_time": `{"kind":"RetentionQuery","retentionFilter":{"targetEntity":{"id":"signed_up","type":"events"},"returningEntity":{"id":"$pageview","type":"events"},
		"period":"Week","totalIntervals":5,"retentionType":"retention_first_time"},"dateRange":{"date_from":"2025-04-01","date_to":"2025-05-31"},"breakdownFilter":{"breakdown":"$os"}}`,
	"retention_recurring": `{"kind":"RetentionQuery","retentionFilter":{"targetEntity":{"id":"$pageview","type":"events"},"returningEntity":{"id":"purchase","type":"events"},
		"period":"Week","totalIntervals":4,"retentionType":"retention_recurring"},"dateRange":{"date_from":"2025-04-01","date_to":"2025-05-31"}}`,
	"lifecycle": `{"kind":"LifecycleQuery","series":[{"kind":"EventsNode","event":"$pageview"}],"interval":"week",
		"dateRange":{"date_from":"2025-04-01","date_to":"2025-05-31"}}`,
}

// TestTenantReadsItsOwnRows: a query of every kind over a database that
// also holds another project's events (the same actors, events and
// properties, at other times) answers, inline and from a stored table
// built with the tenant, exactly as over a database holding the tenant's
// events alone; without the tenant it does not (so the data set tells a
// leak).
func TestTenantReadsItsOwnRows(t *testing.T) {
	mine := genEvents(600, 11)
	alone := eventsDB(t, mine)
	shared := eventsDB(t, mine)
	insertProject(t, shared, "2", genEvents(600, 12))
	now := time.Date(2025, 6, 10, 0, 0, 0, 0, time.UTC)
	for name, text := range tenantCases {
		want := asJSON(t, run(t, alone, mustDecode(t, text), now))

		q := mustDecode(t, text)
		q.Tenant = byProject("1")
		assert.JSONEq(t, want, asJSON(t, run(t, shared, q, now)), "%s inline", name)

		built, err := Materialize(q, engine.SQLite, "stored_"+name, now)
		require.NoError(t, err)
		for _, st := range built {
			_, err := shared.Exec(st.SQL, st.Args...)
			require.NoError(t, err, "%s: %s", name, st.SQL)
		}
		read, err := ReadMaterialized(q, engine.SQLite, "stored_"+name, nil, now)
		require.NoError(t, err)
		res, err := read.Shape(queryRows(t, shared, read.SQL, read.Args))
		require.NoError(t, err)
		assert.JSONEq(t, want, asJSON(t, res), "%s from the stored table", name)

		q.Tenant = nil
		assert.NotEqual(t, want, asJSON(t, run(t, shared, q, now)), "%s: the data set tells a leak", name)
	}
}

// insertProject adds events to db as the rows of project.
func insertProject(t *testing.T, db *sql.DB, project string, events []testEvent) {
	t.Helper()
	for i, e := range events {
		props, err := json.Marshal(e.props)
		require.NoError(t, err)
		_, err = db.Exec(`INSERT INTO events (project_id, uuid, event, distinct_id, timestamp, properties) VALUES (?, ?, ?, ?, ?, ?)`,
			project, fmt.Sprintf("p%s-%06d", project, i), e.event, e.actor, e.ts.Format("2006-01-02 15:04:05"), string(props))
		require.NoError(t, err)
	}
}

// asJSON is a result as the API writes it.
func asJSON(t *testing.T, r *Result) string {
	t.Helper()
	b, err := json.Marshal(r)
	require.NoError(t, err)
	return string(b)
}

// count is how many of args equal v.
func count(args []any, v any) int {
	n := 0
	for _, a := range args {
		if a == v {
			n++
		}
	}
	return n
}
