package main

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// call sends a JSON request with a key and returns the status and body.
func call(t *testing.T, method, url, key, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// Each key serves its project, each project sees its own demo events, and
// no query reads the store's tables or another table than events.
func TestProjectsAreSandboxed(t *testing.T) {
	s := start(t, []string{"-api-key", "k1", "-api-key", "k2=2", "-demo-events", "400"}, nil)
	base := regexp.MustCompile(`server on (http://\S+)`).FindStringSubmatch(s.out.String())[1]
	create := `{"name": "stats", "query": {"kind": "HogQLQuery",
		"query": "SELECT count(*) AS n, min(timestamp) AS first FROM events"}}`
	answers := map[string]string{}
	for project, key := range map[string]string{"1": "k1", "2": "k2"} {
		status, body := call(t, "POST", base+"/api/projects/"+project+"/endpoints/", key, create)
		require.Equal(t, 201, status, body)
		status, body = call(t, "POST", base+"/api/projects/"+project+"/endpoints/stats/run", key, `{"variables": {}}`)
		require.Equal(t, 200, status, body)
		assert.Contains(t, body, `[400,`, "project %s has its 400 events", project)
		answers[project] = body
	}
	assert.NotEqual(t, answers["1"], answers["2"], "the projects' events differ")

	status, _ := call(t, "GET", base+"/api/projects/2/endpoints/", "k1", "")
	assert.Equal(t, 403, status, "a key serves its own project only")

	for _, tc := range []struct{ sql, table string }{
		{"SELECT * FROM endpointkit_endpoints", "endpointkit_endpoints"},
		{"SELECT name FROM sqlite_master", "sqlite_master"},
		{"SELECT * FROM orders", "orders"},
	} {
		status, body := call(t, "POST", base+"/api/projects/1/endpoints/", "k1",
			`{"name": "leak", "query": {"kind": "HogQLQuery", "query": "`+tc.sql+`"}}`)
		assert.Equal(t, 400, status, tc.sql)
		assert.Contains(t, body, tc.table, tc.sql)
		assert.Contains(t, body, `"code":"query_not_allowed"`, tc.sql)
	}
}

func TestAPIKeyFlags(t *testing.T) {
	c, err := parseFlags([]string{"-api-key", "a", "-api-key", "b=7", "-api-key", "c=7", "-api-key", "d=9"}, func(string) string { return "" }, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "a", c.apiKey)
	assert.Equal(t, []string{"1", "7", "9"}, c.projects())
	for _, bad := range [][]string{{"-api-key", "a", "-api-key", "b"}, {"-api-key", "=3"}, {"-api-key", "k="}} {
		_, err := parseFlags(bad, func(string) string { return "" }, io.Discard)
		assert.Error(t, err, bad)
	}
}
