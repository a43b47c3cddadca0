package main

import (
	"encoding/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"io"
	"net/http"
	"os"
	"os/exec"
	"reflect"
	"regexp"
	"strings"
	"testing"
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
	base := s.url()
	create := `{"name": "stats", "query": {"kind": "HogQLQuery",
		"query": "SELECT count(*) AS n, min(timestamp) AS first FROM events"}}`
	answers := map[string]string{}
	for project, key := range map[string]string{"1": "k1", "2": "k2"} {
		status, body := call(t, "POST", base+"/api/projects/"+project+"/endpoints/", key, create)
		got, want := status, 201
		require.Equal(t, want, got, "%v: status", body)
		status, body = call(t, "POST", base+"/api/projects/"+project+"/endpoints/stats/run", key, `{"variables": {}}`)
		if got, want := status, 200; got != want {
			t.Fatalf("%v: status = %v, want %v", body, got, want)
		}
		assert.Contains(t, body, `[400,`, "project %s has its 400 events", project)
		answers[project] = body
	}
	assert.NotEqual(t, answers["1"], answers["2"], "the projects' events differ: answers[\"2\"]")

	status, _ := call(t, "GET", base+"/api/projects/2/endpoints/", "k1", "")
	got, want := status, 403
	assert.Equal(t, want, got, "a key serves its own project only: status")

	for _, tc := range []struct{ sql, table string }{
		{"SELECT * FROM endpointkit_endpoints", "endpointkit_endpoints"},
		{"SELECT name FROM sqlite_master", "sqlite_master"},
		{"SELECT * FROM orders", "orders"},
	} {
		status, body := call(t, "POST", base+"/api/projects/1/endpoints/", "k1",
			`{"name": "leak", "query": {"kind": "HogQLQuery", "query": "`+tc.sql+`"}}`)
		got, want := status, 400
		assert.Equal(t, want, got, "%v: status", tc.sql)
		assert.Contains(t, body, tc.table, "%v", tc.sql)
		assert.Contains(t, body, `"code":"query_not_allowed"`, "%v", tc.sql)
	}
}

func TestAPIKeyFlags(t *testing.T) {
	c, err := parseFlags([]string{"-api-key", "a", "-api-key", "b=7", "-api-key", "c=7", "-api-key", "d=9"}, func(string) string { return "" }, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "a", c.apiKey)
	assert.Equal(t, []string{"1", "7", "9"}, c.projects())
	for _, bad := range [][]string{{"-api-key", "a", "-api-key", "b"}, {"-api-key", "=3"}, {"-api-key", "k="}} {
		_, err := parseFlags(bad, func(string) string { return "" }, io.Discard)
		assert.Error(t, err, "%v: got no error, want one", bad)
	}
}

// TestPrintedEmbedWorks pastes the session, then the printed embed lines,
// into bash: the token's run answers what the session's run answered, its
// event fixed by the token.
func TestPrintedEmbedWorks(t *testing.T) {
	bash, errBash := exec.LookPath("bash")
	_, errCurl := exec.LookPath("curl")
	if errBash != nil || errCurl != nil {
		t.Skip("bash or curl not installed")
	}
	s := start(t, []string{"-api-key", "embed-test-key", "-demo-events", "2000"}, nil)
	out := s.out.String()
	i := strings.Index(out, "TOKEN=$(")
	j := strings.Index(out, "\nTry it:")
	require.True(t, (i >= 0 && j > i), "no embed lines in:\n%s: i >= 0 && j > i is false", out)
	script := s.session(t) + "\n" + out[i:j]
	cmd := exec.Command(bash, "-e")
	cmd.Stdin = strings.NewReader(script)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	got, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", got)
	var bodies []string
	for _, l := range strings.Split(strings.TrimSpace(string(got)), "\n") {
		if l != "" {
			bodies = append(bodies, l)
		}
	}
	require.Len(t, bodies, len(sessionStatuses)+1, "%d bodies, want %d: %s", len(bodies), len(sessionStatuses)+1, got)
	var sessionRun, tokenRun struct{ Results any }
	require.NoError(t, json.Unmarshal([]byte(bodies[4]), &sessionRun))
	require.NoError(t, json.Unmarshal([]byte(bodies[len(bodies)-1]), &tokenRun), "%v", bodies[len(bodies)-1])
	rows, ok := sessionRun.Results.([]any)
	require.True(t, ok, "sessionRun.Results = %v, want rows", sessionRun.Results)
	require.NotEmpty(t, rows, "sessionRun.Results = %v, want rows", sessionRun.Results)
	assert.Equal(t, sessionRun.Results, tokenRun.Results)
}

// TestNoKeyGeneratedWhenKeysGiven: given every key as KEY=PROJECT, the
// server generates, prints and accepts no key of its own; the session uses
// the given key of its project (the first given project when -project is
// not set), and a -project without a key is refused.
func TestNoKeyGeneratedWhenKeysGiven(t *testing.T) {
	s := start(t, []string{"-api-key", "k1=1", "-api-key", "k2=2", "-demo-events", "0"}, nil)
	out := s.out.String()
	assert.Contains(t, out, "API key:     from -api-key\n", "no key generated")
	re := regexp.MustCompile(`ek_[A-Z2-7]{26}`)
	assert.False(t, re.MatchString(out), "no generated key printed: %q matches %s", out, re)
	assert.Contains(t, s.session(t), "KEY='k1'\n")
	got, want := statuses(runSession(t, s.session(t), nil)), sessionStatuses
	require.Equal(t, want, got, "statuses(runSession(t, s.session(t), nil))")
	base := servedOn.FindStringSubmatch(out)[1]
	for _, tc := range []struct {
		key, project string
		status       int
	}{{"k1", "1", 200}, {"k2", "2", 200}, {"k1", "2", 403}, {"k2", "1", 403}} {
		status, body := call(t, "GET", base+"/api/projects/"+tc.project+"/endpoints/", tc.key, "")
		got, want := status, tc.status
		assert.Equal(t, want, got, "%s on %s: %s: status", tc.key, tc.project, body)
	}

	none := func(string) string { return "" }
	c, err := parseFlags([]string{"-api-key", "k7=7", "-api-key", "k8=8"}, none, io.Discard)
	require.NoError(t, err)
	if got, want := c.project, "7"; got != want {
		t.Errorf("the session is about the first given project: c.project = %q, want %q", got, want)
	}
	assert.Equal(t, "k7", c.apiKey)
	if got, want := c.projects(), ([]string{"7", "8"}); !reflect.DeepEqual(got, want) {
		t.Errorf("no project without a key gets demo events: c.projects() = %+v, want %+v", got, want)
	}
	c, err = parseFlags([]string{"-api-key", "k7=7", "-api-key", "k8=8", "-project", "8"}, none, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "k8", c.apiKey)
	_, err = parseFlags([]string{"-api-key", "k7=7", "-project", "3"}, none, io.Discard)
	assert.ErrorContains(t, err, "-project 3 has no API key")
	c, err = parseFlags(nil, none, io.Discard)
	require.NoError(t, err)
	if got, want := c.keySource, keyGenerated; got != want {
		t.Errorf("with no key at all, one is generated: c.keySource = %v, want %v", got, want)
	}
}
