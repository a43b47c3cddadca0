// Package budget counts runs against budgets (so many runs per window of
// time) in a store that several processes may share, so that N servers on
// one store allow one budget, not N.
//
// A Counter is the store: Take counts one run of a key if the key's budget
// has room, in one atomic step. Memory is the in-process Counter, the
// default for a single process; package sqlstore's Store.Counter keeps the
// counts in the SQL store the endpoints live in, and package budget/redisbudget
// in Redis. Package budgettest is the conformance suite every Counter runs.
//
// Rates are counted in a sliding window approximated by two fixed windows,
// as package limit always has (and Cloudflare and many API gateways do): the
// estimate at a time t is the count of the current fixed window plus the
// previous window's count weighted by the share of the previous window that
// the sliding window still covers. A key needs two counters per window,
// never one timestamp per run. Window holds that arithmetic, exact in
// integers, for the implementations.
package budget

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"time"
	"unicode/utf8"
)

// MaxKeyLength is the longest key a Counter must accept, in bytes.
const MaxKeyLength = 512

// ErrInvalid is wrapped by the error of a Take whose arguments are out of
// range (see Check).
var ErrInvalid = errors.New("budget: invalid take")

// Decision is a Counter's answer to Take.
type Decision struct {
	// Allowed reports whether the run was counted: the key's budget had
	// room.
	Allowed bool
	// Count is the count of the current fixed window of the key, after
	// this Take (the run included when Allowed).
	Count int64
	// RetryAfter is, when not Allowed, the shortest wait after which a
	// Take of the same key, limit and window is allowed if no other run is
	// counted meanwhile (at least one nanosecond); 0 when Allowed.
	RetryAfter time.Duration
}

// Counter is a store of budget counters. Take is called once per run,
// before the run starts; it must be safe for concurrent use, from one
// process and from every process sharing the store.
//
// What an implementation must do (package budgettest checks each point):
//
//   - Counts are per (key, window): one key taken with two windows is two
//     counters. Keys are any text of 1 to MaxKeyLength bytes; the
//     implementation may hash them, but two keys never share a count.
//   - Take counts one run and answers Allowed when the sliding estimate
//     with this run, prev*(1-f) + curr + 1 (f the elapsed share of the
//     current fixed window, windows aligned to multiples of window since
//     the Unix epoch), is at most limit. Window.Take is that rule.
//   - A refused Take counts nothing, so that a client retrying too early
//     does not push its own retry further.
//   - Check and count are one atomic step: N concurrent Takes on a fresh
//     key, from any number of processes, allow exactly min(N, limit).
//   - RetryAfter of a refusal is Window.Take's: retrying after it is
//     allowed, with no other run meanwhile.
//   - Counts older than two windows may be forgotten (they weigh nothing);
//     counts younger must not be. Storage stays bounded by the keys taken
//     in the last two windows (an implementation expires the others).
//   - Arguments out of range (see Check) are refused with an error
//     wrapping ErrInvalid before any I/O.
//   - Any other failure (the store unreachable, ctx done) is returned as
//     an error, never as a refusal or an admission: the caller's setting
//     decides what a broken store means (fail closed or open).
//
// A shared implementation keeps time by one clock for all its processes
// where it can (Redis's TIME); one that uses its callers' clocks is as
// exact as their clocks agree.
type Counter interface {
	Take(ctx context.Context, key string, limit int64, window time.Duration) (Decision, error)
}

// Check returns an error wrapping ErrInvalid when a Take's arguments are out
// of range: an empty key, or one longer than MaxKeyLength or not UTF-8; a
// limit below 1; a window shorter than a millisecond (the shared stores
// count in milliseconds) or not a whole number of milliseconds.
func Check(key string, limit int64, window time.Duration) error {
	switch {
	case key == "" || len(key) > MaxKeyLength || !utf8.ValidString(key):
		return fmt.Errorf("%w: the key must be 1 to %d bytes of UTF-8 text, got %d bytes", ErrInvalid, MaxKeyLength, len(key))
	case limit < 1:
		return fmt.Errorf("%w: the limit of %q is %d; it must be at least 1", ErrInvalid, key, limit)
	case window < time.Millisecond || window%time.Millisecond != 0:
		return fmt.Errorf("%w: the window of %q is %s; it must be a whole number of milliseconds, at least 1ms", ErrInvalid, key, window)
	}
	return nil
}

// Window is one key's counts in the two fixed windows: the current one,
// starting at Start (a multiple of the window's size since the Unix epoch),
// and the one before it. Implementations load it, call Take and store it
// back, in one atomic step.
type Window struct {
	Start      time.Time
	Prev, Curr int64
}

// Advance moves w to the fixed window holding now: the current window
// becomes the previous one when now is in the next, both are emptied when
// now is later still. A clock that went back leaves w as it is: counts are
// never lost to a clock step.
func (w *Window) Advance(now time.Time, size time.Duration) {
	cur := now.Round(0).Add(-time.Duration(mod(now.UnixNano(), int64(size))))
	switch {
	case cur.Equal(w.Start):
	case cur.Equal(w.Start.Add(size)):
		w.Prev, w.Curr, w.Start = w.Curr, 0, cur
	case cur.After(w.Start):
		w.Prev, w.Curr, w.Start = 0, 0, cur
	}
}

func mod(a, b int64) int64 {
	m := a % b
	if m < 0 {
		m += b
	}
	return m
}

// Take advances w to now and counts one run when the budget has room,
// returning the Decision every Counter answers.
func (w *Window) Take(now time.Time, limit int64, size time.Duration) Decision {
	w.Advance(now, size)
	elapsed := now.Sub(w.Start)
	if Fits(w.Prev, w.Curr, limit, elapsed, size) {
		w.Curr++
		return Decision{Allowed: true, Count: w.Curr}
	}
	return Decision{Count: w.Curr, RetryAfter: Wait(w.Prev, w.Curr, limit, elapsed, size)}
}

// Fits reports whether one more run fits a window whose fixed windows
// hold prev and curr runs, elapsed into the current one: whether
// prev*(1-elapsed/size) + curr <= limit-1, computed exactly as
// prev*(size-elapsed) + curr*size <= (limit-1)*size in 128 bits (float
// rounding would make a retry at the promised time fail now and then).
// An elapsed outside [0, size] is taken as its nearest end.
func Fits(prev, curr, limit int64, elapsed, size time.Duration) bool {
	elapsed = min(max(elapsed, 0), size)
	if prev < 0 || curr < 0 || limit < 1 {
		return false
	}
	room := uint64(limit - 1)
	h1, l1 := bits.Mul64(uint64(prev), uint64(size-elapsed))
	h2, l2 := bits.Mul64(uint64(curr), uint64(size))
	lo, carry := bits.Add64(l1, l2, 0)
	hi := h1 + h2 + carry
	hr, lr := bits.Mul64(room, uint64(size))
	return hi < hr || (hi == hr && lo <= lr)
}

// Wait returns, for a window where Fits is false, the shortest time after
// which it holds with no other run counted: within the current fixed
// window when the previous one's weight shrinks enough, in the next one
// otherwise. It is at least a nanosecond.
func Wait(prev, curr, limit int64, elapsed, size time.Duration) time.Duration {
	elapsed = min(max(elapsed, 0), size)
	if Fits(prev, curr, limit, elapsed, size) {
		return 0
	}
	room := limit - 1
	if curr <= room && prev > 0 {
		if e := earliest(prev, curr, limit, size); e < size {
			return max(e-elapsed, 1)
		}
	}
	return max(size-elapsed+earliest(curr, 0, limit, size), 1)
}

// earliest returns the least elapsed time e in [0, size] at which Fits
// holds, for prev > 0 and curr <= limit-1 (so that it holds at size). Fits
// only gets truer as e grows: a float estimate is corrected a nanosecond
// at a time, which takes a step or two.
func earliest(prev, curr, limit int64, size time.Duration) time.Duration {
	if prev <= 0 {
		return 0
	}
	g := 1 - float64(limit-1-curr)/float64(prev)
	e := min(max(time.Duration(math.Ceil(g*float64(size))), 0), size)
	for e < size && !Fits(prev, curr, limit, e, size) {
		e++
	}
	for e > 0 && Fits(prev, curr, limit, e-1, size) {
		e--
	}
	return e
}
