package main

import (
	"encoding/json"
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
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
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
		if got, want := status, 201; got != want {
			t.Fatalf("%v: status = %v, want %v", body, got, want)
		}
		status, body = call(t, "POST", base+"/api/projects/"+project+"/endpoints/stats/run", key, `{"variables": {}}`)
		if got, want := status, 200; got != want {
			t.Fatalf("%v: status = %v, want %v", body, got, want)
		}
		if s, sub := body, `[400,`; !strings.Contains(s, sub) {
			t.Errorf("project %s has its 400 events: %q does not contain %q", project, s, sub)
		}
		answers[project] = body
	}
	if got, want := answers["2"], answers["1"]; got == want {
		t.Errorf("the projects' events differ: answers[\"2\"] = %q, want anything else", got)
	}

	status, _ := call(t, "GET", base+"/api/projects/2/endpoints/", "k1", "")
	if got, want := status, 403; got != want {
		t.Errorf("a key serves its own project only: status = %v, want %v", got, want)
	}

	for _, tc := range []struct{ sql, table string }{
		{"SELECT * FROM endpointkit_endpoints", "endpointkit_endpoints"},
		{"SELECT name FROM sqlite_master", "sqlite_master"},
		{"SELECT * FROM orders", "orders"},
	} {
		status, body := call(t, "POST", base+"/api/projects/1/endpoints/", "k1",
			`{"name": "leak", "query": {"kind": "HogQLQuery", "query": "`+tc.sql+`"}}`)
		if got, want := status, 400; got != want {
			t.Errorf("%v: status = %v, want %v", tc.sql, got, want)
		}
		if s, sub := body, tc.table; !strings.Contains(s, sub) {
			t.Errorf("%v: %q does not contain %q", tc.sql, s, sub)
		}
		if s, sub := body, `"code":"query_not_allowed"`; !strings.Contains(s, sub) {
			t.Errorf("%v: %q does not contain %q", tc.sql, s, sub)
		}
	}
}

func TestAPIKeyFlags(t *testing.T) {
	c, err := parseFlags([]string{"-api-key", "a", "-api-key", "b=7", "-api-key", "c=7", "-api-key", "d=9"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got, want := c.apiKey, "a"; got != want {
		t.Errorf("c.apiKey = %q, want %q", got, want)
	}
	if got, want := c.projects(), ([]string{"1", "7", "9"}); !reflect.DeepEqual(got, want) {
		t.Errorf("c.projects() = %+v, want %+v", got, want)
	}
	for _, bad := range [][]string{{"-api-key", "a", "-api-key", "b"}, {"-api-key", "=3"}, {"-api-key", "k="}} {
		_, err := parseFlags(bad, func(string) string { return "" }, io.Discard)
		if err == nil {
			t.Errorf("%v: got no error, want one", bad)
		}
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
	if !(i >= 0 && j > i) {
		t.Fatalf("no embed lines in:\n%s: i >= 0 && j > i is false", out)
	}
	script := s.session(t) + "\n" + out[i:j]
	cmd := exec.Command(bash, "-e")
	cmd.Stdin = strings.NewReader(script)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	got, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: unexpected error: %v", got, err)
	}
	var bodies []string
	for _, l := range strings.Split(strings.TrimSpace(string(got)), "\n") {
		if l != "" {
			bodies = append(bodies, l)
		}
	}
	if len(bodies) != len(sessionStatuses)+1 {
		t.Fatalf("%d bodies, want %d: %s", len(bodies), len(sessionStatuses)+1, got)
	}
	var sessionRun, tokenRun struct{ Results any }
	if err := json.Unmarshal([]byte(bodies[4]), &sessionRun); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if err := json.Unmarshal([]byte(bodies[len(bodies)-1]), &tokenRun); err != nil {
		t.Fatalf("%v: unexpected error: %v", bodies[len(bodies)-1], err)
	}
	if rows, ok := sessionRun.Results.([]any); !ok || len(rows) == 0 {
		t.Fatalf("sessionRun.Results = %v, want rows", sessionRun.Results)
	}
	if got, want := tokenRun.Results, sessionRun.Results; !reflect.DeepEqual(got, want) {
		t.Errorf("tokenRun.Results = %+v, want %+v", got, want)
	}
}

// TestNoKeyGeneratedWhenKeysGiven: given every key as KEY=PROJECT, the
// server generates, prints and accepts no key of its own; the session uses
// the given key of its project (the first given project when -project is
// not set), and a -project without a key is refused.
func TestNoKeyGeneratedWhenKeysGiven(t *testing.T) {
	s := start(t, []string{"-api-key", "k1=1", "-api-key", "k2=2", "-demo-events", "0"}, nil)
	out := s.out.String()
	if s, sub := out, "API key:     from -api-key\n"; !strings.Contains(s, sub) {
		t.Errorf("no key generated: %q does not contain %q", s, sub)
	}
	if re := regexp.MustCompile(`ek_[A-Z2-7]{26}`); re.MatchString(out) {
		t.Errorf("no generated key printed: %q matches %s", out, re)
	}
	if s, sub := s.session(t), "KEY='k1'\n"; !strings.Contains(s, sub) {
		t.Errorf("%q does not contain %q", s, sub)
	}
	if got, want := statuses(runSession(t, s.session(t), nil)), sessionStatuses; !reflect.DeepEqual(got, want) {
		t.Fatalf("statuses(runSession(t, s.session(t), nil)) = %+v, want %+v", got, want)
	}
	base := regexp.MustCompile(`server on (http://\S+)`).FindStringSubmatch(out)[1]
	for _, tc := range []struct {
		key, project string
		status       int
	}{{"k1", "1", 200}, {"k2", "2", 200}, {"k1", "2", 403}, {"k2", "1", 403}} {
		status, body := call(t, "GET", base+"/api/projects/"+tc.project+"/endpoints/", tc.key, "")
		if got, want := status, tc.status; got != want {
			t.Errorf("%s on %s: %s: status = %v, want %v", tc.key, tc.project, body, got, want)
		}
	}

	none := func(string) string { return "" }
	c, err := parseFlags([]string{"-api-key", "k7=7", "-api-key", "k8=8"}, none, io.Discard)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got, want := c.project, "7"; got != want {
		t.Errorf("the session is about the first given project: c.project = %q, want %q", got, want)
	}
	if got, want := c.apiKey, "k7"; got != want {
		t.Errorf("c.apiKey = %q, want %q", got, want)
	}
	if got, want := c.projects(), ([]string{"7", "8"}); !reflect.DeepEqual(got, want) {
		t.Errorf("no project without a key gets demo events: c.projects() = %+v, want %+v", got, want)
	}
	c, err = parseFlags([]string{"-api-key", "k7=7", "-api-key", "k8=8", "-project", "8"}, none, io.Discard)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got, want := c.apiKey, "k8"; got != want {
		t.Errorf("c.apiKey = %q, want %q", got, want)
	}
	_, err = parseFlags([]string{"-api-key", "k7=7", "-project", "3"}, none, io.Discard)
	if err := err; err == nil || !strings.Contains(err.Error(), "-project 3 has no API key") {
		t.Errorf("error %v does not contain %q", err, "-project 3 has no API key")
	}
	c, err = parseFlags(nil, none, io.Discard)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got, want := c.keySource, keyGenerated; got != want {
		t.Errorf("with no key at all, one is generated: c.keySource = %v, want %v", got, want)
	}
}
