package httpapi_test

import (
	"bytes"
	"encoding/json"
	"github.com/stretchr/testify/require"
	"net/http"
	"net/http/httptest"
	"testing"
)

// FuzzQueryBody sends arbitrary bodies to POST query/, which runs what it
// is sent: the answer is always JSON, never a 500; an error has a detail
// and a code, and the one 5xx allowed is a 502 or 504 of the database (a
// query SQLite refuses or that runs out of time), never of the server.
// A success always says what the editor shows: placeholders, variables
// and the verdict.
func FuzzQueryBody(f *testing.F) {
	for _, s := range []string{
		`{"query": {"kind": "HogQLQuery", "query": "SELECT count(*) FROM events WHERE timestamp >= {variables.from}", "variables": {"` + idFrom + `": {"variableId": "` + idFrom + `", "code_name": "from", "value": "2025-05-01"}}}}`,
		`{"query": {"kind": "HogQLQuery", "query": "SELECT {variables.from} AS f", "variables": {"` + idFrom + `": {"code_name": "from", "value": 1e400}}}, "limit": 1}`,
		`{"query": {"kind": "HogQLQuery", "query": "SELECT {variables.from}", "variables": {"` + idFrom + `": {"value": ["a", {"b": null}]}}}}`,
		`{"query": {"kind": "HogQLQuery", "query": "SELECT {variables.nope}"}}`,
		`{"query": {"kind": "HogQLQuery", "query": "SELECT 1; SELECT 2"}}`,
		`{"query": {"kind": "HogQLQuery", "query": "SELECT * FROM endpointkit_endpoints"}}`,
		`{"query": {"kind": "HogQLQuery", "query": "SELECT 1", "variables": {"not-a-uuid": {}}}, "offset": -1}`,
		`{"query": {"kind": "TrendsQuery", "series": [{"event": "$pageview"}], "breakdownFilter": {"breakdown": "$browser"}}, "variables": {"$browser": "Chrome", "date_from": "-7d"}}`,
		`{"query": {"kind": "RetentionQuery", "retentionFilter": {"targetEntity": {"id": "signed_up"}, "returningEntity": {"id": "$pageview"}}}, "limit": 5}`,
		`{"query": {"kind": "TrendsQuery"}, "variables": {"x": 1}}`,
		`{"query": null}`, `{"query": "SELECT 1"}`, `{"query": {}}`, `{"debug": true}`,
		`[]`, `null`, ``, `{`, `{"query": {"kind": "HogQLQuery", "query": "\xff"}}`,
	} {
		f.Add([]byte(s))
	}
	h := newHarness(f, nil)
	mustStatus(f, http.StatusCreated, h.do("POST", "/api/projects/1/insight_variables/", keyP1, dateVar(idFrom, "From")))
	f.Fuzz(func(t *testing.T, body []byte) {
		req := httptest.NewRequest("POST", "/api/projects/1/query/", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+keyP1)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.handler.ServeHTTP(rec, req)
		var got map[string]any
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got), "%q: %d with a body that is not JSON: %q", body, rec.Code, rec.Body)
		switch {
		case rec.Code == http.StatusOK:
			for _, k := range []string{"kind", "results", "placeholders", "variables", "materialization"} {
				_, ok := got[k]
				require.True(t, ok, "%q: 200 without %q: %s", body, k, rec.Body)
			}
		case rec.Code == http.StatusBadGateway && got["code"] == "execution_failed",
			rec.Code == http.StatusGatewayTimeout && got["code"] == "timeout":
		case rec.Code >= 500:
			t.Fatalf("%q: %d %s", body, rec.Code, rec.Body)
		case got["detail"] == "" || got["code"] == "":
			t.Fatalf("%q: %d without detail or code: %s", body, rec.Code, rec.Body)
		}
	})
}
