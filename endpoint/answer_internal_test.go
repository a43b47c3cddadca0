package endpoint

import (
	"context"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestFlightOfAnAnswerJSONCannotCarry: when the answer of a flight is not
// something JSON can carry (a NaN), the runs that joined it compute their
// own rather than share the computing run's rows; each answer is still
// its caller's own.
func TestFlightOfAnAnswerJSONCannotCarry(t *testing.T) {
	var g flightGroup
	ctx := context.Background()
	var calls atomic.Int64
	compute := func() (*RunResult, error) {
		calls.Add(1)
		return &RunResult{Results: [][]any{{math.NaN()}, {1.5}}}, nil
	}
	started, release := make(chan struct{}), make(chan struct{})
	leader := make(chan *RunResult, 1)
	go func() {
		res, _, _, _ := g.do(ctx, "k", func() (*RunResult, error) {
			close(started)
			<-release
			return compute()
		})
		leader <- res
	}()
	<-started
	wait, results, rows, shared := joinRuns(ctx, &g, 3, compute)
	untilWaiting(&g, func(n int) bool { return n == len(results) })
	close(release)
	wait()
	first := <-leader
	for i, res := range results {
		if shared[i] || rows[i] != 2 || res == first || &res.Results.([][]any)[0][0] == &first.Results.([][]any)[0][0] {
			t.Errorf("run %d: shared %v, %d rows, its own rows %v; want a computation of its own", i, shared[i], rows[i], res != first)
		}
	}
	n := calls.Load()
	assert.Equal(t, int64(1+len(results)), n, "%d computations, want one for each of the %d runs", n, 1+len(results))
}

// joinRuns starts n runs of g's flight "k", each computing with fn when
// it finds no flight to join; wait waits for them all, and then results,
// rows and shared hold each run's answer, its count of rows and whether it
// shared another run's answer.
func joinRuns(ctx context.Context, g *flightGroup, n int, fn func() (*RunResult, error)) (wait func(), results []*RunResult, rows []int, shared []bool) {
	var wg sync.WaitGroup
	results, rows, shared = make([]*RunResult, n), make([]int, n), make([]bool, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], rows[i], shared[i], _ = g.do(ctx, "k", fn)
		}()
	}
	return wg.Wait, results, rows, shared
}

// untilWaiting yields until done holds of the count of runs waiting on
// g's flight "k".
func untilWaiting(g *flightGroup, done func(n int) bool) {
	for !done(g.waiting("k")) {
		runtime.Gosched()
	}
}

// panicky is a value whose JSON encoding panics.
type panicky struct{}

func (panicky) MarshalJSON() ([]byte, error) { panic("panicky") }

// TestFlightWhoseAnswerPanicsToEncode: when encoding the answer for the
// runs that joined its flight panics, they are not left waiting: they
// compute their own, and the panic goes on in the computing run.
func TestFlightWhoseAnswerPanicsToEncode(t *testing.T) {
	var g flightGroup
	ctx := context.Background()
	started, release := make(chan struct{}), make(chan struct{})
	panicked := make(chan any, 1)
	go func() {
		defer func() { panicked <- recover() }()
		g.do(ctx, "k", func() (*RunResult, error) { //nolint:errcheck // it panics
			close(started)
			<-release
			return &RunResult{Results: [][]any{{panicky{}}}}, nil
		})
	}()
	<-started
	joined := make(chan *RunResult, 1)
	go func() {
		res, _, _, _ := g.do(ctx, "k", func() (*RunResult, error) { return &RunResult{Name: "own"}, nil })
		joined <- res
	}()
	untilWaiting(&g, func(n int) bool { return n == 1 })
	close(release)
	if p := <-panicked; p == nil {
		t.Error("the computing run did not panic")
	}
	res := <-joined
	if assert.NotNil(t, res, "the joined run answered %+v, want the answer it computed", res) {
		assert.Equal(t, "own", res.Name, "the joined run answered %+v, want the answer it computed", res)
	}
}
