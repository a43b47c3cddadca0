package httpapi_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/internal/heldexec"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestJSONIsNotHTMLEscaped(t *testing.T) {
	h := newHarness(t, nil)
	h.setupRange("1", keyP1)
	r := h.do("POST", runPath, keyP1, `{"variables": {}, "a<b>&c": 1}`)
	mustStatus(t, http.StatusBadRequest, r)
	assert.Contains(t, string(r.Raw), `Unknown field(s): a<b>&c`)
}

const runPath = "/api/projects/1/endpoints/in_range/run"

var okVars = map[string]any{"from": "2025-05-01", "to": "2025-05-02"}

// TestErrorStatuses sends one bad request per case and checks the status,
// the code, the attr and the words of the detail.
func TestErrorStatuses(t *testing.T) {
	h := newHarness(t, nil)
	h.setupRange("1", keyP1)
	big := `{"variables": {"from": "2025-05-01", "to": "2025-05-02"}, "pad": "` + strings.Repeat("x", 1<<20) + `"}`

	cases := []struct {
		name         string
		method, path string
		key          string
		body         any // string: raw JSON
		contentType  string
		status       int
		code         string
		attr         string
		detail       string // a substring of the detail
	}{
		{"malformed JSON", "POST", runPath, keyP1, `{"variables": `, "", 400, "parse_error", "", "Malformed JSON"},
		{"malformed JSON in create", "POST", "/api/projects/1/endpoints/", keyP1, `{"name": "x",}`, "", 400, "parse_error", "", "Malformed JSON at byte"},
		{"trailing data", "POST", runPath, keyP1, `{"variables": {}} {}`, "", 400, "parse_error", "", "Malformed JSON"},
		{"body is an array", "POST", runPath, keyP1, `[1, 2]`, "", 400, "parse_error", "", "must be a JSON object, got array"},
		{"body is a string", "POST", runPath, keyP1, `"from"`, "", 400, "parse_error", "", "must be a JSON object, got string"},
		{"body is null", "POST", runPath, keyP1, `null`, "", 400, "parse_error", "", "must be a JSON object, got null"},
		{"body is a number", "POST", "/api/projects/1/insight_variables/", keyP1, `42`, "", 400, "parse_error", "", "must be a JSON object, got number"},
		{"empty create body", "POST", "/api/projects/1/endpoints/", keyP1, ` `, "", 400, "parse_error", "", "empty"},
		{"wrong type limit", "POST", runPath, keyP1, `{"variables": {"from": "2025-05-01", "to": "2025-05-02"}, "limit": "ten"}`, "", 400, "invalid_input", "limit", "expected integer, got string"},
		{"fractional version", "POST", runPath, keyP1, `{"variables": {"from": "2025-05-01", "to": "2025-05-02"}, "version": 1.5}`, "", 400, "invalid_input", "version", "expected integer, got number 1.5"},
		{"wrong type variables", "POST", runPath, keyP1, `{"variables": ["2025-05-01"]}`, "", 400, "invalid_input", "variables", "expected object, got array"},
		{"wrong type debug", "POST", runPath, keyP1, `{"variables": {}, "debug": "yes"}`, "", 400, "invalid_input", "debug", "expected boolean, got string"},
		{"wrong type name", "POST", "/api/projects/1/endpoints/", keyP1, `{"name": 7, "query": {"kind": "HogQLQuery", "query": "SELECT 1"}}`, "", 400, "invalid_input", "name", "expected string, got number"},
		{"wrong type is_multi", "PATCH", "/api/projects/1/insight_variables/" + idFrom, keyP1, `{"is_multi": "no"}`, "", 400, "invalid_input", "is_multi", "expected boolean"},
		{"unknown run key", "POST", runPath, keyP1, `{"variables": {"from": "2025-05-01", "to": "2025-05-02"}, "x": 1}`, "", 400, "invalid_input", "x", "Unknown field(s): x"},
		{"unknown run keys sorted", "POST", runPath, keyP1, `{"variables": {}, "zz": 1, "Limit": 2}`, "", 400, "invalid_input", "Limit", "Unknown field(s): Limit, zz"},
		{"unknown create key", "POST", "/api/projects/1/endpoints/", keyP1, `{"name": "x", "descripton": "typo", "query": {"kind": "HogQLQuery", "query": "SELECT 1"}}`, "", 400, "invalid_input", "descripton", "Unknown field(s): descripton"},
		{"query not an object", "POST", "/api/projects/1/endpoints/", keyP1, `{"name": "x", "query": "SELECT 1"}`, "", 400, "", "query", ""},
		{"missing variables", "POST", runPath, keyP1, `{"variables": {}}`, "", 400, "", "", "Required variable(s) 'from', 'to' not provided"},
		{"missing variables, empty body", "POST", runPath, keyP1, nil, "", 400, "", "", "Required variable(s) 'from', 'to' not provided"},
		{"unknown variable", "POST", runPath, keyP1, `{"variables": {"from": "2025-05-01", "to": "2025-05-02", "country": "US"}}`, "", 400, "", "", "Unknown variable(s): country"},
		{"bad variable value", "POST", runPath, keyP1, `{"variables": {"from": true, "to": "2025-05-02"}}`, "", 400, "", "", "from"},
		{"invalid endpoint name", "POST", "/api/projects/1/endpoints/", keyP1, `{"name": "1bad", "query": {"kind": "HogQLQuery", "query": "SELECT 1"}}`, "", 400, "", "name", "Invalid name '1bad'"},
		{"undefined placeholder", "POST", "/api/projects/1/endpoints/", keyP1, `{"name": "x", "query": {"kind": "HogQLQuery", "query": "SELECT {variables.b}, {variables.a}"}}`, "", 400, "", "", "Query references undefined variable(s): a, b"},
		{"variable id not a UUID", "POST", "/api/projects/1/endpoints/", keyP1, `{"name": "x", "query": {"kind": "HogQLQuery", "query": "SELECT {variables.a}", "variables": {"nope": {"variableId": "nope", "code_name": "a"}}}}`, "", 400, "", "", "Variable ID(s) not valid UUIDs: nope"},
		{"variable id not found", "POST", "/api/projects/1/endpoints/", keyP1, `{"name": "x", "query": {"kind": "HogQLQuery", "query": "SELECT {variables.a}", "variables": {"` + idCountry + `": {"variableId": "` + idCountry + `", "code_name": "a"}}}}`, "", 400, "", "", "Variable ID(s) not found: " + idCountry},
		{"bad variable definition", "POST", "/api/projects/1/insight_variables/", keyP1, `{"name": "x", "type": "Colour"}`, "", 400, "", "type", "Colour"},

		{"no Authorization", "GET", "/api/projects/1/endpoints/", "", nil, "", 401, "", "", "Authentication credentials were not provided"},
		{"unknown key", "GET", "/api/projects/1/endpoints/", "not-a-key", nil, "", 401, "", "", "Invalid API key"},
		{"unknown key, unknown endpoint", "GET", "/api/projects/1/endpoints/nope", "not-a-key", nil, "", 401, "", "", "Invalid API key"},
		{"key of another project", "GET", "/api/projects/1/endpoints/", keyP2, nil, "", 403, "", "", "does not give access to project '1'"},
		{"key of no project", "POST", runPath, keyNone, `{"variables": {}}`, "", 403, "", "", "project '1'"},

		{"unknown endpoint", "GET", "/api/projects/1/endpoints/nope", keyP1, nil, "", 404, "not_found", "", "nope"},
		{"run unknown endpoint", "POST", "/api/projects/1/endpoints/nope/run", keyP1, `{"variables": {}}`, "", 404, "not_found", "", "nope"},
		{"unknown variable id", "GET", "/api/projects/1/insight_variables/" + idCountry, keyP1, nil, "", 404, "not_found", "", ""},
		{"unknown version", "POST", runPath, keyP1, `{"variables": {"from": "2025-05-01", "to": "2025-05-02"}, "version": 9}`, "", 404, "", "", "Version 9 not found"},
		{"unknown route", "GET", "/api/projects/1/nothing", keyP1, nil, "", 404, "not_found", "", "Not found"},
		{"unknown route outside the API", "GET", "/", "", nil, "", 404, "not_found", "", "Not found"},
		{"route under run", "POST", runPath + "/more", keyP1, `{}`, "", 404, "not_found", "", "Not found"},

		{"PUT an endpoint", "PUT", "/api/projects/1/endpoints/in_range/", keyP1, `{}`, "", 405, "method_not_allowed", "", `Method "PUT" not allowed`},
		{"GET a run", "GET", runPath, keyP1, nil, "", 405, "method_not_allowed", "", `Method "GET" not allowed`},
		{"DELETE the list", "DELETE", "/api/projects/1/insight_variables", keyP1, nil, "", 405, "method_not_allowed", "", `Method "DELETE" not allowed`},

		{"duplicate endpoint name", "POST", "/api/projects/1/endpoints/", keyP1, `{"name": "in_range", "query": {"kind": "HogQLQuery", "query": "SELECT 1"}}`, "", 409, "", "", "already exists"},

		{"duplicate variable id", "POST", "/api/projects/1/insight_variables/", keyP1, `{"id": "` + idFrom + `", "name": "Again", "type": "Date"}`, "", 409, "conflict", "id", "already exists"},
		{"duplicate code_name", "POST", "/api/projects/1/insight_variables/", keyP1, `{"name": "from", "type": "Date"}`, "", 409, "conflict", "code_name", "already exists"},
		{"delete a variable in use", "DELETE", "/api/projects/1/insight_variables/" + idFrom, keyP1, nil, "", 409, "variable_in_use", "", "used by endpoint 'in_range'"},
		{"rename a variable in use", "PATCH", "/api/projects/1/insight_variables/" + idFrom, keyP1, `{"code_name": "start"}`, "", 409, "variable_in_use", "code_name", "cannot change"},

		{"body over 1 MiB", "POST", runPath, keyP1, big, "", 413, "request_too_large", "", "1048576"},

		{"text/plain", "POST", runPath, keyP1, `{"variables": {}}`, "text/plain", 415, "unsupported_media_type", "", "text/plain"},
		{"form", "POST", "/api/projects/1/endpoints/", keyP1, `name=x`, "application/x-www-form-urlencoded", 415, "unsupported_media_type", "", "application/json"},
		{"no content type", "PATCH", "/api/projects/1/endpoints/in_range", keyP1, `{"description": "d"}`, "-", 415, "unsupported_media_type", "", "Content-Type"},
		{"latin-1", "POST", runPath, keyP1, `{"variables": {}}`, "application/json; charset=latin1", 415, "unsupported_media_type", "", "UTF-8"},
		{"garbled content type", "POST", runPath, keyP1, `{"variables": {}}`, "application/json; ;", 415, "unsupported_media_type", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var body io.Reader
			if c.body != nil {
				body = strings.NewReader(c.body.(string))
			}
			req, err := http.NewRequest(c.method, h.server.URL+c.path, body)
			require.NoError(t, err)
			switch c.contentType {
			case "":
				if c.body != nil {
					req.Header.Set("Content-Type", "application/json")
				}
			case "-":
			default:
				req.Header.Set("Content-Type", c.contentType)
			}
			if c.key != "" {
				req.Header.Set("Authorization", "Bearer "+c.key)
			}
			r := h.send(req)
			mustStatus(t, c.status, r)
			checkErrorBody(t, r)
			if c.code != "" {
				assert.Equal(t, c.code, r.Body["code"])
			}
			if c.attr != "" {
				assert.Equal(t, c.attr, r.Body["attr"])
			}
			s, sub := r.detail(), c.detail
			assert.Contains(t, s, sub)
			switch c.status {
			case 401:
				assert.Contains(t, r.Header.Get("WWW-Authenticate"), "Bearer")
			case 405:
				assert.NotEqual(t, "", r.Header.Get("Allow"), "r.Header.Get(\"Allow\") is empty")
			}
		})
	}
	v := h.logs.String()
	assert.True(t, (v == ""), "no client error is logged as a server fault: h.logs.String() = %v, want it empty", v)
}

// checkErrorBody checks the shape of every error answer: detail, code and
// attr present, detail and code non-empty.
func checkErrorBody(t *testing.T, r response) {
	t.Helper()
	require.NotNil(t, r.Body, "error answers have a JSON body: r.Body is nil")
	s, ok := r.Body["detail"].(string)
	if assert.True(t, ok, "r.Body[\"detail\"] = %#v, want a non-empty string", r.Body["detail"]) {
		assert.NotEqual(t, "", s, "r.Body[\"detail\"] = %#v, want a non-empty string", r.Body["detail"])
	}
	if s, ok := r.Body["code"].(string); !ok || s == "" {
		t.Errorf("r.Body[\"code\"] = %#v, want a non-empty string", r.Body["code"])
	}
	_, hasAttr := r.Body["attr"]
	assert.True(t, hasAttr, "attr is always present (null when no field): %s: hasAttr is false", r.Raw)
}

func TestBodyTooLargeChunked(t *testing.T) {
	h := newHarness(t, nil)
	h.setupRange("1", keyP1)
	// No Content-Length: the limit must hold while reading, too.
	body := io.MultiReader(strings.NewReader(`{"variables": {}, "pad": "`), bytes.NewReader(bytes.Repeat([]byte("x"), 2<<20)), strings.NewReader(`"}`))
	req, err := http.NewRequest("POST", h.server.URL+runPath, body)
	require.NoError(t, err)
	req.ContentLength = -1
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+keyP1)
	r := h.send(req)
	mustStatus(t, http.StatusRequestEntityTooLarge, r)
	checkErrorBody(t, r)
}

// failingExecutor fails every query with err but the check of a save
// (savesCheck), which it answers with no column, and every Exec.
func failingExecutor(err error) *heldexec.Fake {
	return heldexec.NewFake(nil, heldexec.Answer(&driver.Result{}),
		heldexec.Fail(err, func(st driver.Statement) bool { return !savesCheck(st) }),
		heldexec.BeforeExec(func(context.Context, []driver.Statement) error { return err }))
}

// savesCheck reports whether st is the check of a save (or a description
// of a query): the paged statement with LIMIT 0, which reads no row. A
// run's page binds a limit of one row at least.
func savesCheck(st driver.Statement) bool {
	args := st.Args()
	return len(args) >= 2 && args[len(args)-2] == int64(0)
}

// A table the query names that does not exist is the query's mistake: its
// author reads the engine's words (a failure of the database itself stays
// a 502, see TestQueryErrorOverHTTP).
func TestQueryErrorIsTheAuthors(t *testing.T) {
	h := newHarness(t, nil)
	r := h.do("POST", "/api/projects/1/endpoints/", keyP1, map[string]any{
		"name": "broken", "query": sqlQuery("SELECT * FROM no_such_table", nil),
	})
	mustStatus(t, http.StatusBadRequest, r)
	checkErrorBody(t, r)
	assert.Equal(t, "query_error", r.Body["code"])
	assert.Equal(t, "The database refused the query: no such table: no_such_table (line 1, column 15).", r.detail())
}

func TestUnencodableResult(t *testing.T) {
	h := newHarness(t, nil)
	mustStatus(t, http.StatusCreated, h.do("POST", "/api/projects/1/endpoints/", keyP1, map[string]any{
		"name": "infinite", "query": sqlQuery("SELECT 1e999 AS x", nil),
	}))
	r := h.do("POST", "/api/projects/1/endpoints/infinite/run", keyP1, map[string]any{"variables": map[string]any{}})
	mustStatus(t, http.StatusBadGateway, r)
	checkErrorBody(t, r)
	assert.Equal(t, "result_not_encodable", r.Body["code"])
	assert.Contains(t, r.detail(), "+Inf")
}

func TestSQLStaysReadable(t *testing.T) {
	h := newHarness(t, nil)
	h.setupRange("1", keyP1)
	r := h.do("GET", "/api/projects/1/endpoints/in_range", keyP1, nil)
	mustStatus(t, http.StatusOK, r)
	assert.Contains(t, string(r.Raw), "timestamp >= {variables.from} AND timestamp < {variables.to}")
}
