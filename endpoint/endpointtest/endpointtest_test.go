package endpointtest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
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
	v := direct
	require.NotEqual(t, int64(0), v, "the demo data has purchases: direct is zero")

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
	if got, want := rec.Code, http.StatusOK; got != want {
		t.Fatalf("%v: rec.Code = %v, want %v", rec.Body.String(), got, want)
	}
	var got struct{ Purchases int64 }
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))
	assert.Equal(t, direct, got.Purchases)

	status, body := env.Do(t, "POST", "/endpoints/event_count/run/", `{"variables": {"event": "purchase"}}`)
	if got, want := status, http.StatusOK; got != want {
		t.Fatalf("%v: status = %v, want %v", body, got, want)
	}
	var run struct{ Results [][]int64 }
	require.NoError(t, json.Unmarshal([]byte(body), &run))
	if got, want := run.Results, ([][]int64{{direct}}); !reflect.DeepEqual(got, want) {
		t.Errorf("HTTP and Go API agree: run.Results = %+v, want %+v", got, want)
	}
}

func TestOptions(t *testing.T) {
	env := New(t, WithProject("acme"), WithKey("k-123"), WithConfig(func(c *endpoint.Config) { c.DefaultLimit = 1 }))
	assert.Equal(t, "acme", env.Project)
	got, want := env.URL("/endpoints/"), env.Server.URL+"/api/projects/acme/endpoints/"
	assert.Equal(t, want, got, "env.URL(\"/endpoints/\")")
	saveCount(t, env)
	var n int
	require.NoError(t, env.DB.QueryRow("SELECT count(*) FROM events").Scan(&n))
	v := n
	assert.Equal(t, 0, v, "without WithDemoEvents the events table is empty: n")

	status, body := env.Do(t, "GET", "/endpoints/", "")
	if got, want := status, http.StatusOK; got != want {
		t.Fatalf("%v: status = %v, want %v", body, got, want)
	}
	assert.Contains(t, body, "event_count")

	env.Key = "wrong"
	status, _ = env.Do(t, "GET", "/endpoints/", "")
	if got, want := status, http.StatusUnauthorized; got != want {
		t.Errorf("only the configured key opens the API: status = %v, want %v", got, want)
	}
}

// TestPostOK: PostOK sends a JSON POST with the key as bearer token, whose
// context ends when the handler returns; it answers nil on 200 and an
// error naming the status and the body otherwise.
func TestPostOK(t *testing.T) {
	var seen *http.Request
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = r
		if r.URL.Path != "/ok" {
			http.Error(w, `{"detail": "no such route"}`, http.StatusNotFound)
		}
	})
	require.NoError(t, PostOK(h, "/ok", "k1", []byte(`{}`)))
	assert.Equal(t, http.MethodPost, seen.Method)
	assert.Equal(t, "Bearer k1", seen.Header.Get("Authorization"))
	assert.Equal(t, "application/json", seen.Header.Get("Content-Type"))
	assert.ErrorIs(t, seen.Context().Err(), context.Canceled, "the request's context outlived the handler")
	err := PostOK(h, "/nowhere", "k1", nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "status 404")
	assert.Contains(t, err.Error(), "no such route")
}
