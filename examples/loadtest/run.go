package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// project is the project both sides serve, the one the key is for.
const project = "1"

// config is the parsed command line.
type config struct {
	rounds       int
	duration     time.Duration
	warmup       time.Duration
	concurrency  []int
	demoEvents   int
	event        string
	serverBin    string
	sameBody     bool
	startTimeout time.Duration
	// only are the names of the queries measured (select1, count), all
	// when empty.
	only []string
	// serverArgs are more flags for examples/server, after the load
	// test's own (-pprof-addr to profile it under the load).
	serverArgs []string
	// baselineArgs are more flags for the baseline (its -pprof-addr).
	baselineArgs []string
}

// parseFlags reads args.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("loadtest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&c.rounds, "rounds", 4, "rounds; each sends every query at every concurrency to both sides")
	fs.DurationVar(&c.duration, "duration", 2*time.Second, "time each side is sent one query at one concurrency in a round")
	fs.DurationVar(&c.warmup, "warmup", 500*time.Millisecond, "time each side is sent each query at each concurrency before the first round, not measured")
	conc := fs.String("concurrency", "1,8", "comma-separated numbers of clients sending at once")
	only := fs.String("queries", "select1,count", "comma-separated names of the queries measured: select1 (SELECT 1), count (the scoped count)")
	baselineArgs := fs.String("baseline-args", "", "more flags for the baseline handler, separated by spaces (-pprof-addr 127.0.0.1:6162 to profile it under the load)")
	serverArgs := fs.String("server-args", "", "more flags for examples/server, separated by spaces, after the load test's own (-pprof-addr 127.0.0.1:6161 to profile it under the load)")
	fs.IntVar(&c.demoEvents, "demo-events", 100000, "demo events the server loads into the fresh SQLite file (-demo-events of examples/server)")
	fs.StringVar(&c.event, "event", "purchase", "the event the count endpoint counts ($pageview, $autocapture, signed_up, purchase)")
	fs.BoolVar(&c.sameBody, "same-body", false, "send every request of a query with the same body; the library then answers identical runs in flight at once with one query (its single flight), so not every request runs its query (default: each request asks a different limit, above the one row of the answers)")
	fs.StringVar(&c.serverBin, "server-bin", "", "an examples/server binary to run (default: go build it into a temporary directory)")
	fs.DurationVar(&c.startTimeout, "start-timeout", 3*time.Minute, "how long each server may take to start serving (loading the demo events included)")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	for _, f := range strings.Split(*conc, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return config{}, fmt.Errorf("-concurrency must be numbers of 1 or more separated by commas, got %q", *conc)
		}
		c.concurrency = append(c.concurrency, n)
	}
	known := map[string]bool{}
	for _, q := range queries("x", true) {
		known[q.name] = true
	}
	for _, f := range strings.Split(*only, ",") {
		name := strings.TrimSpace(f)
		if !known[name] {
			return config{}, fmt.Errorf("-queries must be names of select1 and count separated by commas, got %q", *only)
		}
		if !slices.Contains(c.only, name) {
			c.only = append(c.only, name)
		}
	}
	c.serverArgs = strings.Fields(*serverArgs)
	c.baselineArgs = strings.Fields(*baselineArgs)
	switch {
	case c.rounds < 1:
		return config{}, fmt.Errorf("-rounds must be 1 or more, got %d", c.rounds)
	case c.duration <= 0:
		return config{}, fmt.Errorf("-duration must be more than 0, got %s", c.duration)
	case c.warmup < 0:
		return config{}, fmt.Errorf("-warmup must be 0 or more, got %s", c.warmup)
	case c.demoEvents < 1:
		return config{}, fmt.Errorf("-demo-events must be 1 or more (the count needs events), got %d", c.demoEvents)
	case c.event == "":
		return config{}, errors.New("-event must not be empty")
	case c.startTimeout <= 0:
		return config{}, fmt.Errorf("-start-timeout must be more than 0, got %s", c.startTimeout)
	}
	return c, nil
}

// query is one endpoint both sides serve.
type query struct {
	label  string   // in the table
	name   string   // the endpoint's name, in its run route
	bodies [][]byte // the run request's bodies, sent in turn
}

// distinctBodies is how many different bodies a query's requests take in
// turn unless -same-body: more than any number of clients in flight.
const distinctBodies = 1024

// queries are the endpoints measured, in the table's order. Unless same,
// each has distinctBodies bodies that differ in their limit (1,000 to
// 2,023, above the one row of each answer), so that no two runs in flight
// at once are identical: the library answers identical runs in flight with
// one query (single flight), which would spare it work the handler does.
// The handler ignores the limit, as its answers have one row.
func queries(event string, same bool) []query {
	name, _ := json.Marshal(event) //nolint:errcheck // a string always encodes
	bodies := func(vars string) [][]byte {
		if same {
			return [][]byte{[]byte(`{"variables": ` + vars + `}`)}
		}
		out := make([][]byte, distinctBodies)
		for i := range out {
			out[i] = []byte(`{"variables": ` + vars + `, "limit": ` + strconv.Itoa(1000+i) + `}`)
		}
		return out
	}
	return []query{
		{"`SELECT 1`", "select1", bodies(`{}`)},
		{"count of one event, scoped to the project", "count", bodies(`{"name": ` + string(name) + `}`)},
	}
}

// row is one line of the table: a query at a concurrency, both sides.
type row struct {
	q                  query
	c                  int
	library, handler   []sample
	libStats, hdlStats stats
}

// run is the whole load test: it parses args, starts both servers, checks
// their answers agree, measures them and prints the table to stdout
// (progress to stderr), then stops both.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "endpointkit-loadtest-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := cfg.serverBin
	if bin == "" {
		fmt.Fprintln(stderr, "building examples/server...")
		if bin, err = buildServer(ctx, dir); err != nil {
			return err
		}
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("the baseline is this binary: %w", err)
	}
	key, metricsKey := "lt_"+rand.Text(), "lm_"+rand.Text()
	dbPath := filepath.Join(dir, "events.db")

	fmt.Fprintf(stderr, "starting examples/server (%d demo events)...\n", cfg.demoEvents)
	serverArgs := append([]string{"-addr", "127.0.0.1:0", "-db", dbPath, "-cache-bytes", "0",
		"-project-runs-per-minute", "0", "-project-runs-per-hour", "0",
		"-project-concurrency", "0", "-global-concurrency", "0",
		"-api-key", key + "=" + project, "-metrics-key", metricsKey, "-demo-events", strconv.Itoa(cfg.demoEvents)},
		cfg.serverArgs...)
	lib, libURL, err := startProc(ctx, "examples/server", filepath.Join(dir, "server.log"),
		regexp.MustCompile(`endpointkit example server on (http://\S+)`), cfg.startTimeout, bin, serverArgs...)
	if err != nil {
		return err
	}
	// Both servers are stopped at once at the end; a server that does not
	// stop cleanly fails the run.
	var procs []*proc
	defer func() {
		if serr := stopAll(procs); serr != nil && err == nil {
			err = serr
		}
	}()
	procs = append(procs, lib)
	libClient := newClient(64)
	if err := createEndpoints(ctx, libClient, libURL, key); err != nil {
		return fmt.Errorf("%w\n%s", err, lib.tail())
	}
	// The baseline opens the file once the server has loaded it.
	hdl, hdlURL, err := startProc(ctx, "baseline", filepath.Join(dir, "baseline.log"),
		regexp.MustCompile(regexp.QuoteMeta(baselineBanner)+`(http://\S+)`), cfg.startTimeout, self,
		append([]string{baselineCommand, "-addr", "127.0.0.1:0", "-db", dbPath, "-key", key}, cfg.baselineArgs...)...)
	if err != nil {
		return err
	}
	procs = append(procs, hdl)
	hdlClient := newClient(64)
	defer libClient.CloseIdleConnections()
	defer hdlClient.CloseIdleConnections()
	side := func(client *http.Client, base string, q query) target {
		return target{client: client, url: base + "/api/projects/" + project + "/endpoints/" + q.name + "/run", key: key, bodies: q.bodies}
	}
	var qs []query
	for _, q := range queries(cfg.event, cfg.sameBody) {
		if slices.Contains(cfg.only, q.name) {
			qs = append(qs, q)
		}
	}
	// libSent counts the library's answers by endpoint, to check against
	// the server's own count of its runs at the end.
	libSent := map[string]int{}
	for _, q := range qs {
		if err := sameAnswer(ctx, side(libClient, libURL, q), side(hdlClient, hdlURL, q), q.name == "count"); err != nil {
			return err
		}
		libSent[q.name]++
	}

	var rows []*row
	for _, q := range qs {
		for _, c := range cfg.concurrency {
			rows = append(rows, &row{q: q, c: c})
		}
	}
	// measure sends one side one cell for d; failure names the side and
	// shows the end of its log.
	measure := func(r *row, library bool, d time.Duration) (sample, error) {
		t, p := side(hdlClient, hdlURL, r.q), hdl
		if library {
			t, p = side(libClient, libURL, r.q), lib
		}
		cpu0, ok0 := p.cpu()
		sw0, swOK0 := p.switches()
		s, err := drive(ctx, t, r.c, d)
		cpu1, ok1 := p.cpu()
		sw1, swOK1 := p.switches()
		s.cpu, s.cpuOK = cpu1-cpu0, ok0 && ok1
		s.switches, s.switchesOK = sw1-sw0, swOK0 && swOK1 && sw1 >= sw0
		if err != nil {
			if aerr := p.alive(); aerr != nil {
				return sample{}, fmt.Errorf("%s c=%d: %w\n%w", r.q.name, r.c, err, aerr)
			}
			return sample{}, fmt.Errorf("%s c=%d: %w\n%s", r.q.name, r.c, err, p.tail())
		}
		if library {
			libSent[r.q.name] += len(s.times)
		}
		return s, nil
	}
	if cfg.warmup > 0 {
		fmt.Fprintf(stderr, "warming up (%s a side and cell)...\n", cfg.warmup)
		for _, r := range rows {
			for _, library := range []bool{true, false} {
				if _, err := measure(r, library, cfg.warmup); err != nil {
					return err
				}
			}
		}
	}
	loadBefore := loadAverage()
	for round := range cfg.rounds {
		for _, r := range rows {
			// Alternate which side goes first, round by round.
			order := []bool{round%2 == 0, round%2 != 0}
			for _, library := range order {
				s, err := measure(r, library, cfg.duration)
				if err != nil {
					return err
				}
				if library {
					r.library = append(r.library, s)
				} else {
					r.handler = append(r.handler, s)
				}
			}
			l, h := summarize(r.library[round:]), summarize(r.handler[round:])
			fmt.Fprintf(stderr, "round %d/%d  %-7s c=%-2d  library p50 %s p99 %s %s req/s | handler p50 %s p99 %s %s req/s\n",
				round+1, cfg.rounds, r.q.name, r.c, formatDuration(l.p50), formatDuration(l.p99), formatRate(l.perSec),
				formatDuration(h.p50), formatDuration(h.p99), formatRate(h.perSec))
		}
	}
	loadAfter := loadAverage()
	for _, r := range rows {
		r.libStats, r.hdlStats = summarize(r.library), summarize(r.handler)
	}
	// The server's count of its runs: every answer the load test got, and
	// none without its own query unless -same-body.
	counts, err := checkRuns(ctx, libClient, libURL+"/metrics", metricsKey, libSent, cfg.sameBody)
	if err != nil {
		return err
	}
	var runs, shared int
	for name := range libSent {
		runs, shared = runs+counts[name].ok, shared+counts[name].withoutQuery
	}
	// What the run log did not record: the log is on, as in production,
	// and an entry it dropped is work the library was not measured doing.
	logErrors, err := serverLogErrors(ctx, libClient, libURL+"/metrics", metricsKey)
	if err != nil {
		return err
	}
	bodies := "no two requests in flight alike (each asks its own limit)"
	if cfg.sameBody {
		bodies = "every request of a query alike (-same-body)"
	}
	fmt.Fprintf(stdout, "examples/server (result cache and run limits off) beside a hand-written net/http + database/sql handler on one SQLite file of %d demo events, each in its own process; %s; the server counted %d runs, %d of them without a query of their own, and %d it did not record in its run log (kept in its SQLite store); %d round(s) of %s per side and cell, alternating which side goes first; keep-alive clients on the same machine, %d CPUs, load average %s before the rounds and %s after.\n\n",
		cfg.demoEvents, bodies, runs, shared, logErrors, cfg.rounds, cfg.duration, runtime.NumCPU(), loadBefore, loadAfter)
	writeTable(stdout, rows)
	return nil
}

// loadAverage is the machine's load average over the last 1, 5 and 15
// minutes as /proc/loadavg gives it ("2.62 2.17 2.54"), which says how
// much else the measured processes shared the processors with; "unknown"
// where there is no /proc/loadavg.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// createEndpoints creates, through the HTTP API at base, the variable
// "name" and the endpoints select1 and count of project.
func createEndpoints(ctx context.Context, client *http.Client, base, key string) error {
	api := base + "/api/projects/" + project
	var v struct {
		ID string `json:"id"`
	}
	if err := call(ctx, client, api+"/insight_variables/", key, `{"name": "name", "type": "String"}`, http.StatusCreated, &v); err != nil {
		return err
	}
	if v.ID == "" {
		return errors.New("POST insight_variables/: the answer has no id")
	}
	ref, _ := json.Marshal(map[string]any{v.ID: map[string]string{"variableId": v.ID, "code_name": "name"}}) //nolint:errcheck // strings always encode
	for _, body := range []string{
		`{"name": "select1", "query": {"kind": "HogQLQuery", "query": "SELECT 1"}}`,
		`{"name": "count", "query": {"kind": "HogQLQuery", "query": "SELECT count(*) AS n FROM events WHERE event = {variables.name}", "variables": ` + string(ref) + `}}`,
	} {
		if err := call(ctx, client, api+"/endpoints/", key, body, http.StatusCreated, nil); err != nil {
			return err
		}
	}
	return nil
}

// call POSTs body to url and decodes the answer into out (unless nil); an
// error for any status but want.
func call(ctx context.Context, client *http.Client, url, key, body string, want int, out any) error {
	req, err := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("POST %s: %w", url, err)
	}
	if resp.StatusCode != want {
		return fmt.Errorf("POST %s: status %d, want %d: %s", url, resp.StatusCode, want, clip(b))
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("POST %s: %w: %s", url, err, clip(b))
		}
	}
	return nil
}

// answer is what both sides' run answers share.
type answer struct {
	Columns []string `json:"columns"`
	Results [][]any  `json:"results"`
}

// sameAnswer runs lib and hdl once and fails unless their columns and rows
// are equal and there is a row; positive asks the first value to be a
// number above zero (a count that found events).
func sameAnswer(ctx context.Context, lib, hdl target, positive bool) error {
	var got [2]answer
	for i, t := range []target{lib, hdl} {
		b, err := t.post(ctx, t.bodies[0])
		if err != nil {
			return err
		}
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		if err := d.Decode(&got[i]); err != nil {
			return fmt.Errorf("POST %s: %w: %s", t.url, err, clip(b))
		}
	}
	l, h := got[0], got[1]
	if !reflect.DeepEqual(l, h) {
		return fmt.Errorf("the answers differ: library %v %v, handler %v %v (%s)", l.Columns, l.Results, h.Columns, h.Results, lib.url)
	}
	if len(l.Results) == 0 || len(l.Results[0]) == 0 {
		return fmt.Errorf("%s: no rows", lib.url)
	}
	if positive {
		n, ok := l.Results[0][0].(json.Number)
		if v, err := n.Int64(); !ok || err != nil || v <= 0 {
			return fmt.Errorf("%s: the count is %v, want a number above 0 (is -event one of the demo's?)", lib.url, l.Results[0][0])
		}
	}
	return nil
}
