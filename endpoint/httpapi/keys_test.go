package httpapi_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/apikey"
	"github.com/endpointkit/endpointkit/endpoint/embed"
	"github.com/endpointkit/endpointkit/endpoint/endpointtest"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/endpoint/sqlstore"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// keysHarness is the harness with stored keys (WithKeys) kept by a
// sqlstore on SQLite, on a clock of their own.
type keysHarness struct {
	*harness
	svc   *endpoint.Service
	keys  *apikey.Keys
	db    *sql.DB
	clock *endpointtest.Clock
}

// newKeysHarness serves the API with stored keys; cfg's Store and Now are
// set here.
func newKeysHarness(t testing.TB, cfg apikey.Config) *keysHarness {
	t.Helper()
	events := openEvents(t, demoEvents)
	svc := newService(t, newExecutor(events))
	t.Cleanup(func() { _ = svc.Close(context.Background()) })
	ring := httpapi.NewKeyring()
	require.NoError(t, ring.Add(keyP1, "1"))
	require.NoError(t, ring.Add(keyP2, "2"))
	require.NoError(t, ring.AddAllProjects(keyAdmin))
	db := testdb.SQLite(t)
	st, err := sqlstore.New(db, engine.SQLite)
	require.NoError(t, err)
	require.NoError(t, st.Migrate(context.Background()))
	c := endpointtest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	cfg.Store, cfg.Now = st.Keys(), c.Now
	keys, err := apikey.New(cfg)
	require.NoError(t, err)
	logs := &bytes.Buffer{}
	hd := httpapi.New(svc, ring, httpapi.WithKeys(keys), httpapi.WithLimiter(nil),
		httpapi.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
	srv := httptest.NewServer(hd)
	t.Cleanup(srv.Close)
	return &keysHarness{harness: &harness{t: t, handler: hd, server: srv, events: events, logs: logs}, svc: svc, keys: keys, db: db, clock: c}
}

// mint creates a key of project through the API with the server's admin
// key and returns its secret and id.
func (h *keysHarness) mint(project string, body map[string]any) (secret, id string) {
	h.t.Helper()
	r := h.do("POST", "/api/projects/"+project+"/keys/", keyAdmin, body)
	mustStatus(h.t, http.StatusCreated, r)
	secret, _ = r.Body["key"].(string)
	id, _ = r.Body["id"].(string)
	require.True(h.t, apikey.LooksLikeKey(secret), "secret %q: apikey.LooksLikeKey(secret) is false", secret)
	return secret, id
}

// keyRouteCase is one route of the table: its request, the status of a key
// that may use it, and the keys that may.
type keyRouteCase struct {
	method, path string
	body         any
	ok           int
	allowed      string
}

// keyRouteTable is every route of the API, in an order in which each one
// that an allowed key may call leaves what the later ones need (deletions
// last). Paths are under /api/projects/1.
var keyRouteTable = []keyRouteCase{
	{"GET", "/insight_variables/", nil, 200, "read readNamed all"},
	{"GET", "/insight_variables/" + idFrom, nil, 200, "read readNamed all"},
	{"POST", "/insight_variables/", map[string]any{"id": idCountry, "name": "Country", "type": "String"}, 201, "write all"},
	{"PATCH", "/insight_variables/" + idCountry, map[string]any{"name": "Land"}, 200, "write all"},
	{"DELETE", "/insight_variables/" + idCountry, nil, 204, "write all"},
	{"GET", "/endpoints/", nil, 200, "read readNamed all"},
	{"GET", "/endpoints/in_range", nil, 200, "read readNamed all"},
	{"GET", "/endpoints/other", nil, 200, "read all"},
	{"POST", "/endpoints/in_range/run", map[string]any{"variables": okVars}, 200, "read readNamed all"},
	{"POST", "/endpoints/other/run", map[string]any{"variables": map[string]any{}}, 200, "read all"},
	{"GET", "/endpoints/in_range/versions", nil, 200, "read readNamed all"},
	{"GET", "/endpoints/in_range/versions/1", nil, 200, "read readNamed all"},
	{"GET", "/endpoints/in_range/openapi.json", nil, 200, "read readNamed all"},
	{"GET", "/endpoints/in_range/logs", nil, 200, "read readNamed all"},
	{"GET", "/endpoints/in_range/materialization_status", nil, 200, "read readNamed all"},
	{"GET", "/endpoints/other/logs", nil, 200, "read all"},
	{"POST", "/endpoints/", map[string]any{"name": "made", "query": sqlQuery("SELECT 2", nil)}, 201, "write all"},
	{"PATCH", "/endpoints/in_range", map[string]any{"description": "d"}, 200, "write writeNamed all"},
	{"PATCH", "/endpoints/other", map[string]any{"description": "d"}, 200, "write all"},
	{"PATCH", "/endpoints/in_range", map[string]any{"name": "renamed_away"}, 200, "write all"},
	{"PATCH", "/endpoints/renamed_away", map[string]any{"name": "in_range"}, 200, "write all"},
	// Reached, and refused by the handler itself: not materialized.
	{"POST", "/endpoints/in_range/materialize", nil, 400, "write writeNamed all"},
	{"POST", "/query/", map[string]any{"query": map[string]any{"kind": "HogQLQuery", "query": "SELECT 1 AS one"}}, 200, "query all"},
	{"GET", "/schema", nil, 200, "query all"},
	// Reached, and answered 404: this server mints no embed tokens.
	{"POST", "/embed_tokens/", map[string]any{"endpoints": []string{"in_range"}}, 404, "admin all"},
	{"GET", "/keys/", nil, 200, "admin all"},
	{"POST", "/keys/", map[string]any{"name": "made", "scopes": []string{"key:admin"}}, 201, "admin all"},
	{"DELETE", "/keys/99999999-9999-4999-8999-999999999999", nil, 404, "admin all"},
	{"GET", "/keys/openapi.json", nil, 200, "admin all"},
	{"DELETE", "/endpoints/other", nil, 204, "write all"},
	{"DELETE", "/endpoints/in_range", nil, 204, "write writeNamed all"},
}

// TestKeyRouteTable: every kind of key on every route, each on a server
// of its own: a key that may use a route reaches its handler (the route's
// own status), any other is refused 403 (401 for a revoked or unknown key),
// and a refused call changes nothing.
func TestKeyRouteTable(t *testing.T) {
	all := []string{"endpoint:read", "endpoint:write", "query:run", "key:admin"}
	kinds := []struct {
		name string
		body map[string]any // nil: the server's own key, or no stored key
		// project mints the key in another project; revoke revokes it.
		project string
		revoke  bool
		want    int // the status of a route it may not use
	}{
		{"read", map[string]any{"scopes": []string{"endpoint:read"}}, "1", false, 403},
		{"write", map[string]any{"scopes": []string{"endpoint:write"}}, "1", false, 403},
		{"query", map[string]any{"scopes": []string{"query:run"}}, "1", false, 403},
		{"admin", map[string]any{"scopes": []string{"key:admin"}}, "1", false, 403},
		{"readNamed", map[string]any{"scopes": []string{"endpoint:read"}, "endpoints": []string{"in_range"}}, "1", false, 403},
		{"writeNamed", map[string]any{"scopes": []string{"endpoint:write"}, "endpoints": []string{"in_range"}}, "1", false, 403},
		{"all", map[string]any{"scopes": all}, "1", false, 403},
		{"otherProject", map[string]any{"scopes": all}, "2", false, 403},
		{"revoked", map[string]any{"scopes": all}, "1", true, 401},
		{"unknown", nil, "", false, 401},
	}
	for _, kind := range kinds {
		t.Run(kind.name, func(t *testing.T) {
			h := newKeysHarness(t, apikey.Config{})
			h.setupRange("1", keyP1)
			mustStatus(t, http.StatusCreated, h.do("POST", "/api/projects/1/endpoints/", keyP1, map[string]any{"name": "other", "query": sqlQuery("SELECT 1", nil)}))
			secret := apikey.Prefix + strings.Repeat("A", 43)
			if kind.body != nil {
				kind.body["name"] = kind.name
				var id string
				secret, id = h.mint(kind.project, kind.body)
				if kind.revoke {
					mustStatus(t, http.StatusNoContent, h.do("DELETE", "/api/projects/1/keys/"+id, keyAdmin, nil))
				}
			}
			for _, c := range keyRouteTable {
				want := kind.want
				if strings.Contains(" "+c.allowed+" ", " "+kind.name+" ") {
					want = c.ok
				}
				r := h.do(c.method, "/api/projects/1"+c.path, secret, c.body)
				got := r.Status
				if !assert.Equal(t, want, got, "%s %s: r.Status = %d, want %d: %s", c.method, c.path, got, want, r.Raw) {
					continue
				}
				if want == 403 || want == 401 {
					s, sub := ([]any{"forbidden", "unauthorized"}), r.Body["code"]
					assert.True(t, slices.Contains(s, sub), "%s %s: %v does not contain %v", c.method, c.path, s, sub)
				}
			}
			// What a refused key could not do is undone by nothing: the
			// endpoints are there exactly when no allowed key deleted them.
			deleted := strings.Contains(" write writeNamed all ", " "+kind.name+" ")
			r := h.do("GET", "/api/projects/1/endpoints/in_range", keyP1, nil)
			assert.Equal(t, map[bool]int{true: 404, false: 200}[deleted], r.Status)
		})
	}
}

// TestKeyRouteTableCoversEveryRoute: the table names every route the
// handler serves, so that a new route cannot escape it (a route with no
// rule is refused to stored keys anyway).
func TestKeyRouteTableCoversEveryRoute(t *testing.T) {
	h := newKeysHarness(t, apikey.Config{})
	secret, _ := h.mint("1", map[string]any{"name": "all", "scopes": []string{"endpoint:read", "endpoint:write", "query:run", "key:admin"}})
	seen := map[string]bool{}
	for _, c := range keyRouteTable {
		seen[c.method+" "+routeShape(c.path)] = true
	}
	// Every route of the other tests' tables.
	for _, route := range []string{
		"GET /insight_variables/", "POST /insight_variables/", "GET /insight_variables/x", "PATCH /insight_variables/x", "DELETE /insight_variables/x",
		"POST /endpoints/", "GET /endpoints/", "GET /endpoints/x", "PATCH /endpoints/x", "DELETE /endpoints/x",
		"POST /endpoints/x/run", "POST /embed_tokens/", "POST /endpoints/x/materialize", "POST /query/", "GET /schema",
		"GET /endpoints/x/versions", "GET /endpoints/x/versions/1", "GET /endpoints/x/openapi.json", "GET /endpoints/x/logs",
		"GET /endpoints/x/materialization_status", "GET /keys/", "POST /keys/", "DELETE /keys/x", "GET /keys/openapi.json",
	} {
		method, path, _ := strings.Cut(route, " ")
		assert.True(t, (seen[method+" "+routeShape(path)]), "route %s is not in keyRouteTable: seen[method+\" \"+routeShape(path)] is false", route)
		// A key with every scope reaches the route: its answer is never
		// the stored keys' "not open" refusal.
		r := h.do(method, "/api/projects/1"+path, secret, nil)
		assert.NotContains(t, r.detail(), "not open to stored API keys", "%v", route)
	}
}

// routeShape replaces the names and ids of a path by x.
func routeShape(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	for i, p := range parts {
		if i == 1 && (parts[0] == "endpoints" || parts[0] == "insight_variables" || parts[0] == "keys" && p != "openapi.json") {
			parts[i] = "x"
		}
		if i == 3 && parts[2] == "versions" {
			parts[i] = "1"
		}
	}
	return "/" + strings.Join(parts, "/")
}

// TestKeyRevokedAtOnce: a revoked key is refused by the next request of
// this process, whatever it cached.
func TestKeyRevokedAtOnce(t *testing.T) {
	h := newKeysHarness(t, apikey.Config{CacheTTL: time.Hour})
	h.setupRange("1", keyP1)
	secret, id := h.mint("1", map[string]any{"name": "ci", "scopes": []string{"endpoint:read"}})
	run := func() response {
		return h.do("POST", "/api/projects/1/endpoints/in_range/run", secret, map[string]any{"variables": okVars})
	}
	mustStatus(t, http.StatusOK, run())
	mustStatus(t, http.StatusNoContent, h.do("DELETE", "/api/projects/1/keys/"+id, keyAdmin, nil))
	r := run()
	mustStatus(t, http.StatusUnauthorized, r)
	assert.Equal(t, "This API key was revoked.", r.detail())
	assert.Contains(t, r.Header.Get("WWW-Authenticate"), "invalid_token")
	// Revoking through another project's path finds nothing.
	mustStatus(t, http.StatusNotFound, h.do("DELETE", "/api/projects/2/keys/"+id, keyAdmin, nil))
	list := h.do("GET", "/api/projects/1/keys/", keyAdmin, nil)
	mustStatus(t, http.StatusOK, list)
	got := list.Body["results"].([]any)[0].(map[string]any)
	if got["revoked_at"] == nil {
		t.Errorf("got[\"revoked_at\"] is nil")
	}
	if got["last_used_at"] == nil {
		t.Errorf("got[\"last_used_at\"] is nil")
	}
}

// TestKeyNeverShown: the secret is in the answer of its creation only;
// the list shows its prefix, never the secret nor its hash, and the table
// keeps the hash, never the secret.
func TestKeyNeverShown(t *testing.T) {
	h := newKeysHarness(t, apikey.Config{})
	secret, id := h.mint("1", map[string]any{"name": "ci", "scopes": []string{"endpoint:read"}, "endpoints": []string{"in_range"}})
	sum := sha256.Sum256([]byte(secret))
	list := h.do("GET", "/api/projects/1/keys/", keyAdmin, nil)
	mustStatus(t, http.StatusOK, list)
	assert.NotContains(t, string(list.Raw), secret[12:])
	s, sub := string(list.Raw), hex.EncodeToString(sum[:])
	assert.NotContains(t, s, sub)
	got := list.Body["results"].([]any)[0].(map[string]any)
	if got, want := got["id"], id; !reflect.DeepEqual(got, want) {
		t.Errorf("got[\"id\"] = %q, want %q", got, want)
	}
	assert.Equal(t, secret[:12], got["prefix"])
	assert.Equal(t, []any{"in_range"}, got["endpoints"])
	assert.Equal(t, "240", got["runs_per_minute"].(interface{ String() string }).String(), "got[\"runs_per_minute\"]")
	assert.Equal(t, "12000", got["materialized_runs_per_hour"].(interface{ String() string }).String(), "got[\"materialized_runs_per_hour\"]")
	// The raw table.
	var hash, prefix string
	require.NoError(t, h.db.QueryRow(`SELECT key_hash, prefix FROM endpointkit_keys WHERE id = ?`, id).Scan(&hash, &prefix))
	if got, want := hash, hex.EncodeToString(sum[:]); got != want {
		t.Errorf("hash = %q, want %q", got, want)
	}
	assert.Equal(t, secret[:12], prefix)
	var n int
	require.NoError(t, h.db.QueryRow(`SELECT count(*) FROM endpointkit_keys WHERE name LIKE ? OR scopes LIKE ? OR endpoints LIKE ? OR key_hash LIKE ?`,
		"%"+secret[12:]+"%", "%"+secret[12:]+"%", "%"+secret[12:]+"%", "%"+secret[12:]+"%").Scan(&n))
	v := n
	assert.Equal(t, 0, v, "the secret is in the table: n")
}

// TestKeyInRunLog: a run by a stored key records the key's id in the run
// log, shown by the logs route; never the secret. A run by the server's
// own key records none.
func TestKeyInRunLog(t *testing.T) {
	h := newKeysHarness(t, apikey.Config{})
	h.setupRange("1", keyP1)
	secret, id := h.mint("1", map[string]any{"name": "ci", "scopes": []string{"endpoint:read"}})
	mustStatus(t, http.StatusOK, h.do("POST", "/api/projects/1/endpoints/in_range/run", secret, map[string]any{"variables": okVars}))
	mustStatus(t, http.StatusOK, h.do("POST", "/api/projects/1/endpoints/in_range/run", keyP1, map[string]any{"variables": okVars}))
	r := h.do("GET", "/api/projects/1/endpoints/in_range/logs", secret, nil)
	mustStatus(t, http.StatusOK, r)
	entries := r.Body["results"].([]any)
	require.Len(t, entries, 2)
	_, ok := entries[0].(map[string]any)["key_id"]
	assert.False(t, ok, "the server key's run, newest: key %v in %v", "key_id", entries[0].(map[string]any))
	assert.Equal(t, id, entries[1].(map[string]any)["key_id"])
	assert.NotContains(t, string(r.Raw), secret[len(apikey.Prefix):])
}

// TestKeyBudgets: a key's runs count against its own budget, a run of a
// materialized endpoint against the materialized one; past it, 429 with
// Retry-After names the budget. Another key, and the server's own key,
// are not held by it.
func TestKeyBudgets(t *testing.T) {
	h := newKeysHarness(t, apikey.Config{})
	h.setupDaily(nil)
	mustStatus(t, http.StatusOK, h.do("POST", "/api/projects/1/endpoints/daily/materialize?wait=true", keyP1, map[string]any{}))
	secret, _ := h.mint("1", map[string]any{"name": "ci", "scopes": []string{"endpoint:read"},
		"runs_per_minute": 2, "materialized_runs_per_minute": 4})
	other, _ := h.mint("1", map[string]any{"name": "other", "scopes": []string{"endpoint:read"}, "runs_per_minute": 2})
	vars := map[string]any{"variables": map[string]any{"from": "2025-01-01", "to": "2026-01-01", "country": "US"}}
	run := func(key, name string) response {
		return h.do("POST", "/api/projects/1/endpoints/"+name+"/run", key, vars)
	}
	for range 2 {
		mustStatus(t, http.StatusOK, run(secret, "inline"))
	}
	r := run(secret, "inline")
	mustStatus(t, http.StatusTooManyRequests, r)
	assert.Equal(t, "throttled", r.Body["code"])
	assert.Contains(t, r.detail(), "key_runs_per_minute")
	assert.Contains(t, r.detail(), "2 runs answered inline per minute")
	assert.NotEqual(t, "", r.Header.Get("Retry-After"), "r.Header.Get(\"Retry-After\") is empty")
	// The materialized budget is apart, and higher.
	for range 4 {
		r := run(secret, "daily")
		mustStatus(t, http.StatusOK, r)
		assert.Equal(t, true, r.Body["endpoint_materialized"])
	}
	r = run(secret, "daily")
	mustStatus(t, http.StatusTooManyRequests, r)
	assert.Contains(t, r.detail(), "key_materialized_runs_per_minute")
	// Other credentials are not held by this key's budget.
	mustStatus(t, http.StatusOK, run(other, "inline"))
	mustStatus(t, http.StatusOK, run(keyP1, "inline"))
	// A minute later, the key runs again.
	h.clock.Advance(2 * time.Minute)
	mustStatus(t, http.StatusOK, run(secret, "inline"))
}

// TestKeyCannotWiden: a key that may create keys gives no scope it lacks
// and no endpoint beyond its own list.
func TestKeyCannotWiden(t *testing.T) {
	h := newKeysHarness(t, apikey.Config{})
	admin, _ := h.mint("1", map[string]any{"name": "a", "scopes": []string{"key:admin", "endpoint:read"}, "endpoints": []string{"in_range"}})
	for _, body := range []map[string]any{
		{"name": "x", "scopes": []string{"endpoint:write"}, "endpoints": []string{"in_range"}},
		{"name": "x", "scopes": []string{"endpoint:read"}},
		{"name": "x", "scopes": []string{"endpoint:read"}, "endpoints": []string{"in_range", "other"}},
	} {
		r := h.do("POST", "/api/projects/1/keys/", admin, body)
		mustStatus(t, http.StatusForbidden, r)
	}
	r := h.do("POST", "/api/projects/1/keys/", admin, map[string]any{"name": "x", "scopes": []string{"endpoint:read"}, "endpoints": []string{"in_range"}})
	mustStatus(t, http.StatusCreated, r)
	// Bad requests name what is wrong.
	for attr, body := range map[string]map[string]any{
		"scopes":          {"name": "x", "scopes": []string{"endpoint:delete"}},
		"name":            {"scopes": []string{"endpoint:read"}},
		"endpoints":       {"name": "x", "scopes": []string{"endpoint:read"}, "endpoints": []string{}},
		"runs_per_minute": {"name": "x", "scopes": []string{"endpoint:read"}, "runs_per_minute": -2},
	} {
		r := h.do("POST", "/api/projects/1/keys/", keyAdmin, body)
		mustStatus(t, http.StatusBadRequest, r)
		got, want := r.Body["attr"], attr
		assert.Equal(t, want, got, "r.Body[\"attr\"]")
	}
}

// TestKeysDisabled: without WithKeys, the key routes answer 404 and a
// secret shaped like a stored key is an unknown key.
func TestKeysDisabled(t *testing.T) {
	h := newHarness(t, nil)
	r := h.do("GET", "/api/projects/1/keys/", keyP1, nil)
	mustStatus(t, http.StatusNotFound, r)
	assert.Contains(t, r.detail(), "not enabled")
	mustStatus(t, http.StatusUnauthorized, h.do("GET", "/api/projects/1/endpoints/", apikey.Prefix+strings.Repeat("A", 43), nil))
}

// TestKeyListFiltered: a key limited to named endpoints lists those only.
func TestKeyListFiltered(t *testing.T) {
	h := newKeysHarness(t, apikey.Config{})
	h.setupRange("1", keyP1)
	mustStatus(t, http.StatusCreated, h.do("POST", "/api/projects/1/endpoints/", keyP1, map[string]any{"name": "other", "query": sqlQuery("SELECT 1", nil)}))
	named, _ := h.mint("1", map[string]any{"name": "n", "scopes": []string{"endpoint:read"}, "endpoints": []string{"in_range", "gone"}})
	r := h.do("GET", "/api/projects/1/endpoints/", named, nil)
	mustStatus(t, http.StatusOK, r)
	list := r.Body["results"].([]any)
	require.Len(t, list, 1)
	assert.Equal(t, "in_range", list[0].(map[string]any)["name"])
	r = h.do("GET", "/api/projects/1/endpoints/", keyP1, nil)
	got, ok := r.Body["results"].([]any)
	if assert.True(t, ok, "len(r.Body[\"results\"]) = %d, want %d: %v", len(got), 2, r.Body["results"]) {
		assert.Len(t, got, 2, "len(r.Body[\"results\"]) = %d, want %d: %v", len(got), 2, r.Body["results"])
	}
}

// TestKeyBudgetQueryRoute: the editor's unsaved queries count against a
// key's inline budget.
func TestKeyBudgetQueryRoute(t *testing.T) {
	h := newKeysHarness(t, apikey.Config{})
	secret, _ := h.mint("1", map[string]any{"name": "q", "scopes": []string{"query:run"}, "runs_per_minute": 1})
	body := map[string]any{"query": map[string]any{"kind": "HogQLQuery", "query": "SELECT 1 AS one"}}
	mustStatus(t, http.StatusOK, h.do("POST", "/api/projects/1/query/", secret, body))
	r := h.do("POST", "/api/projects/1/query/", secret, body)
	mustStatus(t, http.StatusTooManyRequests, r)
	assert.Contains(t, r.detail(), "key_runs_per_minute")
	mustStatus(t, http.StatusOK, h.do("POST", "/api/projects/1/query/", keyP1, body))
}

// TestKeyMintsNoWiderToken: a key:admin key limited to named endpoints
// (and that may run them: endpoint:read) mints embed tokens for those
// only, and its tokens run them.
func TestKeyMintsNoWiderToken(t *testing.T) {
	tokenKeys := &embed.StaticKeys{}
	require.NoError(t, tokenKeys.Add("", "k1", []byte(strings.Repeat("s", 32))))
	keys, err := apikey.New(apikey.Config{Store: memstore.NewKeyStore()})
	require.NoError(t, err)
	env := endpointtest.New(t, endpointtest.WithDemoEvents(100),
		endpointtest.WithHTTPOptions(httpapi.WithEmbedTokens(&embed.Signer{Keys: tokenKeys}), httpapi.WithKeys(keys), httpapi.WithLimiter(nil)))
	for _, name := range []string{"mine", "theirs"} {
		st, body := env.Do(t, "POST", "/endpoints/", `{"name": "`+name+`", "query": {"kind": "HogQLQuery", "query": "SELECT 1 AS one"}}`)
		got, want := st, 201
		require.Equal(t, want, got, "%v: st", body)
	}
	_, secret, err := keys.Create(context.Background(), env.Project, apikey.CreateRequest{
		Name: "minter", Scopes: []string{apikey.ScopeKeyAdmin, apikey.ScopeEndpointRead}, Endpoints: []string{"mine"}})
	require.NoError(t, err)
	as := *env
	as.Key = secret
	st, body := as.Do(t, "POST", "/embed_tokens/", `{"endpoints": ["mine", "theirs"]}`)
	got, want := st, 403
	assert.Equal(t, want, got, "%v: st", body)
	assert.Contains(t, body, "theirs")
	st, body = as.Do(t, "POST", "/embed_tokens/", `{"endpoints": ["mine"]}`)
	if got, want := st, 201; got != want {
		t.Fatalf("%v: st = %v, want %v", body, got, want)
	}
	var tok struct{ Token string }
	require.NoError(t, json.Unmarshal([]byte(body), &tok))
	as.Key = tok.Token
	st, body = as.Do(t, "POST", "/endpoints/mine/run", `{}`)
	if got, want := st, 200; got != want {
		t.Errorf("%v: st = %v, want %v", body, got, want)
	}
	st, _ = as.Do(t, "POST", "/endpoints/theirs/run", `{}`)
	assert.Equal(t, 403, st)
}

// grantsEnv serves stored keys and embed tokens over two endpoints, mine
// and theirs, with no project limits; as(secret) is the Env acting with
// another credential.
func grantsEnv(t *testing.T) (env *endpointtest.Env, as func(secret string) *endpointtest.Env) {
	t.Helper()
	tokenKeys := &embed.StaticKeys{}
	require.NoError(t, tokenKeys.Add("", "k1", []byte(strings.Repeat("s", 32))))
	keys, err := apikey.New(apikey.Config{Store: memstore.NewKeyStore()})
	require.NoError(t, err)
	env = endpointtest.New(t, endpointtest.WithHTTPOptions(httpapi.WithEmbedTokens(&embed.Signer{Keys: tokenKeys}),
		httpapi.WithKeys(keys), httpapi.WithLimiter(nil)))
	for _, name := range []string{"mine", "theirs"} {
		st, body := env.Do(t, "POST", "/endpoints/", `{"name": "`+name+`", "query": {"kind": "HogQLQuery", "query": "SELECT 1 AS one"}}`)
		require.Equal(t, 201, st, "%s: st", body)
	}
	return env, func(secret string) *endpointtest.Env {
		e := *env
		e.Key = secret
		return &e
	}
}

// answer is a JSON answer's fields these tests read.
type answer struct {
	Detail string `json:"detail"`
	Code   string `json:"code"`
	Attr   string `json:"attr"`
	ID     string `json:"id"`
	Key    string `json:"key"`
	Token  string `json:"token"`
	RPM    *int   `json:"rpm"`
}

// grantSend sends body as e and decodes the answer, failing t unless its
// status is want.
func grantSend(t *testing.T, e *endpointtest.Env, method, path, body string, want int) answer {
	t.Helper()
	st, raw := e.Do(t, method, path, body)
	require.Equal(t, want, st, "%s %s %s: status %d, want %d: %s", method, path, body, st, want, raw)
	var a answer
	if raw != "" {
		require.NoError(t, json.Unmarshal([]byte(raw), &a), "%s", raw)
	}
	return a
}

// keyBody is the body of a key within boundedAdminBody (endpoint:read on
// mine, budgets 1, 10, 2 and 20) with the fields of edit (nil: left out).
func keyBody(edit map[string]any) string {
	m := map[string]any{"name": "made", "scopes": []string{"endpoint:read"}, "endpoints": []string{"mine"},
		"runs_per_minute": 1, "runs_per_hour": 10, "materialized_runs_per_minute": 2, "materialized_runs_per_hour": 20}
	for k, v := range edit {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// boundedAdminBody is a key:admin key that may run endpoint mine only, at
// budgets 1, 10, 2 and 20.
const boundedAdminBody = `{"name": "admin", "scopes": ["key:admin", "endpoint:read"], "endpoints": ["mine"],
	"runs_per_minute": 1, "runs_per_hour": 10, "materialized_runs_per_minute": 2, "materialized_runs_per_hour": 20}`

// TestKeyGrantsNeverWidenHTTP: over HTTP, a key:admin key creates no key
// with a scope, an endpoint or a budget it lacks (each of the four; 0 as
// the host's default, -1 as no limit), each a 403 whose attr names the
// field; a key within it is made, and runs within its budget.
func TestKeyGrantsNeverWidenHTTP(t *testing.T) {
	env, as := grantsEnv(t)
	admin := as(grantSend(t, env, "POST", "/keys/", boundedAdminBody, 201).Key)
	for _, c := range []struct {
		body, attr, detail string
	}{
		{keyBody(map[string]any{"scopes": []string{"endpoint:write"}}), "scopes", "'endpoint:write'"},
		{keyBody(map[string]any{"scopes": []string{"endpoint:read", "query:run"}}), "scopes", "'query:run'"},
		{keyBody(map[string]any{"endpoints": nil}), "endpoints", "limited to named endpoints"},
		{keyBody(map[string]any{"endpoints": []string{"mine", "theirs"}}), "endpoints", "'theirs'"},
		{keyBody(map[string]any{"runs_per_minute": -1}), "runs_per_minute",
			"This API key may start 1 run answered inline per minute (runs_per_minute 1); the key it creates may not allow more (runs_per_minute -1 = no limit)."},
		{keyBody(map[string]any{"runs_per_minute": 0}), "runs_per_minute", "(runs_per_minute 0 = the host's default, 240)"},
		{keyBody(map[string]any{"runs_per_minute": 2}), "runs_per_minute", "(runs_per_minute 2)"},
		{keyBody(map[string]any{"runs_per_hour": -1}), "runs_per_hour", "runs_per_hour -1 = no limit"},
		{keyBody(map[string]any{"runs_per_hour": 11}), "runs_per_hour", "(runs_per_hour 11)"},
		{keyBody(map[string]any{"materialized_runs_per_minute": 0}), "materialized_runs_per_minute", "the host's default, 1200"},
		{keyBody(map[string]any{"materialized_runs_per_minute": 3}), "materialized_runs_per_minute", "(materialized_runs_per_minute 3)"},
		{keyBody(map[string]any{"materialized_runs_per_hour": -1}), "materialized_runs_per_hour", "-1 = no limit"},
		{keyBody(map[string]any{"materialized_runs_per_hour": 21}), "materialized_runs_per_hour", "(materialized_runs_per_hour 21)"},
	} {
		a := grantSend(t, admin, "POST", "/keys/", c.body, http.StatusForbidden)
		if a.Code != endpoint.CodeForbidden || a.Attr != c.attr || !strings.Contains(a.Detail, c.detail) {
			t.Errorf("%s: got %+v, want forbidden, attr %q, a detail containing %q", c.body, a, c.attr, c.detail)
		}
	}
	// Within it: the same, or less.
	grantSend(t, admin, "POST", "/keys/", keyBody(map[string]any{"scopes": []string{"key:admin", "endpoint:read"}}), 201)
	made := as(grantSend(t, admin, "POST", "/keys/", keyBody(map[string]any{"runs_per_hour": 5, "materialized_runs_per_hour": 7}), 201).Key)
	// It runs within the budget it was given, not past it.
	grantSend(t, made, "POST", "/endpoints/mine/run", `{}`, 200)
	grantSend(t, made, "POST", "/endpoints/mine/run", `{}`, 429)
	// The server's own key gives anything.
	grantSend(t, env, "POST", "/keys/", `{"name": "free", "scopes": ["endpoint:read"], "runs_per_minute": -1}`, 201)
}

// TestKeyMintsTokenWithinHTTP: over HTTP, a key's embed token runs only
// endpoints the key may run (and only if it may run any: endpoint:read),
// with an rpm within the key's budgets; one asked without rpm carries the
// key's, and is held to it. The server's own key mints any.
func TestKeyMintsTokenWithinHTTP(t *testing.T) {
	env, as := grantsEnv(t)
	// A token's rpm allows 60 times as many runs per hour: under 60 runs
	// an hour, a key mints no token.
	a := grantSend(t, as(grantSend(t, env, "POST", "/keys/", boundedAdminBody, 201).Key), "POST", "/embed_tokens/", `{"endpoints": ["mine"]}`, http.StatusForbidden)
	if assert.Equal(t, "rpm", a.Attr, "a key of 10 runs an hour: got %+v, want rpm: %q", a, "This API key may start 10 runs answered inline per hour (runs_per_hour 10); the embed token it mints may not allow more (rpm 1 = 60 runs per hour).") {
		assert.Equal(t, "This API key may start 10 runs answered inline per hour (runs_per_hour 10); the embed token it mints may not allow more (rpm 1 = 60 runs per hour).", a.Detail, "a key of 10 runs an hour: got %+v, want rpm: %q", a, "This API key may start 10 runs answered inline per hour (runs_per_hour 10); the embed token it mints may not allow more (rpm 1 = 60 runs per hour).")
	}
	admin := as(grantSend(t, env, "POST", "/keys/", keyBody(map[string]any{"name": "admin", "scopes": []string{"key:admin", "endpoint:read"},
		"runs_per_hour": 60, "materialized_runs_per_hour": 120}), 201).Key)
	for _, c := range []struct {
		body, attr, detail string
	}{
		{`{"endpoints": ["theirs"]}`, "endpoints", "'theirs'"},
		{`{"endpoints": ["mine", "theirs"], "rpm": 1}`, "endpoints", "'theirs'"},
		{`{"endpoints": ["mine"], "rpm": 2}`, "rpm", "This API key may start 1 run answered inline per minute (runs_per_minute 1); the embed token it mints may not allow more (rpm 2)."},
	} {
		a := grantSend(t, admin, "POST", "/embed_tokens/", c.body, http.StatusForbidden)
		if a.Code != endpoint.CodeForbidden || a.Attr != c.attr || !strings.Contains(a.Detail, c.detail) {
			t.Errorf("%s: got %+v, want forbidden, attr %q, a detail containing %q", c.body, a, c.attr, c.detail)
		}
	}
	// A key that may not run endpoints mints no token that does.
	adminOnly := as(grantSend(t, env, "POST", "/keys/", `{"name": "a", "scopes": ["key:admin"]}`, 201).Key)
	a = grantSend(t, adminOnly, "POST", "/embed_tokens/", `{"endpoints": ["mine"]}`, http.StatusForbidden)
	if assert.Equal(t, "endpoints", a.Attr, "a key:admin key without endpoint:read: got %+v", a) {
		assert.Contains(t, a.Detail, "'endpoint:read'", "a key:admin key without endpoint:read: got %+v", a)
	}
	// Without rpm: the key's, 1, and the token is held to it.
	a = grantSend(t, admin, "POST", "/embed_tokens/", `{"endpoints": ["mine"]}`, 201)
	require.NotNil(t, a.RPM, "the token's rpm: %v, want 1", a.RPM)
	require.Equal(t, 1, *a.RPM, "the token's rpm: %v, want 1", a.RPM)
	token := as(a.Token)
	grantSend(t, token, "POST", "/endpoints/mine/run", `{}`, 200)
	grantSend(t, token, "POST", "/endpoints/mine/run", `{}`, 429)
	grantSend(t, admin, "POST", "/embed_tokens/", `{"endpoints": ["mine"], "rpm": 1}`, 201)
	// A token mints nothing (so its fixed variables are never widened).
	a = grantSend(t, token, "POST", "/embed_tokens/", `{"endpoints": ["mine"], "rpm": 1}`, http.StatusForbidden)
	assert.Equal(t, endpoint.CodeForbidden, a.Code, "a token minting: got %+v", a)
	// The server's own key: no rpm stays none.
	if a := grantSend(t, env, "POST", "/embed_tokens/", `{"endpoints": ["mine", "theirs"]}`, 201); a.RPM == nil || *a.RPM != 0 {
		t.Errorf("the server's key's token rpm: %v, want 0", a.RPM)
	}
}

// TestKeyRevokesNoWiderKeyHTTP: over HTTP, a key:admin key limited to one
// endpoint revokes no key that may run every endpoint (nor one of a
// scope or a budget it lacks): 403 naming it, and the key still works; it
// revokes a narrower one (204, then 401).
func TestKeyRevokesNoWiderKeyHTTP(t *testing.T) {
	env, as := grantsEnv(t)
	admin := as(grantSend(t, env, "POST", "/keys/", boundedAdminBody, 201).Key)
	for _, c := range []struct{ body, attr string }{
		{keyBody(map[string]any{"endpoints": nil}), "endpoints"},
		{keyBody(map[string]any{"scopes": []string{"endpoint:write"}}), "scopes"},
		{keyBody(map[string]any{"runs_per_minute": -1}), "runs_per_minute"},
		{keyBody(map[string]any{"materialized_runs_per_hour": 0}), "materialized_runs_per_hour"},
	} {
		wide := grantSend(t, env, "POST", "/keys/", c.body, 201)
		a := grantSend(t, admin, "DELETE", "/keys/"+wide.ID, "", http.StatusForbidden)
		if a.Code != endpoint.CodeForbidden || a.Attr != c.attr || !strings.Contains(a.Detail, "the key it revokes") {
			t.Errorf("%s: got %+v, want forbidden naming %q", c.body, a, c.attr)
		}
		st, body := as(wide.Key).Do(t, "GET", "/endpoints/", "")
		assert.NotEqual(t, http.StatusUnauthorized, st, "%s: the wider key was revoked %s", c.body, body)
	}
	k := grantSend(t, env, "POST", "/keys/", keyBody(nil), 201)
	grantSend(t, admin, "DELETE", "/keys/"+k.ID, "", http.StatusNoContent)
	grantSend(t, as(k.Key), "GET", "/endpoints/", "", http.StatusUnauthorized)
}

// FuzzKeyRequests: any body to the key routes, and any bearer shaped or
// not like a stored key, is answered with a JSON status below 500; a
// created key holds no more than the body asked for, and an unknown
// secret never authenticates.
func FuzzKeyRequests(f *testing.F) {
	for _, s := range []string{
		`{"name": "ci", "scopes": ["endpoint:read"]}`,
		`{"name": "ci", "scopes": ["endpoint:read", "endpoint:read"], "endpoints": ["a", "a"], "runs_per_minute": -1}`,
		`{"name": " ", "scopes": []}`,
		`{"name": "x", "scopes": ["key:admin"], "endpoints": []}`,
		`{"name": "x", "scopes": ["endpoint:write"], "endpoints": ["1bad"], "materialized_runs_per_hour": -2}`,
		`{"name": "x", "scopes": null, "runs_per_hour": 1e40}`,
		`{"name": "` + strings.Repeat("é", 201) + `", "scopes": ["query:run"]}`,
		`{"name": "x", "scopes": ["endpoint:read"], "key": "ekk_chosen"}`,
		`[]`, `null`, `{`, "{\"name\": \"\xff\"}",
	} {
		f.Add([]byte(s), apikey.Prefix+strings.Repeat("A", 43))
	}
	f.Add([]byte(`{}`), "ekk_short")
	h := newKeysHarness(f, apikey.Config{})
	serve := func(t *testing.T, method, path, bearer string, body []byte) (int, map[string]any, string) {
		req := httptest.NewRequest(method, path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+bearer)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.handler.ServeHTTP(rec, req)
		var got map[string]any
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got), "%s %s: %d with a body that is not JSON: %q", method, path, rec.Code, rec.Body)
		return rec.Code, got, rec.Body.String()
	}
	f.Fuzz(func(t *testing.T, body []byte, bearer string) {
		status, got, raw := serve(t, "POST", "/api/projects/1/keys/", keyAdmin, body)
		require.Less(t, status, 500, "POST keys/ %q %s", body, raw)
		if status == http.StatusCreated {
			secret, _ := got["key"].(string)
			require.True(t, apikey.LooksLikeKey(secret), "created key's secret %q from %q", secret, body)
			require.NotContains(t, string(body), secret, "created key's secret %q from %q", secret, body)
			for _, s := range got["scopes"].([]any) {
				require.Contains(t, string(body), s.(string), "scope %v not asked for in %q", s, body)
			}
		}
		if strings.ContainsAny(bearer, " \t\r\n\x00\x7f") || bearer == "" {
			return
		}
		status, _, raw = serve(t, "GET", "/api/projects/1/endpoints/", bearer, nil)
		if status != http.StatusUnauthorized && bearer != keyP1 && bearer != keyP2 && bearer != keyAdmin {
			t.Fatalf("bearer %q: %d %s", bearer, status, raw)
		}
	})
}

// TestKeysOpenAPI: the key routes' document is valid OpenAPI, and the
// server's real requests and answers (create, list, revoke, a refusal)
// are valid by it.
func TestKeysOpenAPI(t *testing.T) {
	h := newKeysHarness(t, apikey.Config{})
	admin, _ := h.mint("1", map[string]any{"name": "admin", "scopes": []string{"key:admin", "endpoint:read"}})
	r := h.do("GET", "/api/projects/1/keys/openapi.json", admin, nil)
	mustStatus(t, http.StatusOK, r)
	doc, err := openapi3.NewLoader().LoadFromData(r.Raw)
	require.NoError(t, err)
	require.NoError(t, doc.Validate(context.Background()), "%s", r.Raw)
	router, err := legacy.NewRouter(doc)
	require.NoError(t, err)

	check := func(method, path, body string, wantStatus int) []byte {
		t.Helper()
		req := httptest.NewRequest(method, path, bytes.NewReader([]byte(body)))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Authorization", "Bearer "+admin)
		route, params, err := router.FindRoute(req)
		require.NoError(t, err, "%s %s", method, path)
		in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
		if wantStatus < 400 {
			require.NoError(t, openapi3filter.ValidateRequest(context.Background(), in))
		}
		rec := httptest.NewRecorder()
		req = httptest.NewRequest(method, path, bytes.NewReader([]byte(body)))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Authorization", "Bearer "+admin)
		h.handler.ServeHTTP(rec, req)
		got, want := rec.Code, wantStatus
		require.Equal(t, want, got, "%s %s: %s: rec.Code", method, path, rec.Body)
		raw, _ := io.ReadAll(rec.Result().Body)
		require.NoError(t, openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
			RequestValidationInput: in, Status: rec.Code, Header: rec.Header(), Body: io.NopCloser(bytes.NewReader(raw)),
		}), "%s %s answered %s", method, path, raw)
		return raw
	}
	check("POST", "/api/projects/1/keys/", `{"name": "ci", "scopes": ["endpoint:read"], "endpoints": ["daily"], "runs_per_minute": 10}`, 201)
	check("POST", "/api/projects/1/keys/", `{"name": "ci", "scopes": ["endpoint:read"]}`, 201)
	check("GET", "/api/projects/1/keys/", "", 200)
	check("POST", "/api/projects/1/keys/", `{"name": "wide", "scopes": ["endpoint:write"]}`, 403)
	check("DELETE", "/api/projects/1/keys/99999999-9999-4999-8999-999999999999", "", 404)
	list := h.do("GET", "/api/projects/1/keys/", admin, nil)
	var id string
	for _, k := range list.Body["results"].([]any) {
		if k := k.(map[string]any); k["name"] == "ci" {
			id = k["id"].(string)
		}
	}
	check("DELETE", "/api/projects/1/keys/"+id, "", 204)
	// A request the document refuses, the server refuses too.
	req := httptest.NewRequest("POST", "/api/projects/1/keys/", bytes.NewReader([]byte(`{"name": "x", "scopes": ["endpoint:delete"]}`)))
	req.Header.Set("Content-Type", "application/json")
	route, params, err := router.FindRoute(req)
	require.NoError(t, err)
	require.Error(t, openapi3filter.ValidateRequest(context.Background(), &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}))
	mustStatus(t, http.StatusBadRequest, h.do("POST", "/api/projects/1/keys/", admin, map[string]any{"name": "x", "scopes": []string{"endpoint:delete"}}))
}
