package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"time"
)

// runCounts are what the example server's metrics count of one endpoint's
// runs: those answered 200, and those of them answered without a query of
// their own (the result cache, or an identical run in flight).
type runCounts struct {
	ok, withoutQuery int
}

var (
	// metricLine is a sample of the two counters read, in Prometheus's
	// text format.
	metricLine = regexp.MustCompile(`^(endpointkit_runs_total|endpointkit_cache_hits_total)\{([^}]*)\} (\S+)$`)
	metricPair = regexp.MustCompile(`(\w+)="([^"]*)"`)
)

// serverRuns reads the run counters of project's endpoints from the
// example server's /metrics at url, behind key.
func serverRuns(ctx context.Context, client *http.Client, url, key string) (map[string]runCounts, error) {
	b, err := getMetrics(ctx, client, url, key)
	if err != nil {
		return nil, err
	}
	return parseRuns(b, project)
}

// logErrorsLine is the sample of the run log entries the server did not
// record (endpoint/metrics).
var logErrorsLine = regexp.MustCompile(`^endpointkit_run_log_errors_total (\S+)$`)

// serverLogErrors reads from the example server's /metrics at url, behind
// key, how many runs its run log did not record: entries dropped because
// its background writer fell behind, or writes that failed.
func serverLogErrors(ctx context.Context, client *http.Client, url, key string) (int, error) {
	b, err := getMetrics(ctx, client, url, key)
	if err != nil {
		return 0, err
	}
	return parseLogErrors(b)
}

// parseLogErrors reads endpointkit_run_log_errors_total from metrics; an
// error when it is not there.
func parseLogErrors(metrics []byte) (int, error) {
	sc := bufio.NewScanner(bytes.NewReader(metrics))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if m := logErrorsLine.FindStringSubmatch(sc.Text()); m != nil {
			v, err := strconv.ParseFloat(m[1], 64)
			if err != nil {
				return 0, fmt.Errorf("metrics: %q: %w", sc.Text(), err)
			}
			return int(v), nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("metrics: no endpointkit_run_log_errors_total")
}

// getMetrics GETs the metrics at url, behind key.
func getMetrics(ctx context.Context, client *http.Client, url, key string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: status %d: %s", url, resp.StatusCode, clip(b))
	}
	return b, nil
}

// parseRuns reads the counters of project's endpoints from metrics, by
// endpoint name.
func parseRuns(metrics []byte, project string) (map[string]runCounts, error) {
	out := map[string]runCounts{}
	sc := bufio.NewScanner(bytes.NewReader(metrics))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		m := metricLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		labels := map[string]string{}
		for _, p := range metricPair.FindAllStringSubmatch(m[2], -1) {
			labels[p[1]] = p[2]
		}
		if labels["project"] != project {
			continue
		}
		v, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			return nil, fmt.Errorf("metrics: %q: %w", sc.Text(), err)
		}
		c := out[labels["endpoint"]]
		switch {
		case m[1] == "endpointkit_cache_hits_total":
			c.withoutQuery += int(v)
		case labels["status"] == "200":
			c.ok += int(v)
		}
		out[labels["endpoint"]] = c
	}
	return out, sc.Err()
}

// checkRuns fails unless the server counted sent[name] runs answered 200
// of each endpoint, each with a query of its own unless shared is allowed;
// it returns the counts. A run is counted as it ends, so the counters are
// read again for up to a second until they reach what was sent.
func checkRuns(ctx context.Context, client *http.Client, url, key string, sent map[string]int, shared bool) (map[string]runCounts, error) {
	deadline := time.Now().Add(time.Second)
	for {
		got, err := serverRuns(ctx, client, url, key)
		if err != nil {
			return nil, err
		}
		var diff error
		for name, n := range sent {
			if c := got[name]; c.ok != n {
				diff = fmt.Errorf("the server counted %d runs of %s answered 200, the load test was answered %d", c.ok, name, n)
			}
		}
		if diff == nil {
			for name := range sent {
				if c := got[name]; c.withoutQuery > 0 && !shared {
					return nil, fmt.Errorf("the server answered %d of %d runs of %s without a query of their own (the result cache or a shared identical run), so the figures are not of every request running its query", c.withoutQuery, c.ok, name)
				}
			}
			return got, nil
		}
		if time.Now().After(deadline) {
			return nil, diff
		}
		time.Sleep(50 * time.Millisecond)
	}
}
