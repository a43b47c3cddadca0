package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/examples/demo"
)

// syncBuffer is an io.Writer that the test may read while run writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// server is a run in progress.
type server struct {
	out  *syncBuffer
	stop func() error
}

// start runs the server with args until the returned stop is called, and
// waits until it has printed its session.
func start(t *testing.T, args []string, env map[string]string) *server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), func(k string) string { return env[k] }, out, io.Discard)
	}()
	deadline := time.After(60 * time.Second)
	for !strings.Contains(out.String(), "Press Ctrl-C") {
		select {
		case err := <-done:
			cancel()
			t.Fatalf("run returned before serving: %v\n%s", err, out)
		case <-deadline:
			cancel()
			t.Fatalf("no session printed within a minute:\n%s", out)
		case <-time.After(10 * time.Millisecond):
		}
	}
	stopped := false
	s := &server{out: out, stop: func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(30 * time.Second):
			return fmt.Errorf("run did not return within 30s of cancellation")
		}
	}}
	t.Cleanup(func() { _ = s.stop() })
	return s
}

// session returns the printed shell session.
func (s *server) session(t *testing.T) string {
	t.Helper()
	out := s.out.String()
	i := strings.Index(out, "\nKEY=")
	j := strings.Index(out, "Press Ctrl-C")
	require.True(t, i >= 0 && j > i, "no session in:\n%s", out)
	return out[i+1 : j]
}

// answer is the outcome of one curl command.
type answer struct {
	status int
	body   map[string]any
	raw    string
}

// runSession executes every curl command of the session, as curl would,
// and returns the answers in order.
func runSession(t *testing.T, script string, env map[string]string) []answer {
	t.Helper()
	cmds, err := shellCommands(script, func(k string) string { return env[k] })
	require.NoError(t, err)
	var answers []answer
	for _, cmd := range cmds {
		if cmd[0] == "echo" {
			continue
		}
		require.Equal(t, "curl", cmd[0], "the session runs only curl and echo: %q", cmd)
		answers = append(answers, curl(t, cmd[1:]))
	}
	return answers
}

// curl performs the request of curl arguments args: -sS, -X, -H, -d and
// one URL, the options the session uses.
func curl(t *testing.T, args []string) answer {
	t.Helper()
	method, url := "", ""
	var body *string
	header := http.Header{}
	for i := 0; i < len(args); i++ {
		switch a := args[i]; a {
		case "-sS":
		case "-X", "-H", "-d":
			require.Less(t, i+1, len(args), "%s needs a value", a)
			v := args[i+1]
			i++
			switch a {
			case "-X":
				method = v
			case "-H":
				k, val, ok := strings.Cut(v, ":")
				require.True(t, ok, "header %q", v)
				header.Add(k, strings.TrimSpace(val))
			case "-d":
				body = &v
			}
		default:
			require.False(t, strings.HasPrefix(a, "-"), "unexpected curl option %q", a)
			require.Empty(t, url, "two URLs")
			url = a
		}
	}
	if method == "" {
		method = "GET"
		if body != nil {
			method = "POST"
		}
	}
	var rd io.Reader
	if body != nil {
		rd = strings.NewReader(*body)
	}
	req, err := http.NewRequest(method, url, rd)
	require.NoError(t, err)
	req.Header = header
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	a := answer{status: res.StatusCode, raw: string(raw)}
	if len(raw) > 0 {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		require.NoError(t, dec.Decode(&a.body), "%s", raw)
	}
	return a
}

func statuses(answers []answer) []int {
	var s []int
	for _, a := range answers {
		s = append(s, a.status)
	}
	return s
}

// wantDaily is what the session's run answers for n demo events: per day of
// 2025-05-01 to 2025-05-07, purchases and distinct purchasers.
func wantDaily(n int) []any {
	type day struct {
		events int
		users  map[string]bool
	}
	days := map[string]*day{}
	from := time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC)
	to := from.AddDate(0, 0, 7)
	_ = demo.Generate(n, demoSeed, func(e demo.Event) error {
		if e.Event != "purchase" || e.Timestamp.Before(from) || !e.Timestamp.Before(to) {
			return nil
		}
		k := e.Timestamp.Format(time.DateOnly)
		if days[k] == nil {
			days[k] = &day{users: map[string]bool{}}
		}
		days[k].events++
		days[k].users[e.DistinctID] = true
		return nil
	})
	keys := make([]string, 0, len(days))
	for k := range days {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	rows := []any{}
	for _, k := range keys {
		rows = append(rows, []any{k, json.Number(fmt.Sprint(days[k].events)), json.Number(fmt.Sprint(len(days[k].users)))})
	}
	return rows
}

// sessionStatuses are the statuses of the printed session's requests on a
// fresh database: three variables, the endpoint, the run, the refused run,
// the list.
var sessionStatuses = []int{201, 201, 201, 201, 200, 400, 200}

// TestPrintedSessionWorks starts the server and runs the curl session it
// prints, verbatim, against it.
func TestPrintedSessionWorks(t *testing.T) {
	const n = 3000
	s := start(t, []string{"-api-key", "test-key", "-demo-events", fmt.Sprint(n)}, nil)
	answers := runSession(t, s.session(t), nil)
	require.Equal(t, sessionStatuses, statuses(answers), "%v", answers)

	run := answers[4].body
	assert.Equal(t, "daily_events", run["name"])
	assert.Equal(t, []any{"day", "events", "users"}, run["columns"])
	want := wantDaily(n)
	require.NotEmpty(t, want, "the session's range holds purchases")
	assert.Equal(t, want, run["results"])
	assert.Equal(t, "Required variable(s) 'to' not provided", answers[5].body["detail"])
	assert.Len(t, answers[6].body["results"], 1)

	require.NoError(t, s.stop())
	assert.Contains(t, s.out.String(), "Shutting down")
}

// TestKeys: the flag wins over the environment, the environment over a
// generated key, and the session works with each.
func TestKeys(t *testing.T) {
	cases := []struct {
		name string
		args []string
		env  map[string]string
		key  func(out string) string
	}{
		{"flag", []string{"-api-key", "flag-key"}, map[string]string{envAPIKey: "env-key"}, func(string) string { return "flag-key" }},
		{"environment", nil, map[string]string{envAPIKey: "env-key"}, func(string) string { return "env-key" }},
		{"generated", nil, nil, func(out string) string {
			m := regexp.MustCompile(`API key:\s+(ek_[A-Z2-7]{26}) \(generated`).FindStringSubmatch(out)
			if m == nil {
				return ""
			}
			return m[1]
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := start(t, append([]string{"-demo-events", "0", "-project", "42"}, c.args...), c.env)
			key := c.key(s.out.String())
			require.NotEmpty(t, key, "key not printed:\n%s", s.out)
			if c.name == "environment" {
				assert.NotContains(t, s.out.String(), "env-key", "a key from the environment is not printed")
			}
			answers := runSession(t, s.session(t), c.env)
			require.Equal(t, sessionStatuses, statuses(answers), "%v", answers)
			assert.Equal(t, []any{}, answers[4].body["results"], "no demo events: no rows")

			base := regexp.MustCompile(`server on (http://\S+)`).FindStringSubmatch(s.out.String())[1]
			for _, k := range []struct {
				key    string
				status int
			}{{key, 200}, {"wrong" + key, 401}} {
				req, err := http.NewRequest("GET", base+"/api/projects/42/endpoints/", nil)
				require.NoError(t, err)
				req.Header.Set("Authorization", "Bearer "+k.key)
				res, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				res.Body.Close()
				assert.Equal(t, k.status, res.StatusCode)
			}
			// The key is for -project only.
			req, err := http.NewRequest("GET", base+"/api/projects/1/endpoints/", nil)
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer "+key)
			res, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			res.Body.Close()
			assert.Equal(t, http.StatusForbidden, res.StatusCode)
		})
	}
	assert.NotEqual(t, newAPIKey(), newAPIKey())
}

// TestRestartKeepsState: with -db, variables, endpoints, versions and
// events survive a restart, and the events are not loaded twice.
func TestRestartKeepsState(t *testing.T) {
	const n = 2000
	path := filepath.Join(t.TempDir(), "endpointkit.db")
	args := []string{"-db", path, "-api-key", "k", "-demo-events", fmt.Sprint(n)}

	first := start(t, args, nil)
	answers := runSession(t, first.session(t), nil)
	require.Equal(t, sessionStatuses, statuses(answers))
	base := regexp.MustCompile(`server on (http://\S+)`).FindStringSubmatch(first.out.String())[1]
	patch, err := http.NewRequest("PATCH", base+"/api/projects/1/endpoints/daily_events", strings.NewReader(
		`{"query": {"kind": "HogQLQuery", "query": "SELECT count(*) AS n FROM events WHERE event = {variables.event} AND timestamp >= {variables.from} AND timestamp < {variables.to}", "variables": `+
			`{"`+sessionEventID+`": {"variableId": "`+sessionEventID+`", "code_name": "event"}, "`+sessionFromID+`": {"variableId": "`+sessionFromID+`", "code_name": "from"}, "`+sessionToID+`": {"variableId": "`+sessionToID+`", "code_name": "to"}}}}`))
	require.NoError(t, err)
	patch.Header.Set("Authorization", "Bearer k")
	patch.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(patch)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.NoError(t, first.stop())

	second := start(t, args, nil)
	assert.Contains(t, second.out.String(), fmt.Sprintf("demo events: %d already in the database", n))
	again := runSession(t, second.session(t), nil)
	// The creates conflict with what the first run stored; the run uses the
	// stored endpoint, now at version 2.
	require.Equal(t, []int{409, 409, 409, 409, 200, 400, 200}, statuses(again), "%v", again)
	assert.Equal(t, json.Number("2"), again[4].body["endpoint_version"])
	assert.Equal(t, []any{"n"}, again[4].body["columns"])
	list := again[6].body["results"].([]any)
	require.Len(t, list, 1)
	assert.Equal(t, json.Number("2"), list[0].(map[string]any)["versions_count"])

	// Version 1 is still there, and answers as it did before the restart.
	base = regexp.MustCompile(`server on (http://\S+)`).FindStringSubmatch(second.out.String())[1]
	v1 := curl(t, []string{"-X", "POST", base + "/api/projects/1/endpoints/daily_events/run",
		"-H", "Authorization: Bearer k", "-H", "Content-Type: application/json",
		"-d", `{"variables": {"event": "purchase", "from": "2025-05-01", "to": "2025-05-08"}, "version": 1}`})
	require.Equal(t, 200, v1.status, v1.raw)
	assert.Equal(t, wantDaily(n), v1.body["results"])
}

func TestFlagErrors(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-nope"}, "flag provided but not defined"},
		{[]string{"-demo-events", "-1"}, "-demo-events must be 0 or more"},
		{[]string{"-demo-events", "many"}, "invalid value"},
		{[]string{"-project", ""}, "-project must not be empty"},
		{[]string{"-api-key", "two words"}, "-api-key"},
		{[]string{"extra"}, "unexpected arguments"},
		{[]string{"-addr", busy.Addr().String(), "-demo-events", "0"}, "address already in use"},
		{[]string{"-db", filepath.Join(t.TempDir(), "no", "such", "dir.db")}, "open"},
	}
	for _, c := range cases {
		err := run(context.Background(), c.args, func(string) string { return "" }, io.Discard, io.Discard)
		require.Error(t, err, "%q", c.args)
		assert.Contains(t, err.Error(), c.want, "%q", c.args)
	}
}
