package main

import (
	"bytes"
	"context"
	"fmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestMain serves the baseline when run re-executes the test binary as it
// re-executes the command's.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == baselineCommand {
		os.Exit(baselineMain(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// TestRun runs the whole load test, small: it builds and starts the
// example server and the baseline, and prints a table with a row per query
// and concurrency, every figure above zero.
func TestRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts examples/server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, progress bytes.Buffer
	err := run(ctx, []string{"-rounds", "1", "-duration", "200ms", "-warmup", "50ms", "-demo-events", "2000"}, &out, &progress)
	require.NoError(t, err, "run\nprogress:\n%s", &progress)
	table := out.String()
	assert.True(t, regexp.MustCompile(`the server counted [1-9]\d* runs, 0 of them without a query of their own, and \d+ it did not record in its run log`).MatchString(table), "the header does not say every run ran its query:\n%s", table)
	assert.Regexp(t, `load average (unknown|[\d.]+ [\d.]+ [\d.]+) before the rounds and (unknown|[\d.]+ [\d.]+ [\d.]+) after\.`, table, "the header does not say the machine's load")
	require.Contains(t, table, tableHeader+"\n", "no table header in")
	cell := regexp.MustCompile(`^(\d+) us$|^([\d.]+) ms$|^([\d,]+(?:\.\d)?)$|^([\d.]+)x$`)
	for _, want := range []string{
		"| `SELECT 1` | 1 |",
		"| `SELECT 1` | 8 |",
		"| count of one event, scoped to the project | 1 |",
		"| count of one event, scoped to the project | 8 |",
	} {
		var line string
		for l := range strings.SplitSeq(table, "\n") {
			if strings.HasPrefix(l, want) {
				line = l
			}
		}
		if !assert.NotEqual(t, "", line, "no row %q in:\n%s", want, table) {
			continue
		}
		fields := strings.Split(strings.Trim(line, "| "), " | ")
		got, want := len(fields), 12
		if !assert.Equal(t, want, got, "%s: fields", line) {
			continue
		}
		// The CPU time and the switches per request of each side and
		// their ratios, or unknown where /proc is not.
		if _, err := os.Stat("/proc/self/stat"); err == nil {
			assert.Regexp(t, `^\d[\d.]* (us|ms) / \d[\d.]* (us|ms) = [\d.]+x$`, fields[10], "%s: CPU per request", line)
			assert.Regexp(t, `^\d+\.\d\d / \d+\.\d\d = ([\d.]+x|n/a)$`, fields[11], "%s: switches per request", line)
		}
		for _, f := range fields[2:10] {
			m := cell.FindStringSubmatch(f)
			if !assert.NotNil(t, m, "%s: %q is not a figure", line, f) {
				continue
			}
			num := strings.ReplaceAll(m[1]+m[2]+m[3]+m[4], ",", "")
			v, err := strconv.ParseFloat(num, 64)
			if assert.NoError(t, err, "%s: %q is not above zero", line, f) {
				assert.True(t, (v > 0), "%s: %q is not above zero", line, f)
			}
		}
	}
	if t.Failed() {
		t.Logf("progress:\n%s", &progress)
	}
}

// TestParseFlags: each bad setting is refused with an error naming its
// flag.
func TestParseFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-rounds", "0"}, "-rounds"},
		{[]string{"-duration", "0s"}, "-duration"},
		{[]string{"-warmup", "-1s"}, "-warmup"},
		{[]string{"-concurrency", "1,x"}, "-concurrency"},
		{[]string{"-concurrency", "0"}, "-concurrency"},
		{[]string{"-demo-events", "0"}, "-demo-events"},
		{[]string{"-event", ""}, "-event"},
		{[]string{"-start-timeout", "0s"}, "-start-timeout"},
		{[]string{"extra"}, "unexpected arguments"},
		{[]string{"-queries", "select1,nope"}, "-queries"},
		{[]string{"-queries", ""}, "-queries"},
	} {
		_, err := parseFlags(tc.args, &bytes.Buffer{})
		assert.ErrorContains(t, err, tc.want, "parseFlags(%q)", tc.args)
	}
	c, err := parseFlags([]string{"-concurrency", "1, 4,16"}, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, "[1 4 16]", fmt.Sprint(c.concurrency), "concurrency")
	assert.Equal(t, []string{"select1", "count"}, c.only, "the queries measured by default")
	c, err = parseFlags([]string{"-queries", "count, count", "-server-args", " -pprof-addr  127.0.0.1:0 "}, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, []string{"count"}, c.only, "-queries")
	assert.Equal(t, []string{"-pprof-addr", "127.0.0.1:0"}, c.serverArgs, "-server-args")
	c, err = parseFlags([]string{"-baseline-args", "-pprof-addr 127.0.0.1:0"}, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, []string{"-pprof-addr", "127.0.0.1:0"}, c.baselineArgs, "-baseline-args")
}

// TestDriveFailsLoudly: a run that gets an answer but a 200 with results
// is an error, not figures.
func TestDriveFailsLoudly(t *testing.T) {
	var n atomic.Int64
	for _, tc := range []struct {
		name string
		h    http.HandlerFunc
		want string
	}{
		{"status", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, `{"detail": "too many runs"}`, http.StatusTooManyRequests)
		}, "status 429"},
		{"later status", func(w http.ResponseWriter, r *http.Request) {
			if n.Add(1) > 5 {
				http.Error(w, `{"detail": "boom"}`, http.StatusInternalServerError)
				return
			}
			fmt.Fprint(w, `{"columns":["1"],"results":[[1]]}`)
		}, "status 500"},
		{"no results", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, `{"detail": "ok"}`)
		}, "without results"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.h)
			defer srv.Close()
			s, err := drive(context.Background(), target{client: newClient(2), url: srv.URL, key: "k", bodies: [][]byte{[]byte(`{}`)}}, 1, time.Second)
			assert.ErrorContains(t, err, tc.want, "drive = %d requests", len(s.times))
		})
	}
}

// TestSameAnswer: the library's and the handler's answers must agree, and
// a count must have found events.
func TestSameAnswer(t *testing.T) {
	serve := func(body string) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, body) }))
	}
	lib := serve(`{"name":"count","endpoint_version":1,"columns":["n"],"types":["INTEGER"],"results":[[12]],"hasMore":false}`)
	defer lib.Close()
	same := serve(`{"columns":["n"],"results":[[12]]}`)
	defer same.Close()
	other := serve(`{"columns":["n"],"results":[[13]]}`)
	defer other.Close()
	zero := serve(`{"columns":["n"],"results":[[0]]}`)
	defer zero.Close()
	at := func(s *httptest.Server) target {
		return target{client: newClient(1), url: s.URL, key: "k", bodies: [][]byte{[]byte(`{}`)}}
	}
	ctx := context.Background()
	assert.NoError(t, sameAnswer(ctx, at(lib), at(same), true), "same answers")
	err := sameAnswer(ctx, at(lib), at(other), true)
	assert.ErrorContains(t, err, "differ", "different answers")
	if err := sameAnswer(ctx, at(zero), at(zero), true); err == nil || !strings.Contains(err.Error(), "above 0") {
		t.Errorf("a count of zero: %v, want an error", err)
	}
	assert.NoError(t, sameAnswer(ctx, at(zero), at(zero), false), "zero where no count is asked for")
}

// TestSummarize: nearest-rank quantiles and the rate over the rounds'
// time together.
func TestSummarize(t *testing.T) {
	var times []time.Duration
	for i := 100; i >= 1; i-- {
		times = append(times, time.Duration(i)*time.Millisecond)
	}
	s := summarize([]sample{{times: times[:50], elapsed: time.Second}, {times: times[50:], elapsed: time.Second}})
	got, want := s.p50, 50*time.Millisecond
	assert.Equal(t, want, got, "p50")
	if got, want := s.p99, 99*time.Millisecond; got != want {
		t.Errorf("p99 = %v, want %v", got, want)
	}
	assert.Equal(t, 50.0, s.perSec, "perSec")
}

// TestFormat: the table's figures.
func TestFormat(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{formatDuration(720 * time.Microsecond), "720 us"},
		{formatDuration(1634 * time.Microsecond), "1.63 ms"},
		{formatDuration(24512 * time.Microsecond), "24.5 ms"},
		{formatDuration(105 * time.Millisecond), "105 ms"},
		{formatRate(41.25), "41.2"},
		{formatRate(1150.4), "1,150"},
		{formatRate(1234567), "1,234,567"},
		{formatRatio(3, 2), "1.50x"},
		{formatRatio(3, 0), "n/a"},
	} {
		assert.Equal(t, tc.want, tc.got)
	}
}

// TestParseRuns reads the run counters of one project from the example
// server's metrics.
func TestParseRuns(t *testing.T) {
	metrics := []byte(`# HELP endpointkit_runs_total Endpoint runs.
# TYPE endpointkit_runs_total counter
endpointkit_runs_total{cached="false",endpoint="count",materialized="false",project="1",status="200"} 120
endpointkit_runs_total{cached="true",endpoint="count",materialized="false",project="1",status="200"} 3
endpointkit_runs_total{cached="false",endpoint="count",materialized="false",project="1",status="400"} 7
endpointkit_runs_total{cached="false",endpoint="count",materialized="false",project="2",status="200"} 50
endpointkit_runs_total{cached="false",endpoint="select1",materialized="false",project="1",status="200"} 9
endpointkit_cache_hits_total{endpoint="count",project="1"} 3
endpointkit_cache_hits_total{endpoint="count",project="2"} 4
`)
	got, err := parseRuns(metrics, "1")
	require.NoError(t, err)
	assert.Equal(t, "map[count:{123 3} select1:{9 0}]", fmt.Sprint(got), "parseRuns")
	if _, err := parseLogErrors(metrics); err == nil {
		t.Error("parseLogErrors found a counter the metrics do not have")
	}
	n, err := parseLogErrors(append(metrics, "# TYPE endpointkit_run_log_errors_total counter\nendpointkit_run_log_errors_total 17\n"...))
	if assert.NoError(t, err, "parseLogErrors = %d, %v; want 17", n, err) {
		assert.Equal(t, 17, n, "parseLogErrors = %d, %v; want 17", n, err)
	}
}

// TestCheckRuns: the server's count must match the answers the load test
// got, and no run may go without its own query unless that is allowed.
func TestCheckRuns(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer mk" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, `endpointkit_runs_total{cached="false",endpoint="count",materialized="false",project="1",status="200"} 10
endpointkit_cache_hits_total{endpoint="count",project="1"} 2
`)
	}))
	defer srv.Close()
	ctx, client := context.Background(), newClient(1)
	_, err := checkRuns(ctx, client, srv.URL, "mk", map[string]int{"count": 10}, true)
	assert.NoError(t, err, "matching counts, shared allowed")
	if _, err := checkRuns(ctx, client, srv.URL, "mk", map[string]int{"count": 10}, false); err == nil || !strings.Contains(err.Error(), "without a query") {
		t.Errorf("shared runs not allowed: %v, want an error", err)
	}
	if _, err := checkRuns(ctx, client, srv.URL, "mk", map[string]int{"count": 11}, true); err == nil || !strings.Contains(err.Error(), "counted 10 runs") {
		t.Errorf("a run the server did not count: %v, want an error", err)
	}
	if _, err := checkRuns(ctx, client, srv.URL, "wrong", map[string]int{"count": 10}, true); err == nil || !strings.Contains(err.Error(), "status 401") {
		t.Errorf("a refused key: %v, want an error", err)
	}
}

// TestStatCPU: a process's CPU time is read from /proc/<pid>/stat after
// the command's name, whatever that name holds, and a line that is not
// one is refused; this process's own has used some CPU.
func TestStatCPU(t *testing.T) {
	line := "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 1500 0 0 0 250 130 0 0 20 0 9 0 100 0 0\n"
	got, ok := statCPU(line)
	require.True(t, ok, "the line of a process with spaces and parentheses in its name")
	assert.Equal(t, 3800*time.Millisecond, got, "utime 250 + stime 130 ticks")
	for _, bad := range []string{"", "4242 no name", "4242 (x) S 1 2", "4242 (x) S 1 2 3 4 5 6 7 8 9 ten 11", "4242 (x) S 1 2 3 4 5 6 7 8 9 10 x 12"} {
		_, ok := statCPU(bad)
		assert.False(t, ok, "%q", bad)
	}
	self := &proc{cmd: &exec.Cmd{Process: &os.Process{Pid: os.Getpid()}}}
	if _, err := os.Stat("/proc/self/stat"); err == nil {
		_, ok := self.cpu()
		assert.True(t, ok, "this process's CPU time")
	}
}

// TestStatusSwitches: a thread's switches are its voluntary and
// nonvoluntary ones of /proc/<pid>/task/<tid>/status, summed; a status
// without both, or with one that is not a count, is refused; this
// process's own threads have been switched out.
func TestStatusSwitches(t *testing.T) {
	status := "Name:\tserver\nState:\tS (sleeping)\nvoluntary_ctxt_switches:\t120\nnonvoluntary_ctxt_switches:\t7\n"
	got, ok := statusSwitches(status)
	require.True(t, ok)
	assert.Equal(t, int64(127), got)
	for _, bad := range []string{"", "Name:\tx\nvoluntary_ctxt_switches:\t3\n", "voluntary_ctxt_switches:\tmany\nnonvoluntary_ctxt_switches:\t1\n",
		"voluntary_ctxt_switches:\t-2\nnonvoluntary_ctxt_switches:\t1\n"} {
		_, ok := statusSwitches(bad)
		assert.False(t, ok, "%q", bad)
	}
	if _, err := os.Stat("/proc/self/task"); err == nil {
		self := &proc{cmd: &exec.Cmd{Process: &os.Process{Pid: os.Getpid()}}}
		n, ok := self.switches()
		assert.True(t, ok, "this process's switches")
		assert.Positive(t, n)
	}
	gone := &proc{cmd: &exec.Cmd{Process: &os.Process{Pid: -1}}}
	_, ok = gone.switches()
	assert.False(t, ok, "a process that is not there")
}

// TestSummarizeSwitches: the switches per request pool the samples'
// switches over all their requests, and are unknown (-1) when any
// sample's were not read.
func TestSummarizeSwitches(t *testing.T) {
	ms := time.Millisecond
	a := sample{times: []time.Duration{ms, ms, ms}, elapsed: time.Second, switches: 9, switchesOK: true}
	b := sample{times: []time.Duration{ms}, elapsed: time.Second, switches: 1, switchesOK: true}
	assert.InDelta(t, 2.5, summarize([]sample{a, b}).switchesPerReq, 1e-9, "10 switches over 4 requests")
	b.switchesOK = false
	assert.Equal(t, -1.0, summarize([]sample{a, b}).switchesPerReq, "one sample without its switches")
}

// TestSummarizeCPU: the CPU time per request pools the samples' CPU over
// all their requests, and is unknown (0) when any sample's was not read.
func TestSummarizeCPU(t *testing.T) {
	ms := time.Millisecond
	a := sample{times: []time.Duration{ms, ms, ms}, elapsed: time.Second, cpu: 30 * ms, cpuOK: true}
	b := sample{times: []time.Duration{ms}, elapsed: time.Second, cpu: 10 * ms, cpuOK: true}
	assert.Equal(t, 10*ms, summarize([]sample{a, b}).cpuPerReq, "40 ms over 4 requests")
	b.cpuOK = false
	assert.Zero(t, summarize([]sample{a, b}).cpuPerReq, "one sample without its CPU time")
}
