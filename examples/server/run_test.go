package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"io"
	"net/http"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
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

// servedOn is the line by which the server says it serves, and its URL.
var servedOn = regexp.MustCompile(`server on (http://\S+)`)

// url is the base URL the server printed.
func (s *server) url() string { return servedOn.FindStringSubmatch(s.out.String())[1] }

// session returns the printed shell session.
func (s *server) session(t *testing.T) string {
	t.Helper()
	out := s.out.String()
	i := strings.Index(out, "\nKEY=")
	j := strings.Index(out, "Press Ctrl-C")
	require.True(t, (i >= 0 && j > i), "no session in:\n%s: i >= 0 && j > i is false", out)
	return out[i+1 : j]
}

// TestRestartKeepsState: with -db, variables, endpoints, versions and
// events survive a restart, and the events are not loaded twice.
func TestRestartKeepsState(t *testing.T) {
	const n = 2000
	path := filepath.Join(t.TempDir(), "endpointkit.db")
	args := []string{"-db", path, "-api-key", "k", "-demo-events", fmt.Sprint(n)}

	first := start(t, args, nil)
	answers := runSession(t, first.session(t), nil)
	got, want := statuses(answers), sessionStatuses
	require.Equal(t, want, got, "statuses(answers)")
	base := first.url()
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
	s, sub := second.out.String(), fmt.Sprintf("demo events: %d already in the database", n)
	assert.Contains(t, s, sub)
	again := runSession(t, second.session(t), nil)
	// The creates conflict with what the first run stored; the run uses the
	// stored endpoint, now at version 2.
	if got, want := statuses(again), ([]int{409, 409, 409, 409, 200, 400, 200}); !reflect.DeepEqual(got, want) {
		t.Fatalf("%v: statuses(again) = %+v, want %+v", again, got, want)
	}
	assert.Equal(t, json.Number("2"), again[4].body["endpoint_version"])
	assert.Equal(t, []any{"n"}, again[4].body["columns"])
	list := again[6].body["results"].([]any)
	require.Len(t, list, 1)
	assert.Equal(t, json.Number("2"), list[0].(map[string]any)["versions_count"])

	// Version 1 is still there, and answers as it did before the restart.
	base = second.url()
	v1 := curl(t, []string{"-X", "POST", base + "/api/projects/1/endpoints/daily_events/run",
		"-H", "Authorization: Bearer k", "-H", "Content-Type: application/json",
		"-d", `{"variables": {"event": "purchase", "from": "-7d", "to": "dStart"}, "version": 1}`})
	if got, want := v1.status, 200; got != want {
		t.Fatalf("%v: v1.status = %v, want %v", v1.raw, got, want)
	}
	if got, want := v1.body["results"], wantDaily(n); !reflect.DeepEqual(got, want) {
		t.Errorf("v1.body[\"results\"] = %+v, want %+v", got, want)
	}
}

// TestGracefulShutdown: a run in flight when the server is told to stop
// completes with its answer before run returns nil. The request is held in
// flight by a client that sends its body in two parts.
func TestGracefulShutdown(t *testing.T) {
	s := start(t, []string{"-api-key", "k", "-demo-events", "0"}, nil)
	base := s.url()
	create := curl(t, []string{"-X", "POST", base + "/api/projects/1/endpoints/", "-H", "Authorization: Bearer k",
		"-H", "Content-Type: application/json", "-d", `{"name": "one", "query": {"kind": "HogQLQuery", "query": "SELECT 1 AS one"}}`})
	got, want := create.status, http.StatusCreated
	require.Equal(t, want, got, "%v: create.status", create.raw)

	type result struct {
		status int
		body   string
		err    error
	}
	body, send := io.Pipe()
	answered := make(chan result, 1)
	go func() {
		req, _ := http.NewRequest("POST", base+"/api/projects/1/endpoints/one/run", body)
		req.Header.Set("Authorization", "Bearer k")
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			answered <- result{err: err}
			return
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		answered <- result{status: res.StatusCode, body: string(b), err: err}
	}()
	_, err := send.Write([]byte(`{"variables": `))
	require.NoError(t, err)
	time.Sleep(200 * time.Millisecond) // the handler is reading the body

	stopped := make(chan error, 1)
	go func() { stopped <- s.stop() }()
	time.Sleep(200 * time.Millisecond)
	select {
	case err := <-stopped:
		t.Fatalf("run returned with a request in flight: %v", err)
	default:
	}
	_, err = send.Write([]byte(`{}}`))
	require.NoError(t, err)
	require.NoError(t, send.Close())

	a := <-answered
	require.NoError(t, a.err)
	if got, want := a.status, http.StatusOK; got != want {
		t.Errorf("%v: a.status = %v, want %v", a.body, got, want)
	}
	assert.Contains(t, a.body, `"results":[[1]]`)
	if err := <-stopped; err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	_, err = http.Get(base + "/api/projects/1/endpoints/")
	assert.Error(t, err, "the listener is closed: got no error, want one")
}

func TestStopWhileLoading(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := run(ctx, []string{"-addr", "127.0.0.1:0", "-api-key", "k", "-demo-events", "100000"}, func(string) string { return "" }, io.Discard, io.Discard)
	assert.NoError(t, err, "a stop asked for is not a failure")
}
