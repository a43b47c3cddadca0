//go:build chdb

package chdb

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/internal/heldexec"
	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
