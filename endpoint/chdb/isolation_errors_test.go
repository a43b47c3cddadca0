//go:build chdb

package chdb

import (
	"context"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOtherTenantsRowsNeverReachAnError: ClickHouse moved a condition of
// the query's WHERE into the PREWHERE of the scoped table's read, ahead of
// the tenant's condition (optimize_move_to_prewhere; the tenant column
// leads the primary key, whose conditions go last), so that the query's
// expressions ran on every project's rows: toInt64(event) failed on
// project 2's "x" and the 400 answered to project 1 said "Cannot parse
// string 'x'", and whether a run failed told whether another project held
// a value (intDiv(1, n - 1)). The engine's guard turns the move off: the
// tenant's condition filters the rows first.
func TestOtherTenantsRowsNeverReachAnError(t *testing.T) {
	x := executor(t)
	ctx := context.Background()
	require.NoError(t, x.Load(ctx, `CREATE TABLE tenant_errors (project_id String, event String, n Int64) ENGINE = MergeTree ORDER BY (project_id, n)`, nil))
	t.Cleanup(func() { _ = x.Load(context.Background(), `DROP TABLE IF EXISTS tenant_errors`, nil) })
	require.NoError(t, x.Load(ctx, `INSERT INTO tenant_errors VALUES ('1', '7', 7), ('1', '13', 13), ('2', 'x', 1), ('2', 'y', 0)`, nil))
	policy, err := access.NewStatic(access.Rules{Tables: []access.Table{{Name: "tenant_errors", TenantColumn: "project_id"}}}, nil)
	require.NoError(t, err)
	svc, err := endpoint.New(endpoint.Config{Endpoints: memstore.New(), Variables: variable.NewMemoryStore(), Executor: x, Access: policy})
	require.NoError(t, err)
	for name, sql := range map[string]string{
		"parse":    "SELECT count() AS c FROM tenant_errors WHERE toInt64(event) > 0",
		"uuid":     "SELECT count() AS c FROM tenant_errors WHERE toUUID(concat(event, '0000000-0000-0000-0000-000000000000')) IS NOT NULL AND toInt64(event) > 0",
		"division": "SELECT count() AS c FROM tenant_errors WHERE intDiv(1, n - 1) >= 0 AND intDiv(1, n) >= 0",
	} {
		_, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: name, Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: sql}})
		require.NoError(t, err, "%s", sql)
		res, err := svc.Run(ctx, "1", name, endpoint.RunRequest{})
		if assert.NoError(t, err, "%s: project 1's run met project 2's rows", name) {
			assert.Equal(t, [][]any{{int64(2)}}, res.Results, "%s", name)
		}
	}
}
