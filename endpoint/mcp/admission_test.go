package mcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/apikey"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/endpoint/mcp"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// keyFixture is newFixture's /mcp with stored keys (mcp.WithKeys) and a
// materialized endpoint "mat" at version 2 whose table is built.
type keyFixture struct {
	*fixture
	keys *apikey.Keys
}

func newKeyFixture(t *testing.T) *keyFixture {
	t.Helper()
	f := newFixture(t)
	ctx := context.Background()
	svc := f.env.Service
	keys, err := apikey.New(apikey.Config{Store: memstore.NewKeyStore()})
	require.NoError(t, err, "apikey.New")
	const sql = "SELECT event, count(*) AS events FROM events GROUP BY event"
	if _, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "mat", IsMaterialized: true,
		Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: sql}}); err != nil {
		t.Fatalf("Create: %v", err)
	}
	if _, err := svc.Update(ctx, "1", "mat", endpoint.UpdateRequest{
		Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: strings.Replace(sql, "count(*)", "count(1)", 1)}}); err != nil {
		t.Fatalf("Update: %v", err)
	}
	require.NoError(t, svc.Materialize(ctx, "1", "mat"), "Materialize")
	srv := httptest.NewServer(mcp.Handler(svc, httpapi.NewKeyring(), mcp.WithKeys(keys), mcp.WithLimiter(nil), mcp.WithDefaultProject("1")))
	t.Cleanup(srv.Close)
	return &keyFixture{fixture: &fixture{env: f.env, mcp: srv, signer: f.signer}, keys: keys}
}

// key creates a stored key of project 1 as req asks and returns its
// secret.
func (f *keyFixture) key(t *testing.T, req apikey.CreateRequest) string {
	t.Helper()
	_, secret, err := f.keys.Create(context.Background(), "1", req)
	require.NoError(t, err, "Keys.Create")
	return secret
}

// wantThrottled checks that r is the tool error of the budget named limit.
func wantThrottled(t *testing.T, r refusal, limit string) {
	t.Helper()
	if r.Status != http.StatusTooManyRequests || r.Code != endpoint.CodeThrottled || !strings.Contains(r.Detail, limit) {
		t.Errorf("refusal = %+v, want a 429 %s naming %s", r, endpoint.CodeThrottled, limit)
	}
}

// TestMCPKeyBudgetChargesWhatAnswers: over /mcp, as over the HTTP API, a
// stored key's run of an older version of a materialized endpoint is
// computed inline and charged to its inline budget; the current version,
// read from the stored table, to its materialized budget.
func TestMCPKeyBudgetChargesWhatAnswers(t *testing.T) {
	f := newKeyFixture(t)
	secret := f.key(t, apikey.CreateRequest{Name: "agent", Scopes: []string{apikey.ScopeEndpointRead},
		RunsPerMinute: 1, MaterializedRunsPerMinute: 1000})
	s := f.connectHTTP(t, secret, "")
	r := call(t, s, "mat", `{"version": 1}`)
	if r.IsError {
		t.Fatalf("version 1: %s", text(r))
	}
	if got := structured(t, r)["endpoint_materialized"]; got != false {
		t.Errorf("version 1: endpoint_materialized = %v, want false", got)
	}
	wantThrottled(t, toolRefusal(t, call(t, s, "mat", `{"version": 1}`)), apikey.LimitRunsPerMinute)
	for range 3 {
		r := call(t, s, "mat", `{}`)
		if r.IsError {
			t.Fatalf("current version: %s", text(r))
		}
		if got := structured(t, r)["endpoint_materialized"]; got != true {
			t.Errorf("current version: endpoint_materialized = %v, want true", got)
		}
	}

	tight := f.connectHTTP(t, f.key(t, apikey.CreateRequest{Name: "tight", Scopes: []string{apikey.ScopeEndpointRead},
		RunsPerMinute: 1000, MaterializedRunsPerMinute: 1}), "")
	if r := call(t, tight, "mat", `{}`); r.IsError {
		t.Fatalf("current version: %s", text(r))
	}
	wantThrottled(t, toolRefusal(t, call(t, tight, "mat", `{}`)), apikey.LimitMaterializedRunsPerMinute)
	if r := call(t, tight, "mat", `{"version": 1}`); r.IsError {
		t.Fatalf("version 1 on the inline budget: %s", text(r))
	}
}

// TestMCPKeyBudgetSharedWithHTTP: one Keys behind the HTTP API and /mcp
// holds a key to one budget across both.
func TestMCPKeyBudgetSharedWithHTTP(t *testing.T) {
	f := newKeyFixture(t)
	secret := f.key(t, apikey.CreateRequest{Name: "both", Scopes: []string{apikey.ScopeEndpointRead, apikey.ScopeQueryRun},
		RunsPerMinute: 2})
	api := httptest.NewServer(httpapi.New(f.env.Service, httpapi.NewKeyring(), httpapi.WithKeys(f.keys), httpapi.WithLimiter(nil)))
	t.Cleanup(api.Close)
	env := *f.env
	env.Server = api
	g := &fixture{env: &env, mcp: f.mcp, signer: f.signer}
	status, _ := g.httpDo(t, "POST", "/api/projects/1/endpoints/mat/run", secret, `{"version": 1}`)
	require.Equal(t, http.StatusOK, status, "HTTP run: status")
	s := f.connectHTTP(t, secret, "")
	if r := call(t, s, mcp.QueryTool, `{"query": {"kind": "HogQLQuery", "query": "SELECT 1 AS one"}}`); r.IsError {
		t.Fatalf("_run_query: %s", text(r))
	}
	wantThrottled(t, toolRefusal(t, call(t, s, "mat", `{"version": 1}`)), apikey.LimitRunsPerMinute)
}

// TestMCPKeyRules: a stored key over /mcp sees and runs only what its
// scopes and endpoints allow, refused in the HTTP API's words.
func TestMCPKeyRules(t *testing.T) {
	f := newKeyFixture(t)
	named := f.connectHTTP(t, f.key(t, apikey.CreateRequest{Name: "named", Scopes: []string{apikey.ScopeEndpointRead},
		Endpoints: []string{"mat"}}), "")
	if r := call(t, named, "mat", `{}`); r.IsError {
		t.Fatalf("mat: %s", text(r))
	}
	got := toolRefusal(t, call(t, named, "totals", `{}`))
	assert.Equal(t, http.StatusForbidden, got.Status, "totals for a key limited to mat: %+v, want 403", got)
	if got := toolRefusal(t, call(t, named, mcp.QueryTool, `{"query": {"kind": "HogQLQuery", "query": "SELECT 1"}}`)); got.Status != http.StatusForbidden || !strings.Contains(got.Detail, apikey.ScopeQueryRun) {
		t.Errorf("_run_query without query:run: %+v, want 403 naming the scope", got)
	}
	list := structured(t, call(t, named, mcp.ListTool, `{}`))
	rs, _ := list["results"].([]any)
	assert.Len(t, rs, 1, "_list_endpoints for a key limited to mat: %v, want mat only", list)
	writer := f.connectHTTP(t, f.key(t, apikey.CreateRequest{Name: "writer", Scopes: []string{apikey.ScopeEndpointWrite}}), "")
	if got := toolRefusal(t, call(t, writer, "mat", `{}`)); got.Status != http.StatusForbidden || !strings.Contains(got.Detail, apikey.ScopeEndpointRead) {
		t.Errorf("a run without endpoint:read: %+v, want 403 naming the scope", got)
	}
	// A key of project 1 asking for project 2 is refused before the tools.
	req, err := http.NewRequest("POST", f.mcp.URL+"/mcp?project=2", strings.NewReader(`{}`))
	require.NoError(t, err, "NewRequest")
	req.Header.Set("Authorization", "Bearer "+f.key(t, apikey.CreateRequest{Name: "p1", Scopes: []string{apikey.ScopeEndpointRead}}))
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err, "Do")
	res.Body.Close()
	assert.Equal(t, http.StatusForbidden, res.StatusCode, "a key of project 1 on project 2: status")
}
