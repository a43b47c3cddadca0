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
	var wg sync.WaitGroup
	results := make([]*RunResult, 3)
	rows := make([]int, 3)
	shared := make([]bool, 3)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], rows[i], shared[i], _ = g.do(ctx, "k", compute)
		}()
	}
	for {
		n := g.waiting("k")
		if n == len(results) {
			break
		}
		runtime.Gosched()
	}
	close(release)
	wg.Wait()
	first := <-leader
	for i, res := range results {
		if shared[i] || rows[i] != 2 || res == first || &res.Results.([][]any)[0][0] == &first.Results.([][]any)[0][0] {
			t.Errorf("run %d: shared %v, %d rows, its own rows %v; want a computation of its own", i, shared[i], rows[i], res != first)
		}
	}
	n := calls.Load()
	assert.Equal(t, int64(1+len(results)), n, "%d computations, want one for each of the %d runs", n, 1+len(results))
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
	for {
		n := g.waiting("k")
		if n == 1 {
			break
		}
		runtime.Gosched()
	}
	close(release)
	if p := <-panicked; p == nil {
		t.Error("the computing run did not panic")
	}
	res := <-joined
	if assert.NotNil(t, res, "the joined run answered %+v, want the answer it computed", res) {
		assert.Equal(t, "own", res.Name, "the joined run answered %+v, want the answer it computed", res)
	}
}
