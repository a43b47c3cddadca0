//go:build chdb

package chdb

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/internal/heldexec"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/require"
)

// TestChDBAnswersAreTheirOwn: the answers of one flight on chDB (its
// strings and numbers boxed from blocks shared by the rows of one answer)
// share nothing: a host writing over one answer's rows, in its own
// goroutine while the others read theirs, changes no other answer, nor
// what the result cache answers next.
func TestChDBAnswersAreTheirOwn(t *testing.T) {
	x := executor(t)
	loadDemo(t, x)
	held := heldexec.New(x, 8)
	svc, err := endpoint.New(endpoint.Config{Endpoints: memstore.New(), Variables: variable.NewMemoryStore(), Executor: held,
		ResultCache: memstore.NewResultCache(1 << 20)})
	require.NoError(t, err)
	ctx := context.Background()
	q := &endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT distinct_id, event, timestamp, toInt64(length(distinct_id)) * 1000 AS big FROM events ORDER BY uuid LIMIT 40"}
	if _, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "users", Query: q}); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	const n = 4
	var answers []*endpoint.RunResult
	for attempt := 0; ; attempt++ {
		answers = flight(t, svc, held, "users", endpoint.RunRequest{Refresh: endpoint.RefreshForce}, n)
		joined := 0
		for _, a := range answers {
			if a.IsCached {
				joined++
			}
		}
		if joined == n-1 {
			break
		}
		require.NotEqual(t, 5, attempt, "in 6 attempts, %d of %d runs joined the flight", joined, n-1)
	}
	want := make([]string, n)
	for i, a := range answers {
		b, err := json.Marshal(a.Results)
		require.NoError(t, err)
		want[i] = string(b)
		if i > 0 && want[i] != want[0] {
			t.Fatalf("answer %d: %s, answer 0: %s", i, want[i], want[0])
		}
	}
	var wg sync.WaitGroup
	for i, a := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 1 {
				for range 3 {
					if b, err := json.Marshal(a.Results); err != nil || string(b) != want[0] {
						t.Errorf("answer %d read %s while others were written over (%v), want %s", i, b, err, want[0])
						return
					}
				}
				return
			}
			switch rows := a.Results.(type) {
			case [][]any:
				for _, row := range rows {
					for j := range row {
						row[j] = "vandal"
					}
				}
			case json.RawMessage:
				for j := range rows {
					rows[j] = '!'
				}
			}
		}()
	}
	wg.Wait()
	res, err := svc.Run(ctx, "1", "users", endpoint.RunRequest{})
	require.NoError(t, err)
	b, _ := json.Marshal(res.Results)
	require.True(t, res.IsCached, "the cache answers %s (cached %v), want %s", b, res.IsCached, want[0])
	require.Equal(t, want[0], string(b), "the cache answers %s (cached %v), want %s", b, res.IsCached, want[0])
}

// flight runs req n times at once, the first run holding its query for
// the others to join its flight.
func flight(t *testing.T, svc *endpoint.Service, held *heldexec.Executor, name string, req endpoint.RunRequest, n int) []*endpoint.RunResult {
	t.Helper()
	held.Hold()
	out := make([]*endpoint.RunResult, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	run := func(i int) {
		defer wg.Done()
		out[i], errs[i] = svc.Run(context.Background(), "1", name, req)
	}
	wg.Add(n)
	go run(0)
	<-held.Started
	for i := 1; i < n; i++ {
		go run(i)
	}
	time.Sleep(100 * time.Millisecond) // for the others to join
	held.Release()
	// A run that came late computed alone, past the gate.
	for drained := false; !drained; {
		select {
		case <-held.Started:
		default:
			drained = true
		}
	}
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "run %d", i)
	}
	return out
}
