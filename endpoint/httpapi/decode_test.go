package httpapi_test

import (
	"bytes"
	"encoding/json"
	"github.com/stretchr/testify/require"
	"net/http"
	"net/http/httptest"
	"testing"
)

// fuzzRoutes are the routes that decode a body. The endpoint and variable
// they change are not the ones "in_range" runs with, so that every run stays
// meaningful whatever the fuzzer did before.
var fuzzRoutes = []struct{ method, path string }{
	{"POST", runPath},
	{"POST", "/api/projects/1/endpoints/"},
	{"PATCH", "/api/projects/1/endpoints/scratch/"},
	{"POST", "/api/projects/1/insight_variables/"},
	{"PATCH", "/api/projects/1/insight_variables/" + idCountry},
}

// FuzzRequestBody sends arbitrary bodies and content types to every route
// that decodes one: whatever the client sends, the answer is never a 5xx
// and always a JSON body (an error one with detail and code).
func FuzzRequestBody(f *testing.F) {
	seeds := []string{
		`{"variables": {"from": "2025-05-01", "to": "2025-05-02"}}`,
		`{"variables": {"from": "2025-05-01", "to": "2025-05-02"}, "limit": 2, "offset": 1, "debug": true, "version": 1}`,
		`{"variables": {"from": 1e400, "to": -0}}`,
		`{"variables": {"from": ["a"], "to": {"b": null}}}`,
		`{"variables": {}, "limit": -1}`,
		`{"variables": {}, "limit": 99999999999999999999}`,
		`{"variables": null, "refresh": "force"}`,
		`{"name": "x", "query": {"kind": "HogQLQuery", "query": "SELECT {variables.from}", "variables": {"` + idFrom + `": {"variableId": "` + idFrom + `", "code_name": "from"}}}}`,
		`{"name": "y", "query": {"kind": "TrendsQuery", "series": [{"event": "$pageview"}], "breakdownFilter": {"breakdown": "$browser"}}}`,
		`{"name": "z", "query": {"kind": "HogQLQuery", "query": "SELECT '{variables.x}'"}}`,
		`{"query": {"kind": "Nope"}}`,
		`{"id": "` + idCountry + `", "name": "Country", "type": "List", "values": ["US", "GB"], "is_multi": true, "default_value": ["US"]}`,
		`{"name": "n", "type": "Number", "default_value": 1.5e308}`,
		`{"default_value": {"nested": [1, 2, 3]}}`,
		`{"code_name": "1bad"}`,
		`[]`, `null`, `"x"`, `0`, ``, `{`, `{}{}`, `{"a":1,"a":2}`, "{\"variables\": {\"from\": \"\xff\"}}",
	}
	for i, s := range seeds {
		f.Add(uint8(i), "application/json", []byte(s))
	}
	f.Add(uint8(0), "text/plain", []byte(`{}`))
	f.Add(uint8(1), "", []byte(`{}`))
	f.Add(uint8(2), "application/merge-patch+json; charset=UTF-8", []byte(`{"description": "d"}`))

	h := newHarness(f, nil)
	h.setupRange("1", keyP1)
	mustStatus(f, http.StatusCreated, h.do("POST", "/api/projects/1/endpoints/", keyP1, map[string]any{"name": "scratch", "query": sqlQuery("SELECT 1 AS one", nil)}))
	mustStatus(f, http.StatusCreated, h.do("POST", "/api/projects/1/insight_variables/", keyP1, map[string]any{"id": idCountry, "name": "country", "type": "String"}))

	f.Fuzz(func(t *testing.T, route uint8, contentType string, body []byte) {
		rt := fuzzRoutes[int(route)%len(fuzzRoutes)]
		req := httptest.NewRequest(rt.method, rt.path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+keyP1)
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		rec := httptest.NewRecorder()
		h.handler.ServeHTTP(rec, req)
		require.Less(t, rec.Code, 500, "%s %s %q %s", rt.method, rt.path, body, rec.Body)
		var got map[string]any
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got), "%s %s %q: %d with a body that is not JSON: %q", rt.method, rt.path, body, rec.Code, rec.Body)
		if rec.Code >= 400 && (got["detail"] == "" || got["code"] == "") {
			t.Fatalf("%s %s %q: %d without detail or code: %s", rt.method, rt.path, body, rec.Code, rec.Body)
		}
	})
}
