package budget_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/budget"
	"github.com/stretchr/testify/require"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// TestRetryAfterIsExact: over random window states, limits and times, a
// refused run's wait is exact: admitted at now+wait, refused a nanosecond
// before.
func TestRetryAfterIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, size := range []time.Duration{time.Minute, time.Hour} {
		for range 20000 {
			limit := 1 + r.Int64N(3000)
			w := budget.Window{Start: epoch, Prev: r.Int64N(limit + 1), Curr: r.Int64N(limit + 1)}
			now := epoch.Add(time.Duration(r.Int64N(int64(size))))
			v := w
			d := v.Take(now, limit, size)
			if d.Allowed {
				continue
			}
			require.Positive(t, d.RetryAfter)
			require.Equal(t, w, v, "a refusal counts nothing")
			at := func(dt time.Duration) bool {
				v := w
				return v.Take(now.Add(dt), limit, size).Allowed
			}
			require.True(t, at(d.RetryAfter), "limit %d, window %+v, at %s: admitted after %s", limit, w, now.Sub(epoch), d.RetryAfter)
			require.False(t, at(d.RetryAfter-time.Nanosecond), "limit %d, window %+v, at %s: refused before %s", limit, w, now.Sub(epoch), d.RetryAfter)
		}
	}
}

// TestAdvance: the window shifts by one, empties past two, and stays put
// when the clock goes back.
func TestAdvance(t *testing.T) {
	w := budget.Window{Start: epoch, Prev: 3, Curr: 5}
	w.Advance(epoch.Add(-time.Second), time.Minute)
	require.Equal(t, budget.Window{Start: epoch, Prev: 3, Curr: 5}, w)
	w.Advance(epoch.Add(90*time.Second), time.Minute)
	require.Equal(t, budget.Window{Start: epoch.Add(time.Minute), Prev: 5, Curr: 0}, w)
	w.Advance(epoch.Add(10*time.Minute), time.Minute)
	require.Equal(t, budget.Window{Start: epoch.Add(10 * time.Minute)}, w)
}

// TestMemoryBounded: a Memory keeps at most MaxKeys counters, and drops
// those idle two windows.
func TestMemoryBounded(t *testing.T) {
	now := epoch
	m := budget.NewMemory(budget.MemoryConfig{MaxKeys: 10, Now: func() time.Time { return now }})
	for i := range 100 {
		_, err := m.Take(t.Context(), string(rune('a'+i)), 1, time.Minute)
		require.NoError(t, err)
	}
	require.LessOrEqual(t, m.Len(), 10)
	now = now.Add(3 * time.Minute)
	_, err := m.Take(t.Context(), "fresh", 1, time.Minute)
	require.NoError(t, err)
	require.Equal(t, 1, m.Len())
}

type downCounter struct{ err error }

func (c downCounter) Take(context.Context, string, int64, time.Duration) (budget.Decision, error) {
	return budget.Decision{}, c.err
}

// TestGuard: a failing store is logged, counted, and answered as the
// Guard's FailOpen says.
func TestGuard(t *testing.T) {
	storeErr := errors.New("connection refused")
	closed := budget.NewGuard(downCounter{storeErr}, budget.GuardConfig{})
	d, err := closed.Take(t.Context(), "k", 1, time.Minute)
	require.ErrorIs(t, err, budget.ErrUnavailable)
	require.ErrorIs(t, err, storeErr)
	require.False(t, d.Allowed)
	require.EqualValues(t, 1, closed.Failures())

	open := budget.NewGuard(downCounter{storeErr}, budget.GuardConfig{FailOpen: true})
	d, err = open.Take(t.Context(), "k", 1, time.Minute)
	require.NoError(t, err)
	require.True(t, d.Allowed)
	require.EqualValues(t, 1, open.Failures())

	_, err = open.Take(t.Context(), "", 1, time.Minute)
	require.ErrorIs(t, err, budget.ErrInvalid)
	require.EqualValues(t, 1, open.Failures(), "an invalid take is no failure of the store")
	require.Same(t, open, budget.Guarded(open, budget.GuardConfig{}))
}
