package httpapi_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
)

// ExampleNew mounts the API under /analytics/ in a host's own mux, next to
// the host's routes, and runs an endpoint through it.
func ExampleNew() {
	ctx := context.Background()
	events, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		panic(err)
	}
	defer events.Close()
	events.SetMaxOpenConns(1)
	if err := demo.Load(ctx, events, 1000, 1); err != nil {
		panic(err)
	}

	svc, err := endpoint.New(endpoint.Config{
		Endpoints: memstore.New(),
		Variables: variable.NewMemoryStore(),
		Executor:  sqlexec.New(events, engine.SQLite),
	})
	if err != nil {
		panic(err)
	}
	keys := httpapi.NewKeyring()
	if err := keys.Add("analyst-key", "1"); err != nil {
		panic(err)
	}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })
	mux.Handle("/analytics/", httpapi.New(svc, keys, httpapi.WithPrefix("/analytics")))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	post := func(path, body string) map[string]any {
		req, _ := http.NewRequest("POST", srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer analyst-key")
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		defer res.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(res.Body).Decode(&out)
		fmt.Println(res.StatusCode, path)
		return out
	}

	post("/analytics/api/projects/1/insight_variables/",
		`{"id": "0b6e5d4c-3a2b-4c1d-8e9f-0a1b2c3d4e5f", "name": "Event", "type": "String"}`)
	e := post("/analytics/api/projects/1/endpoints/", `{
		"name": "event_count",
		"query": {
			"kind": "HogQLQuery",
			"query": "SELECT count(*) AS n FROM events WHERE event = {variables.event}",
			"variables": {"0b6e5d4c-3a2b-4c1d-8e9f-0a1b2c3d4e5f": {"variableId": "0b6e5d4c-3a2b-4c1d-8e9f-0a1b2c3d4e5f", "code_name": "event"}}
		}
	}`)
	run := post(e["endpoint_path"].(string), `{"variables": {"event": "signed_up"}}`)
	fmt.Println(run["columns"], run["results"])
	missing := post(e["endpoint_path"].(string), `{"variables": {}}`)
	fmt.Println(missing["detail"])
	// Output:
	// 201 /analytics/api/projects/1/insight_variables/
	// 201 /analytics/api/projects/1/endpoints/
	// 200 /analytics/api/projects/1/endpoints/event_count/run
	// [n] [[45]]
	// 400 /analytics/api/projects/1/endpoints/event_count/run
	// Required variable(s) 'event' not provided
}

// ExampleKeyring gives one key one project and another key every project.
func ExampleKeyring() {
	keys := httpapi.NewKeyring()
	_ = keys.Add("key-of-team-a", "1")
	_ = keys.AddAllProjects("admin-key")

	ctx := context.Background()
	fmt.Println(keys.Authorize(ctx, "key-of-team-a", "1"))
	fmt.Println(keys.Authorize(ctx, "key-of-team-a", "2"))
	fmt.Println(keys.Authorize(ctx, "admin-key", "2"))
	fmt.Println(keys.Authorize(ctx, "guess", "1"))
	// Output:
	// <nil>
	// httpapi: API key may not use project "2": endpoint: forbidden
	// <nil>
	// httpapi: unknown API key: endpoint: unauthorized
}
