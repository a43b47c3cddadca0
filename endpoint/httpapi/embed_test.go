package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/embed"
	"github.com/endpointkit/endpointkit/endpoint/endpointtest"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/internal/heldexec"
	"github.com/endpointkit/endpointkit/variable"
)

var (
	secretOld = []byte("embed-secret-old-0123")
	secretNew = []byte("embed-secret-new-4567")
)

// embedEnv serves project 1 with two endpoints on the demo events, tokens
// signed with kid "old" or "new".
func embedEnv(t *testing.T) (*endpointtest.Env, *embed.Signer, *embed.StaticKeys, *heldexec.Fake) {
	t.Helper()
	keys := &embed.StaticKeys{}
	require.NoError(t, keys.Add("", "old", secretOld))
	require.NoError(t, keys.Add("", "new", secretNew))
	signer := &embed.Signer{Keys: keys}
	var exec *heldexec.Fake // counts the queries that reach the database
	env := endpointtest.New(t, endpointtest.WithDemoEvents(500),
		endpointtest.WithConfig(func(c *endpoint.Config) { exec = heldexec.NewFake(c.Executor); c.Executor = exec }),
		endpointtest.WithHTTPOptions(httpapi.WithEmbedTokens(signer), httpapi.WithLimiter(nil)))
	ctx := context.Background()
	v, err := env.Service.CreateVariable(ctx, env.Project, variable.Variable{Name: "Event", Type: variable.String})
	require.NoError(t, err)
	for _, name := range []string{"by_event", "other"} {
		q := endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT count(*) AS n FROM events WHERE event = {variables.event}",
			Variables: map[string]endpoint.VariableRef{v.ID: {VariableID: v.ID, CodeName: "event"}}}
		_, err = env.Service.Create(ctx, env.Project, endpoint.CreateRequest{Name: name, Query: &q})
		require.NoError(t, err)
	}
	return env, signer, keys, exec
}

func send(t *testing.T, env *endpointtest.Env, method, path, bearer, body string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, env.Server.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+bearer)
	req.Header.Set("Content-Type", "application/json")
	resp, err := env.Server.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b), resp.Header
}

func forgeToken(t *testing.T, method jwt.SigningMethod, kid string, key any, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, claims)
	tok.Header["kid"] = kid
	s, err := tok.SignedString(key)
	require.NoError(t, err)
	return s
}

// TestEmbedTokenAttacks is the HTTP attack table: each forged or misused
// token is answered with its status, and nothing runs.
func TestEmbedTokenAttacks(t *testing.T) {
	env, signer, _, exec := embedEnv(t)
	ctx := context.Background()
	mint := func(c embed.Claims, life time.Duration) string {
		tok, err := env.Service.MintEmbedToken(ctx, signer, env.Project, c, life)
		require.NoError(t, err)
		return tok
	}
	fixed := embed.Claims{Endpoints: []string{"by_event"}, Fixed: map[string]any{"event": "purchase"}}
	good := mint(fixed, time.Hour)
	now := time.Now()
	std := func(iat, exp time.Time) jwt.MapClaims {
		return jwt.MapClaims{"project": "1", "endpoints": []string{"by_event"}, "fixed": map[string]any{"event": "purchase"}, "iat": iat.Unix(), "exp": exp.Unix()}
	}
	parts := strings.Split(good, ".")
	tampered := parts[0] + "." + strings.TrimRight(parts[1], "=") + "x." + parts[2]
	run := "/api/projects/1/endpoints/by_event/run/"
	cases := []struct {
		name, method, path, token, body string
		status                          int
	}{
		{"another endpoint than the token's", "POST", "/api/projects/1/endpoints/other/run/", good, `{"variables": {}}`, 403},
		{"a fixed value changed", "POST", run, good, `{"variables": {"event": "signed_up"}}`, 403},
		{"a fixed value under another case", "POST", run, good, `{"variables": {"Event": "signed_up"}}`, 403},
		{"a fixed value twice (duplicate key)", "POST", run, good, `{"variables": {"event": "purchase", "event": "signed_up"}}`, 400},
		{"project 1's token on project 2", "POST", "/api/projects/2/endpoints/by_event/run/", good, `{"variables": {}}`, 403},
		{"payload edited", "POST", run, tampered, `{"variables": {}}`, 401},
		{"alg none", "POST", run, forgeToken(t, jwt.SigningMethodNone, "new", jwt.UnsafeAllowNoneSignatureType, std(now, now.Add(time.Hour))), `{"variables": {}}`, 401},
		{"alg HS512", "POST", run, forgeToken(t, jwt.SigningMethodHS512, "new", secretNew, std(now, now.Add(time.Hour))), `{"variables": {}}`, 401},
		{"wrong secret", "POST", run, forgeToken(t, jwt.SigningMethodHS256, "new", []byte("guessed-secret-123456"), std(now, now.Add(time.Hour))), `{"variables": {}}`, 401},
		{"unknown kid", "POST", run, forgeToken(t, jwt.SigningMethodHS256, "nope", secretNew, std(now, now.Add(time.Hour))), `{"variables": {}}`, 401},
		{"expired", "POST", run, forgeToken(t, jwt.SigningMethodHS256, "new", secretNew, std(now.Add(-2*time.Hour), now.Add(-time.Hour))), `{"variables": {}}`, 401},
		{"not yet valid", "POST", run, forgeToken(t, jwt.SigningMethodHS256, "new", secretNew, std(now.Add(time.Hour), now.Add(2*time.Hour))), `{"variables": {}}`, 401},
		{"lifetime over the maximum", "POST", run, forgeToken(t, jwt.SigningMethodHS256, "new", secretNew, std(now, now.Add(72*time.Hour))), `{"variables": {}}`, 401},
		{"garbage", "POST", run, "eyJhbGciOiJIUzI1NiJ9.bm90.anNvbg", `{"variables": {}}`, 401},
		{"list endpoints", "GET", "/api/projects/1/endpoints/", good, "", 403},
		{"get an endpoint", "GET", "/api/projects/1/endpoints/by_event/", good, "", 403},
		{"create an endpoint", "POST", "/api/projects/1/endpoints/", good, `{"name": "x", "query": {"kind": "HogQLQuery", "query": "SELECT 1"}}`, 403},
		{"update an endpoint", "PATCH", "/api/projects/1/endpoints/by_event/", good, `{"description": "x"}`, 403},
		{"delete an endpoint", "DELETE", "/api/projects/1/endpoints/by_event/", good, "", 403},
		{"materialize", "POST", "/api/projects/1/endpoints/by_event/materialize/", good, "", 403},
		{"list variables", "GET", "/api/projects/1/insight_variables/", good, "", 403},
		{"mint a token with a token", "POST", "/api/projects/1/embed_tokens/", good, `{"endpoints": ["by_event"]}`, 403},
		{"debug, which shows the saved SQL", "POST", run, good, `{"variables": {}, "debug": true}`, 403},
	}
	before := exec.Queries()
	for _, tc := range cases {
		status, body, _ := send(t, env, tc.method, tc.path, tc.token, tc.body)
		got, want := status, tc.status
		assert.Equal(t, want, got, "%s: %s: status", tc.name, body)
		assert.Contains(t, body, `"detail"`, "%v", tc.name)
	}
	if got, want := exec.Queries(), before; got != want {
		t.Errorf("no refused request ran a query: exec.Queries() = %v, want %v", got, want)
	}
	n, _ := env.Service.Get(ctx, env.Project, "by_event")
	if got, want := n.CurrentVersion, 1; got != want {
		t.Errorf("nothing was changed: n.CurrentVersion = %v, want %v", got, want)
	}

	// The token's own runs: the fixed value applies, and may be repeated.
	var want int64
	require.NoError(t, env.DB.QueryRow("SELECT count(*) FROM events WHERE event = 'purchase'").Scan(&want))
	for _, body := range []string{`{"variables": {}}`, `{"variables": {"event": "purchase"}}`, `{}`} {
		status, answer, _ := send(t, env, "POST", run, good, body)
		if got, want := status, 200; got != want {
			t.Fatalf("%v: status = %v, want %v", answer, got, want)
		}
		var res struct{ Results [][]int64 }
		require.NoError(t, json.Unmarshal([]byte(answer), &res))
		got, want := res.Results, ([][]int64{{want}})
		assert.Equal(t, want, got, "%v: res.Results", body)
	}
}

// spentToken mints a token of by_event with an rpm of 2 and runs it
// twice; it returns the token and the run path.
func spentToken(t *testing.T, env *endpointtest.Env, signer *embed.Signer) (string, string) {
	t.Helper()
	tok, err := env.Service.MintEmbedToken(context.Background(), signer, env.Project, embed.Claims{Endpoints: []string{"by_event"}, Fixed: map[string]any{"event": "x"}, RPM: 2}, time.Hour)
	require.NoError(t, err)
	run := "/api/projects/1/endpoints/by_event/run/"
	for i := range 2 {
		status, body, _ := send(t, env, "POST", run, tok, `{}`)
		require.Equal(t, 200, status, "run %d: %s: status", i, body)
	}
	return tok, run
}

func TestEmbedTokenRateAndRotation(t *testing.T) {
	env, signer, keys, _ := embedEnv(t)
	tok, run := spentToken(t, env, signer)
	status, body, h := send(t, env, "POST", run, tok, `{}`)
	got, want := status, 429
	assert.Equal(t, want, got, "%v: status", body)
	assert.NotEqual(t, "", h.Get("Retry-After"), "h.Get(\"Retry-After\") is empty")
	assert.Contains(t, body, "rpm")

	// Rotation: a token of the retired key stops working; the new key's
	// tokens go on.
	keys.Remove("", "new")
	status, _, _ = send(t, env, "POST", run, tok, `{}`)
	if got, want := status, 401; got != want {
		t.Errorf("the retired key's token is refused: status = %v, want %v", got, want)
	}
	fresh, err := env.Service.MintEmbedToken(context.Background(), signer, env.Project, embed.Claims{Endpoints: []string{"by_event"}, Fixed: map[string]any{"event": "x"}}, time.Hour)
	require.NoError(t, err)
	status, body, _ = send(t, env, "POST", run, fresh, `{}`)
	if got, want := status, 200; got != want {
		t.Errorf("%v: status = %v, want %v", body, got, want)
	}
}

func TestMintEmbedTokenOverHTTP(t *testing.T) {
	env, _, _, _ := embedEnv(t)
	status, body, _ := send(t, env, "POST", "/api/projects/1/embed_tokens/", env.Key,
		`{"endpoints": ["by_event"], "fixed": {"event": "purchase"}, "rpm": 10, "expires_in": 600}`)
	got, want := status, 201
	require.Equal(t, want, got, "%v: status", body)
	var minted struct{ Token string }
	require.NoError(t, json.Unmarshal([]byte(body), &minted))
	status, body, _ = send(t, env, "POST", "/api/projects/1/endpoints/by_event/run/", minted.Token, `{}`)
	if got, want := status, 200; got != want {
		t.Errorf("%v: status = %v, want %v", body, got, want)
	}

	for _, tc := range []struct {
		body   string
		status int
	}{
		{`{"endpoints": []}`, 400},
		{`{"endpoints": ["missing"]}`, 404},
		{`{"endpoints": ["by_event"], "fixed": {"country": "FR"}}`, 400},
		{`{"endpoints": ["by_event"], "fixed": {"event": {"a": 1}}}`, 400},
		{`{"endpoints": ["by_event"], "expires_in": 999999}`, 400},
		{`{"endpoints": ["by_event"], "expires_in": -5}`, 400},
		{`{"endpoints": ["by_event"], "rpm": 9999999999}`, 400}, // over embed.MaxRPM: a token no server would accept
	} {
		status, body, _ := send(t, env, "POST", "/api/projects/1/embed_tokens/", env.Key, tc.body)
		got, want := status, tc.status
		assert.Equal(t, want, got, "%s: %s: status", tc.body, body)
	}
}

// TestEmbedTokenRPMIsPerToken: a token's rpm is one budget, however the
// token is spelt. Changing the spare bits of the signature's last base64url
// character gives a text that decodes to the same bytes; it is refused
// (401) instead of getting a budget of its own. A header with crit, and a
// claim out of range, are refused naming what was wrong.
func TestEmbedTokenRPMIsPerToken(t *testing.T) {
	env, signer, _, exec := embedEnv(t)
	tok, run := spentToken(t, env, signer)
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	last := strings.IndexByte(alphabet, tok[len(tok)-1])
	before := exec.Queries()
	for spare := 1; spare < 4; spare++ { // a 32-byte signature leaves 2 spare bits
		respelt := tok[:len(tok)-1] + string(alphabet[last^spare])
		status, body, _ := send(t, env, "POST", run, respelt, `{}`)
		got, want := status, 401
		assert.Equal(t, want, got, "%v: status", body)
		assert.Contains(t, body, "base64url")
	}
	got, want := exec.Queries(), before
	assert.Equal(t, want, got, "no respelt token ran: exec.Queries()")
	status, body, _ := send(t, env, "POST", run, tok, `{}`)
	if got, want := status, 429; got != want {
		t.Errorf("the token's budget is spent: %s: status = %v, want %v", body, got, want)
	}

	now := time.Now()
	claims := func(extra map[string]any) jwt.MapClaims {
		c := jwt.MapClaims{"project": "1", "endpoints": []string{"by_event"}, "fixed": map[string]any{"event": "x"}, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
		for k, v := range extra {
			c[k] = v
		}
		return c
	}
	crit := jwt.NewWithClaims(jwt.SigningMethodHS256, claims(nil))
	crit.Header["kid"], crit.Header["crit"] = "new", []string{"exp"}
	critTok, err := crit.SignedString(secretNew)
	require.NoError(t, err)
	for _, tc := range []struct{ name, token, want string }{
		{"crit", critTok, `(\"crit\")`},
		{"exp 1e30", forgeToken(t, jwt.SigningMethodHS256, "new", secretNew, claims(map[string]any{"exp": 1e30})), `claim \"exp\"`},
		{"negative iat", forgeToken(t, jwt.SigningMethodHS256, "new", secretNew, claims(map[string]any{"iat": -1})), `claim \"iat\"`},
		{"rpm 2.5", forgeToken(t, jwt.SigningMethodHS256, "new", secretNew, claims(map[string]any{"rpm": 2.5})), `claim \"rpm\"`},
	} {
		status, body, _ := send(t, env, "POST", run, tc.token, `{}`)
		got, want := status, 401
		assert.Equal(t, want, got, "%s: %s: status", tc.name, body)
		assert.Contains(t, body, tc.want, "%v", tc.name)
	}
}
