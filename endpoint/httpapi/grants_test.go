package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/apikey"
	"github.com/endpointkit/endpointkit/endpoint/embed"
	"github.com/endpointkit/endpointkit/endpoint/endpointtest"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
