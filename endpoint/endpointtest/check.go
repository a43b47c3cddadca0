package endpointtest

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
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

// RequireQueryError checks that err, what a save or a run of the query
// text sql ended with, is the author's mistake told in the engine's words:
// a 400 query_error whose detail holds message, with a *driver.QueryError
// as its cause, and whose engine's words (the detail before the hint that
// lists the columns the query can read) show none of hidden: what the
// engine saw but the author did not write (the tenant's scope, the stored
// table's name, the engine's codes and version).
func RequireQueryError(t testing.TB, err error, sql, message string, hidden ...string) {
	t.Helper()
	var ee *endpoint.Error
	require.ErrorAs(t, err, &ee, "Run(%q)", sql)
	if ee.Status != 400 || ee.Code != endpoint.CodeQueryError || !strings.Contains(ee.Detail, message) {
		t.Errorf("Run(%q): {%d %s %q}; want {400 query_error ...%q...}", sql, ee.Status, ee.Code, ee.Detail, message)
	}
	engineWords, _, _ := strings.Cut(ee.Detail, " There is no column")
	for _, internal := range hidden {
		assert.NotContains(t, engineWords, internal, "Run(%q): detail %q shows", sql, ee.Detail)
	}
	var qe *driver.QueryError
	assert.ErrorAs(t, err, &qe, "Run(%q): the cause is not a *driver.QueryError", sql)
}
