package endpointtest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/variable"
)

// saveCount saves an endpoint counting the events of one name.
func saveCount(t *testing.T, env *Env) {
	t.Helper()
	ctx := context.Background()
	v, err := env.Service.CreateVariable(ctx, env.Project, variable.Variable{Name: "Event", Type: variable.String})
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	q := endpoint.Query{
		Kind:      endpoint.KindSQL,
		SQL:       "SELECT count(*) AS n FROM events WHERE event = {variables.event}",
		Variables: map[string]endpoint.VariableRef{v.ID: {VariableID: v.ID, CodeName: "event"}},
	}
	_, err = env.Service.Create(ctx, env.Project, endpoint.CreateRequest{Name: "event_count", Query: &q})
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
}

// A host handler that wraps a run, tested the way a host would.
func TestHostHandlerAroundTheService(t *testing.T) {
	env := New(t, WithDemoEvents(3000))
	saveCount(t, env)
	var direct int64
	if err := env.DB.QueryRow("SELECT count(*) FROM events WHERE event = 'purchase'").Scan(&direct); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if v := direct; v == 0 {
		t.Fatalf("the demo data has purchases: direct is zero")
	}

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
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got, want := got.Purchases, direct; got != want {
		t.Errorf("got.Purchases = %v, want %v", got, want)
	}

	status, body := env.Do(t, "POST", "/endpoints/event_count/run/", `{"variables": {"event": "purchase"}}`)
	if got, want := status, http.StatusOK; got != want {
		t.Fatalf("%v: status = %v, want %v", body, got, want)
	}
	var run struct{ Results [][]int64 }
	if err := json.Unmarshal([]byte(body), &run); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got, want := run.Results, ([][]int64{{direct}}); !reflect.DeepEqual(got, want) {
		t.Errorf("HTTP and Go API agree: run.Results = %+v, want %+v", got, want)
	}
}

func TestOptions(t *testing.T) {
	env := New(t, WithProject("acme"), WithKey("k-123"), WithConfig(func(c *endpoint.Config) { c.DefaultLimit = 1 }))
	if got, want := env.Project, "acme"; got != want {
		t.Errorf("env.Project = %q, want %q", got, want)
	}
	if got, want := env.URL("/endpoints/"), env.Server.URL+"/api/projects/acme/endpoints/"; got != want {
		t.Errorf("env.URL(\"/endpoints/\") = %q, want %q", got, want)
	}
	saveCount(t, env)
	var n int
	if err := env.DB.QueryRow("SELECT count(*) FROM events").Scan(&n); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if v := n; v != 0 {
		t.Errorf("without WithDemoEvents the events table is empty: n = %v, want zero", v)
	}

	status, body := env.Do(t, "GET", "/endpoints/", "")
	if got, want := status, http.StatusOK; got != want {
		t.Fatalf("%v: status = %v, want %v", body, got, want)
	}
	if s, sub := body, "event_count"; !strings.Contains(s, sub) {
		t.Errorf("%q does not contain %q", s, sub)
	}

	env.Key = "wrong"
	status, _ = env.Do(t, "GET", "/endpoints/", "")
	if got, want := status, http.StatusUnauthorized; got != want {
		t.Errorf("only the configured key opens the API: status = %v, want %v", got, want)
	}
}
