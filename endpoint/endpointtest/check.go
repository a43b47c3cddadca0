package endpointtest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
)

// BadQuery is a query an engine refuses for its text: the words its
// answer's detail must hold, and the line and column it must name.
type BadQuery struct {
	// Name names the case's subtest.
	Name string
	// SQL is the query's text.
	SQL string
	// Want are the words the detail must hold.
	Want []string
	// Line and Column are where the answer must place the fault.
	Line, Column int
}

// RefusedAtSave checks, on a Service whose events table has an event
// column, that each of bad is refused at Create, at Update and by the
// editor's query route (RunQuery) with a 400 query_error whose attr is
// query.query, whose detail holds the case's words and none of unsaid (a
// rewrite's internals the author never wrote), and which names the case's
// line and column; that nothing refused is saved; and that a refused
// update leaves the endpoint's last version running. It saves an endpoint
// "good" in project first; each case is a subtest named after it.
func RefusedAtSave(t *testing.T, svc *endpoint.Service, project string, bad []BadQuery, unsaid ...string) {
	t.Helper()
	ctx := context.Background()
	good := &endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT event FROM events ORDER BY event LIMIT 1"}
	_, err := svc.Create(ctx, project, endpoint.CreateRequest{Name: "good", Query: good})
	require.NoError(t, err)
	for _, c := range bad {
		t.Run(c.Name, func(t *testing.T) {
			q := &endpoint.Query{Kind: endpoint.KindSQL, SQL: c.SQL}
			_, created := svc.Create(ctx, project, endpoint.CreateRequest{Name: "bad", Query: q})
			_, updated := svc.Update(ctx, project, "good", endpoint.UpdateRequest{Query: q})
			_, queried := svc.RunQuery(ctx, project, endpoint.QueryRequest{Query: q})
			for route, err := range map[string]error{"create": created, "update": updated, "query": queried} {
				var ee *endpoint.Error
				require.ErrorAs(t, err, &ee, route)
				t.Logf("%s: %s", route, ee.Detail)
				assert.Equal(t, 400, ee.Status, route)
				assert.Equal(t, endpoint.CodeQueryError, ee.Code, "%s: %s", route, ee.Detail)
				assert.Equal(t, "query.query", ee.Attr, route)
				assert.Equal(t, [2]int{c.Line, c.Column}, [2]int{ee.Line, ee.Column}, "%s: %s", route, ee.Detail)
				for _, w := range c.Want {
					assert.Contains(t, ee.Detail, w, route)
				}
				for _, u := range unsaid {
					assert.NotContains(t, ee.Detail, u, route)
				}
			}
			_, err := svc.Get(ctx, project, "bad")
			assert.ErrorIs(t, err, endpoint.ErrNotFound, "a refused query was saved")
			got, err := svc.Get(ctx, project, "good")
			require.NoError(t, err)
			assert.Equal(t, 1, got.CurrentVersion)
			res, err := svc.Run(ctx, project, "good", endpoint.RunRequest{})
			require.NoError(t, err, "the last version stopped running")
			assert.Equal(t, []string{"event"}, res.Columns)
		})
	}
}
