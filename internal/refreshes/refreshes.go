// Package refreshes keeps the state of a Service's refreshes of stored
// tables that needs nothing of the Service: one lock per endpoint (Locks),
// the refreshes under way with their progress (Runs), the tables the
// refresh of a save built that the next Materialize may claim (Savings),
// and the scheduler's refreshes under way with the requests that came
// meanwhile (UnderWay). Every type is safe for concurrent use, and its
// zero value is ready.
package refreshes

import (
	"context"
	"sync"
	"time"
)

// Locks hold one lock per endpoint id, so that this process runs at
// most one refresh of an endpoint at a time. Only refreshes of the same
// endpoint wait on it: runs, writes and deletes never do.
type Locks struct {
	m sync.Map // endpoint id -> chan struct{} (capacity 1: held when full)
}

// Get returns the lock of id, made when there is none: a channel of
// capacity 1, held while full (Acquire takes it, a receive gives it back).
func (l *Locks) Get(id string) chan struct{} {
	ch, _ := l.m.LoadOrStore(id, make(chan struct{}, 1))
	return ch.(chan struct{})
}

// Busy reports whether a refresh of id is under way.
func (l *Locks) Busy(id string) bool {
	ch, ok := l.m.Load(id)
	return ok && len(ch.(chan struct{})) > 0
}

// Forget drops the lock of id (a deleted endpoint's).
func (l *Locks) Forget(id string) { l.m.Delete(id) }

// Acquire takes ch, waiting while ctx lasts.
func Acquire(ctx context.Context, ch chan struct{}) error {
	select {
	case ch <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Run is a refresh under way: its progress, read by the status while the
// refresh writes it. Its methods do nothing on a nil Run.
type Run struct {
	// Trigger is what started the refresh (manual, saved, scheduled,
	// stale, woken) and Started when: both set by Runs.Begin.
	Trigger string
	Started time.Time
	// Key is the key of the table it builds, set once the endpoint is
	// read under the lock, by the refresh itself and read by it only.
	Key   string
	mu    sync.Mutex
	phase string
	rows  *int64
	bytes *int64
}

// Set notes the phase the refresh is in.
func (r *Run) Set(phase string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.phase = phase
	r.mu.Unlock()
}

// SetRows notes the rows of the new table, when known (n not nil).
func (r *Run) SetRows(n *int64) {
	if r == nil || n == nil {
		return
	}
	r.mu.Lock()
	r.rows = n
	r.mu.Unlock()
}

// SetBytes notes the bytes of the new table, when known (n not nil).
func (r *Run) SetBytes(n *int64) {
	if r == nil || n == nil {
		return
	}
	r.mu.Lock()
	r.bytes = n
	r.mu.Unlock()
}

// Snapshot is the refresh's phase, rows and bytes now (nil while unknown).
func (r *Run) Snapshot() (phase string, rows, bytes *int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.phase, r.rows, r.bytes
}

// Runs are the refreshes under way in a Service, by endpoint id.
type Runs struct{ m sync.Map }

// Begin notes a refresh of id, started at started by trigger, in phase.
func (rs *Runs) Begin(id, trigger, phase string, started time.Time) *Run {
	r := &Run{Trigger: trigger, Started: started, phase: phase}
	rs.m.Store(id, r)
	return r
}

// End forgets r, the refresh of id, unless another one began since.
func (rs *Runs) End(id string, r *Run) { rs.m.CompareAndDelete(id, r) }

// Get returns the refresh of id under way, nil when there is none.
func (rs *Runs) Get(id string) *Run {
	r, ok := rs.m.Load(id)
	if !ok {
		return nil
	}
	return r.(*Run)
}

// Savings are, by endpoint id, the keys of tables that a refresh
// triggered by a save built and that no Materialize has claimed yet: the
// Materialize that follows a save (the README's sequence) finds the table
// of the save built and does not build it again.
type Savings struct{ m sync.Map }

// Built notes that the refresh of a save built the table of key for id.
func (sv *Savings) Built(id, key string) { sv.m.Store(id, key) }

// Claim reports whether the table of key was built for a save since the
// last Materialize of id, and forgets it either way.
func (sv *Savings) Claim(id, key string) bool {
	k, ok := sv.m.LoadAndDelete(id)
	return ok && k.(string) == key
}

// UnderWay are the scheduler's refreshes under way, by endpoint
// id, each with the trigger of a request for it that came meanwhile ("" for none).
// The scheduler refreshes once more after such a one, when the endpoint is
// still due: the refresh request of an update that lands as the refresh of the
// version before ends is not lost until the next look.
type UnderWay struct {
	mu    sync.Mutex
	again map[string]string
}

// Begin reports whether a refresh of id may start, and when one is under
// way notes trigger for after it.
func (f *UnderWay) Begin(id, trigger string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.again == nil {
		f.again = map[string]string{}
	}
	if _, ok := f.again[id]; ok {
		f.again[id] = trigger
		return false
	}
	f.again[id] = ""
	return true
}

// Next returns the trigger noted while id refreshed, and forgets the refresh
// when there is none.
func (f *UnderWay) Next(id string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.again[id]
	if t == "" {
		delete(f.again, id)
	} else {
		f.again[id] = ""
	}
	return t
}

// End forgets the refresh of id.
func (f *UnderWay) End(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.again, id)
}
