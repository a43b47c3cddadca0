package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// newClient is a keep-alive HTTP client that holds up to conns idle
// connections to a server, so that every client of a round keeps its own.
func newClient(conns int) *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			MaxIdleConns:        conns,
			MaxIdleConnsPerHost: conns,
			IdleConnTimeout:     time.Minute,
			DisableCompression:  true,
		},
		Timeout: time.Minute,
	}
}

// target is one side's run route of one query.
type target struct {
	client *http.Client
	url    string
	key    string
	// bodies are the run request's bodies, sent in turn: the same
	// request in different words when they must not share a run.
	bodies [][]byte
}

// post sends the run request of body and returns the answer's body; an
// error for any answer but a 200.
func (t target) post(ctx context.Context, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, "POST", t.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+t.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := t.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("POST %s: reading the answer: %w", t.url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("POST %s: status %d: %s", t.url, resp.StatusCode, clip(b))
	}
	return b, nil
}

// resultsKey is what every JSON answer of a run has, the library's and the
// handler's.
var resultsKey = []byte(`"results":[`)

// sample is what one side answered in one round of one cell: the time of
// every request, the time the clients took together, and the CPU time the
// side's process used meanwhile (cpuOK when it could be read) and the
// times its threads were switched out (switchesOK likewise).
type sample struct {
	times      []time.Duration
	elapsed    time.Duration
	cpu        time.Duration
	cpuOK      bool
	switches   int64
	switchesOK bool
}

// drive sends t's request from c clients for d, each sending its next
// request when its last is answered, and times each; the requests take
// t's bodies in turn, so that the c in flight have different bodies as long
// as there are c of them. A request in flight
// at the end is waited for and counted. The first failed request (not a
// 200, or an answer without results) cancels the others and is returned.
func drive(ctx context.Context, t target, c int, d time.Duration) (sample, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	times := make([][]time.Duration, c)
	var sent atomic.Uint64
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for i := range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) && ctx.Err() == nil {
				t0 := time.Now()
				b, err := t.post(ctx, t.bodies[(sent.Add(1)-1)%uint64(len(t.bodies))])
				if err == nil && !bytes.Contains(b, resultsKey) {
					err = fmt.Errorf("POST %s: an answer without results: %s", t.url, clip(b))
				}
				if err != nil {
					cancel(err)
					return
				}
				times[i] = append(times[i], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := context.Cause(ctx); err != nil {
		return sample{}, err
	}
	all := slices.Concat(times...)
	if len(all) == 0 {
		return sample{}, fmt.Errorf("POST %s: no request answered in %s", t.url, d)
	}
	return sample{times: all, elapsed: elapsed}, nil
}

// stats are the pooled figures of a side's samples.
type stats struct {
	p50, p99 time.Duration
	perSec   float64
	// cpuPerReq is the CPU time the side's process used per request
	// answered, 0 when it could not be read for every sample.
	cpuPerReq time.Duration
	// switchesPerReq is the times the side's threads were switched out
	// per request answered, -1 when they could not be read for every
	// sample.
	switchesPerReq float64
	n              int
}

// summarize pools samples: p50 and p99 of every request's time (nearest
// rank), and the requests over the clients' time together.
func summarize(samples []sample) stats {
	var all []time.Duration
	var elapsed, cpu time.Duration
	var switches int64
	cpuOK, switchesOK := true, true
	for _, s := range samples {
		all = append(all, s.times...)
		elapsed += s.elapsed
		cpu += s.cpu
		cpuOK = cpuOK && s.cpuOK
		switches += s.switches
		switchesOK = switchesOK && s.switchesOK
	}
	if len(all) == 0 || elapsed <= 0 {
		return stats{}
	}
	slices.Sort(all)
	st := stats{p50: quantile(all, 0.50), p99: quantile(all, 0.99), perSec: float64(len(all)) / elapsed.Seconds(), n: len(all)}
	if cpuOK {
		st.cpuPerReq = cpu / time.Duration(len(all))
	}
	st.switchesPerReq = -1
	if switchesOK {
		st.switchesPerReq = float64(switches) / float64(len(all))
	}
	return st
}

// quantile is the nearest-rank q-quantile of sorted, which is not empty.
func quantile(sorted []time.Duration, q float64) time.Duration {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// clip shortens an answer for an error message.
func clip(b []byte) string {
	const most = 300
	if len(b) > most {
		return string(b[:most]) + "..."
	}
	return string(b)
}
