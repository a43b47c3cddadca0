package endpoint_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/internal/heldexec"
	"github.com/endpointkit/endpointkit/variable"
)

// catalogRead selects the statements that read a table's columns' types
// (SELECT * FROM sales LIMIT 0).
func catalogRead(sql string) bool {
	return strings.HasPrefix(sql, "SELECT * FROM sales") && strings.HasSuffix(sql, "LIMIT 0")
}

// catalogReads counts the catalog reads x was given.
func catalogReads(x *heldexec.Fake) int {
	n := 0
	for _, c := range x.Calls() {
		if catalogRead(c.SQL) {
			n++
		}
	}
	return n
}

// salesService is a Service on e whose database holds the table sales
// (a text time, a floating-point amount and an integer qty, in e's types),
// with the Date variable from, its executor recording the catalog reads
// and, while fail is set, failing them.
func salesService(t *testing.T, e checkEngine, obs endpoint.Observer, fail *atomic.Bool) (*endpoint.Service, *heldexec.Fake, map[string]endpoint.VariableRef) {
	t.Helper()
	var cr *heldexec.Fake
	failing := func(st driver.Statement) bool { return fail != nil && fail.Load() && catalogRead(st.SQL()) }
	svc, db, _ := checkServiceParts(t, e, func(x driver.Executor) driver.Executor {
		cr = heldexec.NewFake(x, heldexec.Fail(errors.New("the catalog is away"), failing))
		return cr
	}, func(c *endpoint.Config) { c.Observer = obs })
	ctx := context.Background()
	real, integer := map[string]string{"sqlite": "REAL", "postgres": "double precision", "mariadb": "DOUBLE"}[e.name],
		map[string]string{"sqlite": "INTEGER", "postgres": "bigint", "mariadb": "BIGINT"}[e.name]
	_, err := db.ExecContext(ctx, "CREATE TABLE sales (day VARCHAR(19), amount "+real+", qty "+integer+")")
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, "INSERT INTO sales VALUES ('2025-05-01 00:00:00', 0.1, 1), ('2025-05-01 12:00:00', 0.2, 2), ('2025-05-02 00:00:00', 0.3, 3)")
	require.NoError(t, err)
	v, err := svc.CreateVariable(ctx, "1", variable.Variable{Name: "From", Type: variable.Date})
	require.NoError(t, err)
	return svc, cr, map[string]endpoint.VariableRef{v.ID: {VariableID: v.ID, CodeName: v.CodeName}}
}

// TestColumnTypesReadOncePerVersion: the Service reads the declared types
// of a table's columns only for a query that sums one of them where a
// read adds the stored parts up again, once per version: the save reads
// them, the runs and views of that version read them no more, and a new
// version reads them again (an ALTER TABLE shows at the next save). A sum
// of its integer column materializes and answers as inline; of its
// floating-point column it is refused, on every engine.
func TestColumnTypesReadOncePerVersion(t *testing.T) {
	for _, e := range checkEngines {
		t.Run(e.name, func(t *testing.T) {
			svc, cr, vars := salesService(t, e, nil, nil)
			ctx := context.Background()
			q := &endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT count(*) AS n FROM sales WHERE day >= {variables.from}", Variables: vars}
			_, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "counts", Query: q, IsMaterialized: true})
			require.NoError(t, err)
			assert.Zero(t, catalogReads(cr), "a query that sums no column reads no catalog")

			q.SQL = "SELECT sum(qty) AS n FROM sales WHERE day >= {variables.from}"
			_, err = svc.Create(ctx, "1", endpoint.CreateRequest{Name: "qty", Query: q, IsMaterialized: true})
			require.NoError(t, err)
			assert.Equal(t, 1, catalogReads(cr), "the save reads the table's types")
			require.NoError(t, svc.Materialize(ctx, "1", "qty"))
			for range 3 {
				res, err := svc.Run(ctx, "1", "qty", endpoint.RunRequest{Variables: map[string]any{"from": "2025-05-01"}})
				require.NoError(t, err)
				assert.True(t, res.EndpointMaterialized)
				assert.Equal(t, "6", fmt.Sprint(res.Results.([][]any)[0][0]))
			}
			_, err = svc.Get(ctx, "1", "qty")
			require.NoError(t, err)
			assert.Equal(t, 1, catalogReads(cr), "runs and views of the version read the types no more")

			q.SQL = "SELECT sum(amount) AS total FROM sales WHERE day >= {variables.from}"
			_, err = svc.Update(ctx, "1", "qty", endpoint.UpdateRequest{Query: q})
			var ee *endpoint.Error
			require.ErrorAs(t, err, &ee)
			assert.Equal(t, endpoint.CodeCannotMaterialize, ee.Code)
			assert.Contains(t, ee.Detail, "sum(amount) adds up floating-point values (amount of sales, a column of type ")
			assert.Equal(t, 2, catalogReads(cr), "a new version reads the types again")
		})
	}
}

// TestColumnTypesUnread: when the engine does not tell a table's
// columns' types, a materialized query that sums one of them over a range
// is judged on the safe side, and not silently: the save is refused with
// a reason that says the types could not be read, the Observer is told
// (logged and counted), and that verdict is not kept, so that the next
// save, with the catalog back, reads the types and materializes.
func TestColumnTypesUnread(t *testing.T) {
	obs := &recorder{}
	var fail atomic.Bool
	svc, _, vars := salesService(t, checkEngines[0], obs, &fail)
	ctx := context.Background()
	q := &endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT sum(qty) AS n FROM sales WHERE day >= {variables.from}", Variables: vars}
	fail.Store(true)
	_, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "qty", Query: q, IsMaterialized: true})
	var ee *endpoint.Error
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, endpoint.CodeCannotMaterialize, ee.Code)
	assert.Contains(t, ee.Detail, "sum(qty) adds up values the analysis cannot tell are not floating point")
	assert.Contains(t, ee.Detail, "the declared types of the columns of sales could not be read from the database (")
	events := obs.saveCheckEvents()
	require.Len(t, events, 1)
	assert.Equal(t, "1", events[0].Project)
	assert.ErrorContains(t, events[0].Err, "the declared types of the columns of sales could not be read from the database")
	assert.ErrorContains(t, events[0].Err, "the catalog is away", "the engine's error is in the chain")

	// Saved unmaterialized, its view says why it cannot be, each time
	// it is judged while the types stay unread.
	created, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "qty", Query: q})
	require.NoError(t, err, "saved without materializing")
	assert.False(t, created.Materialization.CanMaterialize)
	assert.Contains(t, created.Materialization.Reason, "could not be read from the database")
	assert.Len(t, obs.saveCheckEvents(), 2)
	fail.Store(false)
	yes := true
	_, err = svc.Update(ctx, "1", "qty", endpoint.UpdateRequest{IsMaterialized: &yes})
	require.NoError(t, err, "the catalog back, the types are read again")
	assert.Len(t, obs.saveCheckEvents(), 2)
}
