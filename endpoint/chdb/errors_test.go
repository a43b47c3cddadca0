//go:build chdb

package chdb

import (
	"context"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/endpointtest"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/require"
)

// A mistake in the query answers 400 query_error with ClickHouse's own
// message, without the statement it ran (which holds the tenant scope)
// nor the code's name and version; it was a 502.
func TestQueryErrorsAreTheAuthors(t *testing.T) {
	x := executor(t)
	loadDemo(t, x)
	policy, err := access.NewStatic(access.Rules{Tables: []access.Table{{Name: "events", TenantColumn: "project_id"}}}, nil)
	require.NoError(t, err)
	svc, err := endpoint.New(endpoint.Config{Endpoints: memstore.New(), Variables: variable.NewMemoryStore(), Executor: x, Access: policy})
	require.NoError(t, err)
	ctx := context.Background()
	for i, c := range []struct{ sql, message string }{
		{"SELECT intDiv(count(), 0) FROM events", "Division by zero"},
		{"SELECT nope FROM events", "nope"},
		{"SELECT toInt64(event) FROM events", "Cannot parse"},
	} {
		name := "q" + string(rune('a'+i))
		// ClickHouse refuses some at save already (the save's check
		// analyzes the query: an unknown name, a constant division by
		// zero); the others when they run.
		_, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: name, Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: c.sql}})
		if err == nil {
			_, err = svc.Run(ctx, "1", name, endpoint.RunRequest{})
		}
		// The engine's words; the hint after them lists the columns the
		// query can read, the tenant's included.
		endpointtest.RequireQueryError(t, err, c.sql, c.message, "project_id", "Code:", "version", "DB::Exception", "endpoint_q")
	}
}
