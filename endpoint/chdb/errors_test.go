//go:build chdb

package chdb

import (
	"context"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/assert"
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
		var ee *endpoint.Error
		require.ErrorAs(t, err, &ee, "%v", c.sql)
		if ee.Status != 400 || ee.Code != endpoint.CodeQueryError || !strings.Contains(ee.Detail, c.message) {
			t.Errorf("Run(%q): {%d %s %q}; want {400 query_error ...%q...}", c.sql, ee.Status, ee.Code, ee.Detail, c.message)
		}
		// The engine's words; the hint after them lists the columns the
		// query can read, the tenant's included.
		engineWords, _, _ := strings.Cut(ee.Detail, " There is no column")
		for _, internal := range []string{"project_id", "Code:", "version", "DB::Exception", "endpoint_q"} {
			assert.NotContains(t, engineWords, internal, "Run(%q): detail %q shows", c.sql, ee.Detail)
		}
		var qe *driver.QueryError
		assert.ErrorAs(t, err, &qe, "Run(%q): the cause is not a *driver.QueryError", c.sql)
	}
}
