//go:build chdb

package chdb

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/endpointkit/endpointkit/variable"
)

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
	ctx := context.Background()
	_, err = svc.Create(ctx, "1", endpoint.CreateRequest{Name: "good", Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT event FROM events ORDER BY event LIMIT 1"}})
	require.NoError(t, err)
	for _, c := range []struct {
		name, sql string
		want      []string
		line, col int
	}{
		{"unknown column", "SELECT evnt FROM events", []string{"evnt", "(line 1, column 8)", "did you mean event?"}, 1, 8},
		{"unknown table", "SELECT event FROM evnts", []string{"evnts", "(line 1, column 19)", "There is no table evnts; did you mean events?"}, 1, 19},
		{"syntax error at the end", "SELECT event FROM events WHERE", []string{"yntax error", "line 1, column 31", "found the end of the query"}, 1, 31},
		{"syntax error inside", "SELECT event,, 1 FROM events", []string{"yntax error", "line 1, column 14", `found ","`}, 1, 14},
	} {
		t.Run(c.name, func(t *testing.T) {
			bad := &endpoint.Query{Kind: endpoint.KindSQL, SQL: c.sql}
			_, created := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "bad", Query: bad})
			_, updated := svc.Update(ctx, "1", "good", endpoint.UpdateRequest{Query: bad})
			_, queried := svc.RunQuery(ctx, "1", endpoint.QueryRequest{Query: bad})
			for route, err := range map[string]error{"create": created, "update": updated, "query": queried} {
				var ee *endpoint.Error
				require.ErrorAs(t, err, &ee, route)
				t.Logf("%s: %s", route, ee.Detail)
				assert.Equal(t, 400, ee.Status, route)
				assert.Equal(t, endpoint.CodeQueryError, ee.Code, "%s: %s", route, ee.Detail)
				assert.Equal(t, "query.query", ee.Attr, route)
				assert.Equal(t, [2]int{c.line, c.col}, [2]int{ee.Line, ee.Column}, "%s: %s", route, ee.Detail)
				for _, w := range c.want {
					assert.Contains(t, ee.Detail, w, route)
				}
				for _, internal := range []string{"endpoint_q", "SETTINGS", "max_execution_time", "project_id", "{p1:"} {
					assert.NotContains(t, ee.Detail, internal, route)
				}
			}
			_, err := svc.Get(ctx, "1", "bad")
			assert.True(t, errors.Is(err, endpoint.ErrNotFound), "a refused query was saved: %v", err)
			got, err := svc.Get(ctx, "1", "good")
			require.NoError(t, err)
			assert.Equal(t, 1, got.CurrentVersion)
			res, err := svc.Run(ctx, "1", "good", endpoint.RunRequest{})
			require.NoError(t, err, "the last version stopped running")
			assert.Equal(t, []string{"event"}, res.Columns)
		})
	}
}
