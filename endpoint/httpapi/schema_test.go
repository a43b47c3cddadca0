package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/embed"
	"github.com/endpointkit/endpointkit/endpoint/endpointtest"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/sql/access"
)

// GET schema lists the tables and columns the project may read with their
// engine types; an embed token may not see them (403).
func TestSchemaRoute(t *testing.T) {
	keys := &embed.StaticKeys{}
	if err := keys.Add("", "k", secretNew); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	signer := &embed.Signer{Keys: keys}
	env := endpointtest.New(t, endpointtest.WithDemoEvents(50),
		endpointtest.WithConfig(func(c *endpoint.Config) {
			p, err := access.NewStatic(access.Rules{Tables: []access.Table{{Name: "events", TenantColumn: "project_id", Columns: []string{"event", "timestamp"}}}}, nil)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			c.Access = p
		}),
		endpointtest.WithHTTPOptions(httpapi.WithEmbedTokens(signer), httpapi.WithLimiter(nil)))

	status, body, _ := send(t, env, "GET", "/api/projects/1/schema", env.Key, "")
	if got, want := status, http.StatusOK; got != want {
		t.Fatalf("%v: status = %v, want %v", body, got, want)
	}
	var got struct {
		Results []endpoint.SchemaTable `json:"results"`
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got, want := got.Results, ([]endpoint.SchemaTable{{Name: "events", Columns: []endpoint.SchemaColumn{{Name: "event", Type: "TEXT"}, {Name: "timestamp", Type: "TEXT"}}}}); !reflect.DeepEqual(got, want) {
		t.Errorf("got.Results = %+v, want %+v", got, want)
	}
	status, _, _ = send(t, env, "GET", "/api/projects/1/schema/", env.Key, "")
	if got, want := status, http.StatusOK; got != want {
		t.Errorf("with a trailing slash too: status = %v, want %v", got, want)
	}

	status, body, _ = send(t, env, "GET", "/api/projects/2/schema", env.Key, "")
	if got, want := status, http.StatusForbidden; got != want {
		t.Errorf("%v: status = %v, want %v", body, got, want)
	}

	ctx := context.Background()
	q := endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT count(*) AS n FROM events"}
	_, err := env.Service.Create(ctx, env.Project, endpoint.CreateRequest{Name: "n", Query: &q})
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	tok, err := env.Service.MintEmbedToken(ctx, signer, env.Project, embed.Claims{Endpoints: []string{"n"}}, time.Hour)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	status, body, _ = send(t, env, "GET", "/api/projects/1/schema", tok, "")
	if got, want := status, http.StatusForbidden; got != want {
		t.Errorf("%v: status = %v, want %v", body, got, want)
	}
	if s, sub := body, "timestamp"; strings.Contains(s, sub) {
		t.Errorf("%q contains %q", s, sub)
	}
}
