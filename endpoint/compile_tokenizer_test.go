package endpoint_test

import (
	"context"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/endpointtest"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSQLiteBackslashLiteral: SQLite reads no backslash escapes, so
// 'C:\' is a whole literal there. The Service refused it at save ("string
// literal starting with ' is never closed"); it saves and runs, with and
// without an access policy (which scopes the query to the project).
func TestSQLiteBackslashLiteral(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy bool
	}{{"no policy", false}, {"policy", true}} {
		t.Run(tc.name, func(t *testing.T) {
			env := endpointtest.New(t, endpointtest.WithDemoEvents(50), endpointtest.WithConfig(func(c *endpoint.Config) {
				if tc.policy {
					c.Access = eventsOnly(t)
				}
			}))
			ctx := context.Background()
			const sql = `SELECT 'C:\' || 'x' AS p, count(*) AS n FROM events WHERE event <> {variables.not_event}`
			v, err := env.Service.CreateVariable(ctx, env.Project, variable.Variable{Name: "Not event", Type: variable.String})
			require.NoError(t, err)
			q := sqlQuery(sql)
			q.Variables = map[string]endpoint.VariableRef{v.ID: {VariableID: v.ID, CodeName: v.CodeName}}
			_, err = env.Service.Create(ctx, env.Project, endpoint.CreateRequest{Name: "paths", Query: q})
			require.NoError(t, err)
			res, err := env.Service.Run(ctx, env.Project, "paths", endpoint.RunRequest{Variables: map[string]any{"not_event": "nothing"}})
			require.NoError(t, err)
			rows := res.Results.([][]any)
			require.Len(t, rows, 1)
			assert.Equal(t, `C:\x`, rows[0][0])
			got, ok := rows[0][1].(int64)
			if assert.True(t, ok, "rows[0][1] = %#v, want int64 50", rows[0][1]) {
				assert.Equal(t, int64(50), got, "rows[0][1] = %#v, want int64 50", rows[0][1])
			}
		})
	}
}
