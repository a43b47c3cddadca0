package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/embed"
	"github.com/endpointkit/endpointkit/endpoint/endpointtest"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// GET schema lists the tables and columns the project may read with their
// engine types; an embed token may not see them (403).
func TestSchemaRoute(t *testing.T) {
	keys := &embed.StaticKeys{}
	require.NoError(t, keys.Add("", "k", secretNew))
	signer := &embed.Signer{Keys: keys}
	env := endpointtest.New(t, endpointtest.WithDemoEvents(50),
		endpointtest.WithConfig(func(c *endpoint.Config) {
			p, err := access.NewStatic(access.Rules{Tables: []access.Table{{Name: "events", TenantColumn: "project_id", Columns: []string{"event", "timestamp"}}}}, nil)
			require.NoError(t, err)
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
	require.NoError(t, json.Unmarshal([]byte(body), &got))
	assert.Equal(t, []endpoint.SchemaTable{{Name: "events", Columns: []endpoint.SchemaColumn{{Name: "event", Type: "TEXT"}, {Name: "timestamp", Type: "TEXT"}}}}, got.Results)
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
	require.NoError(t, err)
	tok, err := env.Service.MintEmbedToken(ctx, signer, env.Project, embed.Claims{Endpoints: []string{"n"}}, time.Hour)
	require.NoError(t, err)
	status, body, _ = send(t, env, "GET", "/api/projects/1/schema", tok, "")
	if got, want := status, http.StatusForbidden; got != want {
		t.Errorf("%v: status = %v, want %v", body, got, want)
	}
	assert.NotContains(t, body, "timestamp")
}
