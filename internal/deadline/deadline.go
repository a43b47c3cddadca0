// Package deadline gives runs their time limit without a timer of their
// own: a Timer holds the runs under way, in the order they started, in a
// few shards, each with one timer that waits for its oldest run's
// deadline, and cancels each run's Context at its limit or when its
// caller's context ends.
//
// context.WithTimeout would make each run a timer (an allocation, and an
// insertion into and a removal from the runtime's timer heap under its
// lock) and register it with its caller's context (an insertion into a
// map the caller's context allocates), which every run of a cheap query
// pays although its query ends long before the limit. Here a run is one
// allocation of its Context and its cancellation, linked into a shard's
// list under the shard's lock, held for a few pointer writes; the
// registrations with the callers' contexts, which take those contexts'
// locks, are made outside it (see shard.watch).
package deadline

import (
	"context"
	"sync/atomic"
	"time"
)

// Shards is how many shards a Timer has. One: with 8, taken in turn,
// BenchmarkHTTPRun/vs/select1/c=8 at -cpu 8 waited longer on the shards'
// locks, not shorter (the mutex profile: 96-184 ms in start and up to
// 510 ms behind the watchers over 20,000 requests, against 19-43 ms and
// 9 ms with one): each shard arms its own timer and watcher, and the
// runtime's timers cost more than the list's lock they were to spare.
const Shards = 1

// Timer gives runs their time limit (see the package doc). Its zero value
// is not ready: use New.
type Timer struct {
	next   atomic.Uint32
	shards [Shards]shard
}

// New returns a Timer whose runs end timeout after they start. A run whose
// caller's context ends is ended within watchEvery of its start, or at
// once after that (0: 10 ms); its Err reports the caller's error at once
// in any case.
func New(timeout, watchEvery time.Duration) *Timer {
	t := &Timer{}
	for i := range t.shards {
		t.shards[i].timeout, t.shards[i].watchEvery = timeout, watchEvery
	}
	return t
}

// Start returns the context of a run that begins now under parent: it
// ends at the Timer's limit, when parent ends, or at Stop, whichever comes
// first. The caller must call Stop with it when the run ends.
func (t *Timer) Start(parent context.Context) *Context {
	return t.shards[t.next.Add(1)%Shards].start(parent)
}

// Stop ends c (context.Canceled, unless it ended before): it leaves its
// shard, and its context is cancelled, as context.WithTimeout's cancel
// function cancels it. Calling it again does nothing.
func (t *Timer) Stop(c *Context) { c.shard.stop(c) }
