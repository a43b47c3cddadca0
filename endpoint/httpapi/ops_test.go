package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/embed"
	"github.com/endpointkit/endpointkit/endpoint/endpointtest"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/internal/heldexec"
	"github.com/endpointkit/endpointkit/internal/openapitest"
	"github.com/endpointkit/endpointkit/variable"
)

// opsEnv serves project 1 over 2,000 demo events, with a result cache and
// embed tokens (kid "k1"); "by_event" counts one event's occurrences since a
// date, "typed" takes a variable of every type.
type opsEnv struct {
	*endpointtest.Env
	signer *embed.Signer
	exec   *heldexec.Fake
}

func newOpsEnv(t *testing.T) *opsEnv {
	t.Helper()
	keys := &embed.StaticKeys{}
	require.NoError(t, keys.Add("", "k1", []byte("ops-embed-secret-0123")))
	signer := &embed.Signer{Keys: keys}
	var exec *heldexec.Fake // counts the queries that reach the database
	env := endpointtest.New(t, endpointtest.WithDemoEvents(2000),
		endpointtest.WithConfig(func(c *endpoint.Config) {
			exec = heldexec.NewFake(c.Executor)
			c.Executor = exec
			c.ResultCache = memstore.NewResultCache(1 << 20)
		}),
		endpointtest.WithHTTPOptions(httpapi.WithEmbedTokens(signer), httpapi.WithLimiter(nil)))
	ctx := context.Background()
	vars := map[string]variable.Variable{}
	for _, v := range []variable.Variable{
		{Name: "Event", Type: variable.String},
		{Name: "From", Type: variable.Date},
		{Name: "Min", Type: variable.Number},
		{Name: "Paid", Type: variable.Boolean},
		{Name: "Plan", Type: variable.List, Values: []string{"free", "pro"}},
		{Name: "Events", Type: variable.List, Values: []string{"purchase", "$pageview", "signup"}, IsMulti: true},
	} {
		got, err := env.Service.CreateVariable(ctx, env.Project, v)
		require.NoError(t, err)
		vars[got.CodeName] = got
	}
	refs := func(names ...string) map[string]endpoint.VariableRef {
		m := map[string]endpoint.VariableRef{}
		for _, n := range names {
			m[vars[n].ID] = endpoint.VariableRef{VariableID: vars[n].ID, CodeName: n}
		}
		return m
	}
	for name, q := range map[string]endpoint.Query{
		"by_event": {Kind: endpoint.KindSQL, Variables: refs("event", "from"),
			SQL: "SELECT count(*) AS n, min(timestamp) AS first FROM events WHERE event = {variables.event} AND timestamp >= {variables.from}"},
		"typed": {Kind: endpoint.KindSQL, Variables: refs("event", "from", "min", "paid", "plan", "events"),
			SQL: "SELECT event, count(*) AS n FROM events WHERE event IN {variables.events} AND event <> {variables.event} AND timestamp >= {variables.from} " +
				"AND {variables.min} >= 0 AND {variables.paid} = {variables.paid} AND {variables.plan} <> 'x' GROUP BY event ORDER BY event"},
	} {
		_, err := env.Service.Create(ctx, env.Project, endpoint.CreateRequest{Name: name, Query: &q})
		require.NoError(t, err)
	}
	return &opsEnv{Env: env, signer: signer, exec: exec}
}

// call sends a request with a bearer credential and decodes the answer.
func (o *opsEnv) call(t *testing.T, method, path, bearer, body string) response {
	t.Helper()
	status, raw, header := send(t, o.Env, method, "/api/projects/1/"+path, bearer, body)
	return decodeResponse(t, status, header, []byte(raw))
}

func (o *opsEnv) token(t *testing.T, c embed.Claims) string {
	t.Helper()
	tok, err := o.Service.MintEmbedToken(context.Background(), o.signer, o.Project, c, time.Hour)
	require.NoError(t, err)
	return tok
}

// TestHTTPRunAnswerFields: a run answers execution_id, the version's
// created_at, is_cached, last_refresh and statistics; the second identical
// run is cached, byte for byte the same results; force recomputes; direct
// is refused for an endpoint that is not materialized.
func TestHTTPRunAnswerFields(t *testing.T) {
	o := newOpsEnv(t)
	run := `{"variables": {"event": "purchase", "from": "2025-01-01"}}`
	first := o.call(t, "POST", "endpoints/by_event/run", o.Key, run)
	mustStatus(t, http.StatusOK, first)
	_, err := uuid.Parse(first.Body["execution_id"].(string))
	require.NoError(t, err)
	assert.Equal(t, false, first.Body["is_cached"])
	if first.Body["endpoint_version_created_at"] == nil {
		t.Errorf("first.Body[\"endpoint_version_created_at\"] is nil")
	}
	if first.Body["last_refresh"] == nil {
		t.Errorf("first.Body[\"last_refresh\"] is nil")
	}
	stats := first.Body["statistics"].(map[string]any)
	_, ok := stats["elapsed_ms"]
	assert.True(t, ok, "no key %v in %v", "elapsed_ms", stats)
	if v := stats["rows_read"]; v != nil {
		t.Errorf("SQLite reports no rows read: stats[\"rows_read\"] = %v, want nil", v)
	}
	if _, ok := stats["rows_read"]; !ok {
		t.Errorf("no key %v in %v", "rows_read", stats)
	}
	if v := stats["bytes_read"]; v != nil {
		t.Errorf("stats[\"bytes_read\"] = %v, want nil", v)
	}
	if _, ok := stats["bytes_read"]; !ok {
		t.Errorf("no key %v in %v", "bytes_read", stats)
	}
	queries := o.exec.Queries()

	second := o.call(t, "POST", "endpoints/by_event/run", o.Key, run)
	mustStatus(t, http.StatusOK, second)
	assert.Equal(t, true, second.Body["is_cached"])
	assert.NotEqual(t, first.Body["execution_id"], second.Body["execution_id"])
	assert.Equal(t, first.Body["last_refresh"], second.Body["last_refresh"])
	got, want := o.exec.Queries(), queries
	assert.Equal(t, want, got, "a cached run queried the database: o.exec.Queries()")
	results := func(r response) string {
		var m map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(r.Raw, &m))
		return string(m["results"])
	}
	if got, want := results(second), results(first); got != want {
		t.Errorf("results(second) = %q, want %q", got, want)
	}

	forced := o.call(t, "POST", "endpoints/by_event/run", o.Key, `{"variables": {"event": "purchase", "from": "2025-01-01"}, "refresh": "force"}`)
	mustStatus(t, http.StatusOK, forced)
	assert.Equal(t, false, forced.Body["is_cached"])
	if got, want := o.exec.Queries(), queries+1; got != want {
		t.Errorf("o.exec.Queries() = %v, want %v", got, want)
	}

	direct := o.call(t, "POST", "endpoints/by_event/run", o.Key, `{"variables": {"event": "purchase", "from": "2025-01-01"}, "refresh": "direct"}`)
	mustStatus(t, http.StatusBadRequest, direct)
	assert.Equal(t, "refresh", direct.Body["attr"])
}

// TestHTTPDataFreshnessSeconds: the field is saved, shown, and refused
// outside its values.
func TestHTTPDataFreshnessSeconds(t *testing.T) {
	o := newOpsEnv(t)
	r := o.call(t, "GET", "endpoints/by_event/", o.Key, "")
	mustStatus(t, http.StatusOK, r)
	assert.Equal(t, json.Number("86400"), r.Body["data_freshness_seconds"])
	r = o.call(t, "PATCH", "endpoints/by_event/", o.Key, `{"data_freshness_seconds": 900}`)
	mustStatus(t, http.StatusOK, r)
	assert.Equal(t, json.Number("900"), r.Body["data_freshness_seconds"])
	for _, bad := range []string{`5`, `"900"`, `900.5`, `null`} {
		r = o.call(t, "PATCH", "endpoints/by_event/", o.Key, `{"data_freshness_seconds": `+bad+`}`)
		if bad == `null` {
			mustStatus(t, http.StatusOK, r) // null leaves the field as it is
			continue
		}
		mustStatus(t, http.StatusBadRequest, r)
		checkErrorBody(t, r)
		assert.Equal(t, "data_freshness_seconds", r.Body["attr"], "%v: r.Body[\"attr\"]", bad)
	}
	r = o.call(t, "POST", "endpoints/", o.Key, `{"name": "weekly", "query": {"kind": "HogQLQuery", "query": "SELECT 1 AS one"}, "data_freshness_seconds": 604800}`)
	mustStatus(t, http.StatusCreated, r)
	assert.Equal(t, json.Number("604800"), r.Body["data_freshness_seconds"])
	r = o.call(t, "POST", "endpoints/", o.Key, `{"name": "bad", "query": {"kind": "HogQLQuery", "query": "SELECT 1 AS one"}, "data_freshness_seconds": 60}`)
	mustStatus(t, http.StatusBadRequest, r)
	assert.Equal(t, "Invalid data_freshness_seconds 60. Expected one of: 900, 1800, 3600, 21600, 43200, 86400, 604800.", r.detail())
}

// TestHTTPVersions: the versions of an endpoint and each one, with its
// query, variables, created_at and materialization; refusals.
func TestHTTPVersions(t *testing.T) {
	o := newOpsEnv(t)
	r := o.call(t, "PATCH", "endpoints/by_event/", o.Key, `{"query": {"kind": "HogQLQuery", "query": "SELECT 2 AS two"}}`)
	mustStatus(t, http.StatusOK, r)
	r = o.call(t, "GET", "endpoints/by_event/versions/", o.Key, "")
	mustStatus(t, http.StatusOK, r)
	list := r.Body["results"].([]any)
	require.Len(t, list, 2)
	v1, v2 := list[0].(map[string]any), list[1].(map[string]any)
	assert.Equal(t, json.Number("1"), v1["version"])
	assert.Equal(t, false, v1["is_current"])
	q, ok := v1["query"].(map[string]any)["query"].(string)
	if assert.True(t, ok, "v1 query = %q, want it to contain %q", q, "{variables.event}") {
		assert.Contains(t, q, "{variables.event}", "v1 query = %q, want it to contain %q", q, "{variables.event}")
	}
	vars := v1["variables"].([]any)
	require.Len(t, vars, 2)
	assert.Equal(t, "event", vars[0].(map[string]any)["code_name"])
	assert.Equal(t, "String", vars[0].(map[string]any)["type"])
	assert.Equal(t, true, vars[0].(map[string]any)["required"])
	assert.Equal(t, "Date", vars[1].(map[string]any)["type"])
	_, err := time.Parse(time.RFC3339Nano, v1["created_at"].(string))
	require.NoError(t, err)
	m := v1["materialization"].(map[string]any)
	assert.Equal(t, true, m["can_materialize"])
	assert.Equal(t, false, m["materialized"])
	assert.Equal(t, true, v2["is_current"])
	if got := v2["variables"]; got != nil && !reflect.DeepEqual(got, []any{}) {
		t.Errorf("v2[\"variables\"] = %v, want none", got)
	}

	r = o.call(t, "GET", "endpoints/by_event/versions/2", o.Key, "")
	mustStatus(t, http.StatusOK, r)
	assert.Equal(t, "SELECT 2 AS two", r.Body["query"].(map[string]any)["query"])
	for _, tc := range []struct {
		path   string
		status int
		detail string
	}{
		{"endpoints/by_event/versions/3/", 404, "Version 3 not found for endpoint 'by_event'"},
		{"endpoints/by_event/versions/0/", 400, "version must be a positive integer, got '0'."},
		{"endpoints/by_event/versions/x/", 400, "version must be a positive integer, got 'x'."},
		{"endpoints/nope/versions/", 404, "Endpoint 'nope' not found."},
		{"endpoints/nope/versions/1/", 404, "Endpoint 'nope' not found."},
	} {
		r := o.call(t, "GET", tc.path, o.Key, "")
		mustStatus(t, tc.status, r)
		checkErrorBody(t, r)
		got, want := r.detail(), tc.detail
		assert.Equal(t, want, got, "%v: r.detail()", tc.path)
	}
	tok := o.token(t, embed.Claims{Endpoints: []string{"by_event"}})
	for _, path := range []string{"endpoints/by_event/versions/", "endpoints/by_event/versions/1/", "endpoints/by_event/logs/", "endpoints/by_event/materialization_status/"} {
		mustStatus(t, http.StatusForbidden, o.call(t, "GET", path, tok, ""))
	}
	mustStatus(t, http.StatusUnauthorized, o.call(t, "GET", "endpoints/by_event/versions/", "wrong-key", ""))
}

// TestHTTPOpenAPIAgreesWithServer: the document of an endpoint is valid
// OpenAPI 3.0.3, names its columns and the Bearer scheme, and every run
// request of the table that it accepts the server accepts, and every one
// it refuses the server refuses.
func TestHTTPOpenAPIAgreesWithServer(t *testing.T) {
	o := newOpsEnv(t)
	r := o.call(t, "GET", "endpoints/typed/openapi.json", o.Key, "")
	mustStatus(t, http.StatusOK, r)
	doc, validate := openapitest.Validator(t, r.Raw)
	const path = "/api/projects/1/endpoints/typed/run"
	op := doc.Paths.Find(path).Post
	require.NotNil(t, op, "no POST %s: op is nil", path)
	assert.Equal(t, "bearer", doc.Components.SecuritySchemes["bearerAuth"].Value.Scheme)
	answer := op.Responses.Value("200").Value.Content.Get("application/json").Schema.Value
	assert.Equal(t, []any{"event", "n"}, answer.Properties["columns"].Value.Items.Value.Enum)
	vars := op.RequestBody.Value.Content.Get("application/json").Schema.Value.Properties["variables"].Value
	got, want := slices.Sorted(slices.Values(vars.Required)), []string{"event", "events", "from", "min", "paid", "plan"}
	assert.True(t, slices.Equal(got, want), "vars.Required = %q (sorted), want %q", got, want)
	assert.Equal(t, "number", vars.Properties["min"].Value.Type.Slice()[0])
	assert.Equal(t, "array", vars.Properties["events"].Value.Type.Slice()[0])

	good := `"event": "signup", "events": ["purchase", "$pageview"], "from": "2025-01-01", "min": 2, "paid": true, "plan": "pro"`
	for _, tc := range []struct {
		name, body string
		ok         bool
	}{
		{"every variable", `{"variables": {` + good + `}}`, true},
		{"options", `{"variables": {` + good + `}, "limit": 2, "offset": 1, "refresh": "force", "debug": true}`, true},
		{"relative date", `{"variables": {"event": "signup", "events": ["purchase"], "from": "-7d", "min": 0, "paid": false, "plan": "free"}}`, true},
		{"date and time", `{"variables": {"event": "signup", "events": ["purchase"], "from": "2025-01-01 10:30:00", "min": 0.5, "paid": false, "plan": "free"}}`, true},
		{"RFC 3339", `{"variables": {"event": "signup", "events": ["purchase"], "from": "2025-01-01T10:30:00+02:00", "min": 0, "paid": false, "plan": "free"}}`, true},
		{"missing variable", `{"variables": {"event": "signup"}}`, false},
		{"no body", ``, false},
		{"unknown variable", `{"variables": {` + good + `, "x": 1}}`, false},
		{"unknown option", `{"variables": {` + good + `}, "limt": 1}`, false},
		{"a number for a boolean", `{"variables": {"event": "signup", "events": ["purchase"], "from": "2025-01-01", "min": 0, "paid": 1, "plan": "free"}}`, false},
		{"an object for a string", `{"variables": {"event": {}, "events": ["purchase"], "from": "2025-01-01", "min": 0, "paid": true, "plan": "free"}}`, false},
		{"not a date", `{"variables": {"event": "signup", "events": ["purchase"], "from": "yesterday", "min": 0, "paid": true, "plan": "free"}}`, false},
		{"an option not listed", `{"variables": {"event": "signup", "events": ["purchase"], "from": "2025-01-01", "min": 0, "paid": true, "plan": "gold"}}`, false},
		{"an empty multi list", `{"variables": {"event": "signup", "events": [], "from": "2025-01-01", "min": 0, "paid": true, "plan": "free"}}`, false},
		{"a single value for a multi list", `{"variables": {"event": "signup", "events": "purchase", "from": "2025-01-01", "min": 0, "paid": true, "plan": "free"}}`, false},
		{"a limit too large", `{"variables": {` + good + `}, "limit": 50001}`, false},
		{"a negative offset", `{"variables": {` + good + `}, "offset": -1}`, false},
		{"refresh direct on an endpoint not materialized", `{"variables": {` + good + `}, "refresh": "direct"}`, false},
		{"a refresh mode that does not exist", `{"variables": {` + good + `}, "refresh": "later"}`, false},
	} {
		docErr := validate(path, tc.body)
		got, want := docErr == nil, tc.ok
		assert.Equal(t, want, got, "%s: the document says %v: docErr", tc.name, docErr)
		res := o.call(t, "POST", "endpoints/typed/run", o.Key, tc.body)
		if tc.ok {
			got, want := res.Status, http.StatusOK
			assert.Equal(t, want, got, "%s: the server answered %s: res.Status", tc.name, res.Raw)
		} else {
			got, want := res.Status, http.StatusBadRequest
			assert.Equal(t, want, got, "%s: the server answered %s: res.Status", tc.name, res.Raw)
		}
	}

	// An older version's document requires its version.
	mustStatus(t, http.StatusOK, o.call(t, "PATCH", "endpoints/by_event/", o.Key, `{"query": {"kind": "HogQLQuery", "query": "SELECT 2 AS two"}}`))
	r = o.call(t, "GET", "endpoints/by_event/openapi.json?version=1", o.Key, "")
	mustStatus(t, http.StatusOK, r)
	_, validate = openapitest.Validator(t, r.Raw)
	v1 := `{"variables": {"event": "purchase", "from": "2025-01-01"}, "version": 1}`
	require.NoError(t, validate("/api/projects/1/endpoints/by_event/run", v1))
	mustStatus(t, http.StatusOK, o.call(t, "POST", "endpoints/by_event/run", o.Key, v1))
	require.Error(t, validate("/api/projects/1/endpoints/by_event/run", `{"variables": {"event": "purchase", "from": "2025-01-01"}}`))
	for _, tc := range []struct {
		query  string
		status int
	}{{"?version=0", 400}, {"?version=x", 400}, {"?version=", 400}, {"?version=3", 404}} {
		r := o.call(t, "GET", "endpoints/by_event/openapi.json"+tc.query, o.Key, "")
		mustStatus(t, tc.status, r)
		checkErrorBody(t, r)
	}
	mustStatus(t, http.StatusNotFound, o.call(t, "GET", "endpoints/nope/openapi.json", o.Key, ""))
}

// TestHTTPOpenAPITokenView: an embed token reads the document of an
// endpoint it names, without the variables it fixes; what that document
// accepts, the server accepts with the token. Another endpoint is 403, and
// reading the document does not count towards the token's rpm.
func TestHTTPOpenAPITokenView(t *testing.T) {
	o := newOpsEnv(t)
	tok := o.token(t, embed.Claims{Endpoints: []string{"by_event"}, Fixed: map[string]any{"event": "purchase"}, RPM: 2})
	for range 3 {
		mustStatus(t, http.StatusOK, o.call(t, "GET", "endpoints/by_event/openapi.json", tok, ""))
	}
	r := o.call(t, "GET", "endpoints/by_event/openapi.json", tok, "")
	doc, validate := openapitest.Validator(t, r.Raw)
	const path = "/api/projects/1/endpoints/by_event/run"
	vars := doc.Paths.Find(path).Post.RequestBody.Value.Content.Get("application/json").Schema.Value.Properties["variables"].Value
	_, ok := vars.Properties["event"]
	assert.False(t, ok, "the fixed variable is in the token's view: key %v in %v", "event", vars.Properties)
	assert.Equal(t, []string{"from"}, vars.Required)
	body := `{"variables": {"from": "2025-01-01"}}`
	require.NoError(t, validate(path, body))
	mustStatus(t, http.StatusOK, o.call(t, "POST", "endpoints/by_event/run", tok, body))
	require.Error(t, validate(path, `{"variables": {"from": "2025-01-01", "event": "signup"}}`))
	mustStatus(t, http.StatusForbidden, o.call(t, "POST", "endpoints/by_event/run", tok, `{"variables": {"from": "2025-01-01", "event": "signup"}}`))

	// The API key's view has the variable.
	r = o.call(t, "GET", "endpoints/by_event/openapi.json", o.Key, "")
	doc, _ = openapitest.Validator(t, r.Raw)
	vars = doc.Paths.Find(path).Post.RequestBody.Value.Content.Get("application/json").Schema.Value.Properties["variables"].Value
	if _, ok := vars.Properties["event"]; !ok {
		t.Errorf("no key %v in %v", "event", vars.Properties)
	}
	mustStatus(t, http.StatusForbidden, o.call(t, "GET", "endpoints/typed/openapi.json", tok, ""))
}

// TestHTTPLogs: the run log, newest first, paged with the next cursor; a
// token's runs show its kid; no value of a variable is ever in it.
func TestHTTPLogs(t *testing.T) {
	o := newOpsEnv(t)
	tok := o.token(t, embed.Claims{Endpoints: []string{"by_event"}, Fixed: map[string]any{"event": "signup"}})
	mustStatus(t, http.StatusOK, o.call(t, "POST", "endpoints/by_event/run", o.Key, `{"variables": {"event": "purchase", "from": "2025-01-01"}}`))
	mustStatus(t, http.StatusOK, o.call(t, "POST", "endpoints/by_event/run", tok, `{"variables": {"from": "2025-02-02"}}`))
	mustStatus(t, http.StatusBadRequest, o.call(t, "POST", "endpoints/by_event/run", o.Key, `{"variables": {"event": "purchase", "from": "never-ever"}}`))

	r := o.call(t, "GET", "endpoints/by_event/logs/", o.Key, "")
	mustStatus(t, http.StatusOK, r)
	list := r.Body["results"].([]any)
	require.Len(t, list, 3)
	if v := r.Body["next"]; v != nil {
		t.Errorf("r.Body[\"next\"] = %v, want nil", v)
	}
	failed, token, first := list[0].(map[string]any), list[1].(map[string]any), list[2].(map[string]any)
	assert.Equal(t, json.Number("400"), failed["status"])
	assert.Equal(t, "invalid_variable_value", failed["error_code"])
	if v := failed["rows"]; v != nil {
		t.Errorf("failed[\"rows\"] = %v, want nil", v)
	}
	assert.Equal(t, true, token["token"])
	assert.Equal(t, "k1", token["token_kid"])
	assert.Equal(t, json.Number("200"), first["status"])
	assert.Equal(t, false, first["token"])
	assert.Equal(t, json.Number("1"), first["rows"])
	for _, f := range []string{"execution_id", "at", "version", "duration_ms", "rows_read", "bytes_read", "is_cached", "endpoint_materialized", "refresh"} {
		_, ok := first[f]
		assert.True(t, ok, "no key %v in %v", f, first)
	}
	for _, leak := range []string{"purchase", "signup", "2025-01-01", "2025-02-02", "never-ever", "eyJ"} {
		assert.NotContains(t, string(r.Raw), leak)
	}

	r = o.call(t, "GET", "endpoints/by_event/logs/?limit=2", o.Key, "")
	mustStatus(t, http.StatusOK, r)
	v := r.Body["results"].([]any)
	require.Len(t, v, 2, "len")
	next := r.Body["next"].(string)
	r = o.call(t, "GET", "endpoints/by_event/logs/?limit=2&before="+url.QueryEscape(next), o.Key, "")
	mustStatus(t, http.StatusOK, r)
	if v := r.Body["results"].([]any); len(v) != 1 {
		t.Fatalf("len = %d, want %d: %v", len(v), 1, v)
	}
	assert.Equal(t, first["execution_id"], r.Body["results"].([]any)[0].(map[string]any)["execution_id"])
	if v := r.Body["next"]; v != nil {
		t.Errorf("r.Body[\"next\"] = %v, want nil", v)
	}
	for _, q := range []string{"?limit=0", "?limit=x", "?limit=1001", "?before=zzz"} {
		r := o.call(t, "GET", "endpoints/by_event/logs/"+q, o.Key, "")
		mustStatus(t, http.StatusBadRequest, r)
		checkErrorBody(t, r)
	}
	mustStatus(t, http.StatusNotFound, o.call(t, "GET", "endpoints/nope/logs/", o.Key, ""))
}

// TestHTTPMaterializationStatus: pending after create, ready with rows and
// duration after a refresh; null for an endpoint that is not materialized.
func TestHTTPMaterializationStatus(t *testing.T) {
	o := newOpsEnv(t)
	r := o.call(t, "GET", "endpoints/by_event/materialization_status/", o.Key, "")
	mustStatus(t, http.StatusOK, r)
	assert.Equal(t, false, r.Body["is_materialized"])
	if v := r.Body["status"]; v != nil {
		t.Errorf("r.Body[\"status\"] = %v, want nil", v)
	}

	mustStatus(t, http.StatusOK, o.call(t, "PATCH", "endpoints/by_event/", o.Key, `{"is_materialized": true}`))
	r = o.call(t, "GET", "endpoints/by_event/materialization_status", o.Key, "")
	mustStatus(t, http.StatusOK, r)
	assert.Equal(t, "pending", r.Body["status"])
	if v := r.Body["last_success_at"]; v != nil {
		t.Errorf("r.Body[\"last_success_at\"] = %v, want nil", v)
	}

	mustStatus(t, http.StatusOK, o.call(t, "POST", "endpoints/by_event/materialize?wait=true", o.Key, ""))
	r = o.call(t, "GET", "endpoints/by_event/materialization_status/", o.Key, "")
	mustStatus(t, http.StatusOK, r)
	assert.Equal(t, "completed", r.Body["status"])
	assert.Equal(t, true, r.Body["serving"])
	assert.Equal(t, json.Number("1"), r.Body["version"])
	if r.Body["last_success_at"] == nil {
		t.Errorf("r.Body[\"last_success_at\"] is nil")
	}
	if r.Body["duration_ms"] == nil {
		t.Errorf("r.Body[\"duration_ms\"] is nil")
	}
	if r.Body["next_refresh_at"] == nil {
		t.Errorf("r.Body[\"next_refresh_at\"] is nil")
	}
	rows, err := r.Body["rows"].(json.Number).Int64()
	require.NoError(t, err)
	assert.Greater(t, rows, int64(0))
	if v := r.Body["last_error"]; v != nil {
		t.Errorf("r.Body[\"last_error\"] = %v, want nil", v)
	}
	assert.Equal(t, json.Number("86400"), r.Body["data_freshness_seconds"])

	// A materialized endpoint answers direct runs from its table.
	run := o.call(t, "POST", "endpoints/by_event/run", o.Key, `{"variables": {"event": "purchase", "from": "2025-01-01"}, "refresh": "direct"}`)
	mustStatus(t, http.StatusOK, run)
	assert.Equal(t, true, run.Body["endpoint_materialized"])
	assert.Equal(t, run.Body["endpoint_materialized_at"], run.Body["last_refresh"])
	mustStatus(t, http.StatusNotFound, o.call(t, "GET", "endpoints/nope/materialization_status/", o.Key, ""))
}

// TestHTTPOpsRoutesMethods: the new routes are GET only.
func TestHTTPOpsRoutesMethods(t *testing.T) {
	o := newOpsEnv(t)
	for _, path := range []string{"endpoints/by_event/versions/", "endpoints/by_event/versions/1/", "endpoints/by_event/openapi.json", "endpoints/by_event/logs/", "endpoints/by_event/materialization_status/"} {
		r := o.call(t, "POST", path, o.Key, "{}")
		mustStatus(t, http.StatusMethodNotAllowed, r)
		assert.Contains(t, r.Header.Get("Allow"), "GET", "%v", path)
	}
}
