package endpointtest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// saveCount saves an endpoint counting the events of one name.
func saveCount(t *testing.T, env *Env) {
	t.Helper()
	ctx := context.Background()
	v, err := env.Service.CreateVariable(ctx, env.Project, variable.Variable{Name: "Event", Type: variable.String})
	require.NoError(t, err)
	q := endpoint.Query{
		Kind:      endpoint.KindSQL,
		SQL:       "SELECT count(*) AS n FROM events WHERE event = {variables.event}",
		Variables: map[string]endpoint.VariableRef{v.ID: {VariableID: v.ID, CodeName: "event"}},
	}
	_, err = env.Service.Create(ctx, env.Project, endpoint.CreateRequest{Name: "event_count", Query: &q})
	require.NoError(t, err)
}

// A host handler that wraps a run, tested the way a host would.
func TestHostHandlerAroundTheService(t *testing.T) {
	env := New(t, WithDemoEvents(3000))
	saveCount(t, env)
	var direct int64
	require.NoError(t, env.DB.QueryRow("SELECT count(*) FROM events WHERE event = 'purchase'").Scan(&direct))
	require.NotZero(t, direct, "the demo data has purchases")

	host := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, err := env.Service.Run(r.Context(), env.Project, "event_count",
			endpoint.RunRequest{Variables: map[string]any{"event": r.URL.Query().Get("event")}})
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		rows, _ := res.Results.([][]any)
		_ = json.NewEncoder(w).Encode(map[string]any{"purchases": rows[0][0]})
	})
	rec := httptest.NewRecorder()
	host.ServeHTTP(rec, httptest.NewRequest("GET", "/stats?event=purchase", nil))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var got struct{ Purchases int64 }
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))
	assert.Equal(t, direct, got.Purchases)

	status, body := env.Do(t, "POST", "/endpoints/event_count/run/", `{"variables": {"event": "purchase"}}`)
	require.Equal(t, http.StatusOK, status, body)
	var run struct{ Results [][]int64 }
	require.NoError(t, json.Unmarshal([]byte(body), &run))
	assert.Equal(t, [][]int64{{direct}}, run.Results, "HTTP and Go API agree")
}

func TestOptions(t *testing.T) {
	env := New(t, WithProject("acme"), WithKey("k-123"), WithConfig(func(c *endpoint.Config) { c.DefaultLimit = 1 }))
	assert.Equal(t, "acme", env.Project)
	assert.Equal(t, env.Server.URL+"/api/projects/acme/endpoints/", env.URL("/endpoints/"))
	saveCount(t, env)
	var n int
	require.NoError(t, env.DB.QueryRow("SELECT count(*) FROM events").Scan(&n))
	assert.Zero(t, n, "without WithDemoEvents the events table is empty")

	status, body := env.Do(t, "GET", "/endpoints/", "")
	require.Equal(t, http.StatusOK, status, body)
	assert.Contains(t, body, "event_count")

	env.Key = "wrong"
	status, _ = env.Do(t, "GET", "/endpoints/", "")
	assert.Equal(t, http.StatusUnauthorized, status, "only the configured key opens the API")
}
