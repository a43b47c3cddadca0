package flight_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/internal/flight"
)

// answer is a computed value; its share is a pointer to it, of which each
// joined caller gets its own copy.
type answer struct {
	n  int
	by string
}

type share struct{ a answer }

func (s *share) Copy() *answer { c := s.a; c.by = "copy"; return &c }

func shareOK(a *answer) (*share, bool) { return &share{*a}, true }

// leader starts a computation of key in g that ends when release is
// closed, and returns its answer's channel once it is under way.
func leader(t *testing.T, g *flight.Group[*answer, *share], key string, release chan struct{}, fn func() (*answer, error), sh func(*answer) (*share, bool)) chan *answer {
	t.Helper()
	started := make(chan struct{})
	out := make(chan *answer, 1)
	go func() {
		a, joined, err := g.Do(context.Background(), key, func() (*answer, error) {
			close(started)
			<-release
			return fn()
		}, sh)
		assert.False(t, joined)
		assert.NoError(t, err)
		out <- a
	}()
	<-started
	return out
}

// waitJoined waits until n callers joined the computation of key.
func waitJoined(g *flight.Group[*answer, *share], key string, n int) {
	for g.Waiting(key) < n {
		runtime.Gosched()
	}
}

// TestOneComputationSharedByCopies: callers of a key under way join its
// computation and get each their own copy of its share; the computing
// caller gets what it computed; another key computes apart.
func TestOneComputationSharedByCopies(t *testing.T) {
	var g flight.Group[*answer, *share]
	var calls atomic.Int64
	computed := &answer{n: 7, by: "computed"}
	release := make(chan struct{})
	first := leader(t, &g, "k", release, func() (*answer, error) { calls.Add(1); return computed, nil }, shareOK)
	var wg sync.WaitGroup
	got := make([]*answer, 4)
	joined := make([]bool, 4)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			got[i], joined[i], err = g.Do(context.Background(), "k", func() (*answer, error) {
				calls.Add(1)
				return &answer{n: 7, by: "late"}, nil
			}, shareOK)
			assert.NoError(t, err)
		}()
	}
	waitJoined(&g, "k", len(got))
	other, joinedOther, err := g.Do(context.Background(), "other", func() (*answer, error) { return &answer{n: 1}, nil }, shareOK)
	require.NoError(t, err)
	assert.False(t, joinedOther)
	assert.Equal(t, 1, other.n)
	close(release)
	wg.Wait()
	assert.Same(t, computed, <-first)
	for i, a := range got {
		assert.True(t, joined[i])
		assert.Equal(t, &answer{n: 7, by: "copy"}, a)
		for j := range i {
			assert.NotSame(t, got[j], a, "each joined caller has its own copy")
		}
	}
	assert.Equal(t, int64(1), calls.Load())
	assert.Zero(t, g.Waiting("k"))
}

// TestUnshareableComputesOwn: when the share cannot be made, each joined
// caller computes its own.
func TestUnshareableComputesOwn(t *testing.T) {
	var g flight.Group[*answer, *share]
	var calls atomic.Int64
	none := func(*answer) (*share, bool) { return nil, false }
	compute := func() (*answer, error) { calls.Add(1); return &answer{n: 1}, nil }
	release := make(chan struct{})
	first := leader(t, &g, "k", release, compute, none)
	done := make(chan *answer)
	go func() {
		a, joined, err := g.Do(context.Background(), "k", compute, none)
		assert.NoError(t, err)
		assert.False(t, joined)
		done <- a
	}()
	waitJoined(&g, "k", 1)
	close(release)
	assert.NotSame(t, <-first, <-done)
	assert.Equal(t, int64(2), calls.Load())
}

// TestAbandonAndRetry: a joined caller whose context ends stops waiting
// with ErrAbandoned; one whose context is alive computes again when the
// computing caller's context was cancelled, and gets the other errors as
// they are.
func TestAbandonAndRetry(t *testing.T) {
	var g flight.Group[*answer, *share]
	release := make(chan struct{})
	started := make(chan struct{})
	go func() {
		_, _, err := g.Do(context.Background(), "k", func() (*answer, error) {
			close(started)
			<-release
			return nil, context.Canceled
		}, shareOK)
		assert.ErrorIs(t, err, context.Canceled)
	}()
	<-started
	ctx, cancel := context.WithCancel(context.Background())
	abandoned := make(chan error)
	go func() {
		_, _, err := g.Do(ctx, "k", func() (*answer, error) { return &answer{}, nil }, shareOK)
		abandoned <- err
	}()
	retried := make(chan *answer)
	go func() {
		a, joined, err := g.Do(context.Background(), "k", func() (*answer, error) { return &answer{n: 2, by: "retry"}, nil }, shareOK)
		assert.NoError(t, err)
		assert.False(t, joined)
		retried <- a
	}()
	waitJoined(&g, "k", 2)
	cancel()
	err := <-abandoned
	require.ErrorIs(t, err, flight.ErrAbandoned)
	assert.ErrorIs(t, err, context.Canceled)
	close(release)
	assert.Equal(t, &answer{n: 2, by: "retry"}, <-retried)

	boom := errors.New("boom")
	release = make(chan struct{})
	started = make(chan struct{})
	go func() {
		g.Do(context.Background(), "e", func() (*answer, error) { close(started); <-release; return nil, boom }, shareOK) //nolint:errcheck // its error is the joined one's
	}()
	<-started
	failed := make(chan error)
	go func() {
		_, _, err := g.Do(context.Background(), "e", func() (*answer, error) { return &answer{}, nil }, shareOK)
		failed <- err
	}()
	for g.Waiting("e") < 1 {
		runtime.Gosched()
	}
	close(release)
	assert.ErrorIs(t, <-failed, boom)
}

// TestPanicReachesJoined: a computation that panics panics on in its
// caller, and the joined callers get a PanicError rather than wait; a
// share that panics leaves the joined callers computing their own.
func TestPanicReachesJoined(t *testing.T) {
	var g flight.Group[*answer, *share]
	for _, c := range []struct {
		name    string
		fn      func() (*answer, error)
		sh      func(*answer) (*share, bool)
		wantErr bool
	}{
		{"computation", func() (*answer, error) { panic("computation") }, shareOK, true},
		{"share", func() (*answer, error) { return &answer{n: 3}, nil }, func(*answer) (*share, bool) { panic("share") }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			release, started := make(chan struct{}), make(chan struct{})
			panicked := make(chan any)
			go func() {
				defer func() { panicked <- recover() }()
				g.Do(context.Background(), "p", func() (*answer, error) { close(started); <-release; return c.fn() }, c.sh) //nolint:errcheck // it panics
			}()
			<-started
			joined := make(chan error)
			go func() {
				a, _, err := g.Do(context.Background(), "p", func() (*answer, error) { return &answer{by: "own"}, nil }, c.sh)
				if err == nil {
					assert.Equal(t, "own", a.by)
				}
				joined <- err
			}()
			waitJoined(&g, "p", 1)
			close(release)
			assert.Equal(t, c.name, <-panicked)
			err := <-joined
			if !c.wantErr {
				assert.NoError(t, err)
				return
			}
			var pe *flight.PanicError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, "computation", pe.Value)
		})
	}
}

// TestUnjoinedAllocatesNothing: a computation no caller joins makes no
// channel, and its record comes from the pool.
func TestUnjoinedAllocatesNothing(t *testing.T) {
	var g flight.Group[*answer, *share]
	a := &answer{}
	fn := func() (*answer, error) { return a, nil }
	ctx := context.Background()
	g.Do(ctx, "k", fn, shareOK) //nolint:errcheck // fn does not fail
	n := testing.AllocsPerRun(100, func() {
		got, _, _ := g.Do(ctx, "k", fn, shareOK)
		if got != a {
			t.Fatal("not the answer fn returned")
		}
	})
	assert.Zero(t, n)
}
