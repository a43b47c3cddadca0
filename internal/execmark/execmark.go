// Package execmark throttles the writes of an endpoint's last_executed_at
// mark: of the runs of one endpoint, a Service writes one mark per
// resolution, claimed without a lock.
package execmark

import (
	"sync"
	"sync/atomic"
	"time"
)

// Marks throttle the writes of last_executed_at: a busy endpoint
// would otherwise cost one store write per run. A run records its time only
// when the last recorded one, by this Service, is at least resolution
// older, so last_executed_at may lag the latest run by up to resolution.
//
// A run takes no lock: each endpoint's last time is an atomic value
// (nanoseconds since the epoch, 0 for none) that a run reads, and claims
// with a compare-and-swap when due; the map of them is a sync.Map, which
// reads an endpoint seen before without a lock.
type Marks struct {
	resolution time.Duration
	last       sync.Map // endpoint id -> *atomic.Int64, the time last written
}

// New returns the marks of a Service that writes a mark at most once
// every resolution per endpoint.
func New(resolution time.Duration) *Marks {
	return &Marks{resolution: resolution}
}

// slot returns the last time of id, made when there is none.
func (m *Marks) slot(id string) *atomic.Int64 {
	if v, ok := m.last.Load(id); ok {
		return v.(*atomic.Int64)
	}
	v, _ := m.last.LoadOrStore(id, new(atomic.Int64))
	return v.(*atomic.Int64)
}

// timeOf is the instant of n nanoseconds since the epoch, zero for 0.
func timeOf(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// Due reports whether a run of id at now should be written, and if so
// claims it, so that concurrent runs write once.
func (m *Marks) Due(id string, now time.Time) (prev time.Time, ok bool) {
	last, n := m.slot(id), now.UnixNano()
	for {
		p := last.Load()
		if p != 0 && n-p < int64(m.resolution) && n >= p {
			return timeOf(p), false
		}
		if last.CompareAndSwap(p, n) {
			return timeOf(p), true
		}
	}
}

// Release gives a claim back after a failed write, so the next run retries.
func (m *Marks) Release(id string, claimed, prev time.Time) {
	v, ok := m.last.Load(id)
	if !ok {
		return
	}
	p := int64(0)
	if !prev.IsZero() {
		p = prev.UnixNano()
	}
	v.(*atomic.Int64).CompareAndSwap(claimed.UnixNano(), p)
}

// Latest returns when this Service last claimed a mark of id (zero when
// never).
func (m *Marks) Latest(id string) time.Time {
	v, ok := m.last.Load(id)
	if !ok {
		return time.Time{}
	}
	return timeOf(v.(*atomic.Int64).Load())
}

// Forget drops a deleted endpoint.
func (m *Marks) Forget(id string) { m.last.Delete(id) }
