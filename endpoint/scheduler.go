package endpoint

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"sync"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

// Defaults of the scheduler's settings in Config.
const (
	// DefaultScheduleInterval is how often the scheduler looks for
	// materialized endpoints that are due.
	DefaultScheduleInterval = 30 * time.Second
	// DefaultRefreshJitter is the share of an endpoint's freshness period
	// by which its refresh may come early.
	DefaultRefreshJitter = 0.1
	// DefaultScheduleConcurrency is how many refreshes the scheduler runs
	// at once.
	DefaultScheduleConcurrency = 2
	// failureRetry bounds how long the scheduler waits after a failed
	// refresh before trying again (less for a shorter freshness period).
	failureRetry = 5 * time.Minute
)

// ErrScheduling is returned by Schedule when the Service's scheduler is
// running already.
var ErrScheduling = errors.New("endpoint: the scheduler is running already")

// refreshRequest asks the scheduler to refresh one endpoint at once, for
// trigger: "saved" (requestRefreshIfPending) or "woken" (a run of a
// hibernating materialization).
type refreshRequest struct{ project, id, name, trigger string }

// refreshRequestQueue is how many refresh requests wait for a busy
// scheduler; past it a request is dropped, and the scheduler's next look
// finds the endpoint pending.
const refreshRequestQueue = 256

// requestRefreshIfPending asks a running scheduler to refresh e at once
// when it is materialized and has no table for its current version and
// settings: the first refresh after a create or update, so that the table
// is ready seconds later rather than at the next look. Without a running
// scheduler the request waits in a short queue (or is dropped); the
// scheduler refreshes pending endpoints when it starts anyway. c is e's
// current version compiled.
func (s *Service) requestRefreshIfPending(e *driver.Endpoint, c *compiled) {
	st := &e.MaterializationState
	if !e.IsMaterialized || c == nil || st.Table != "" && st.Built == tableKey(e, c) {
		return
	}
	select {
	case s.refreshRequests <- refreshRequest{e.ProjectID, e.ID, e.Name, "saved"}:
	default:
	}
}

// Schedule keeps the stored tables of materialized endpoints fresh until
// ctx is done: every Config.ScheduleInterval it lists them (of every
// project) and refreshes each that is due — pending (no table for its
// current version and settings), or whose table is older than its
// freshness period less a jitter (up to Config.RefreshJitter of the
// period, fixed per endpoint and table, so that endpoints created together
// do not all refresh together) — and at once each that a create or update
// made pending. After a failed refresh it waits the freshness period or
// five minutes, whichever is less, before trying that version again.
// Refreshes run at most Config.ScheduleConcurrency at a time, each under
// the endpoint's lease (see Leaser), so that Services sharing a store never
// refresh an endpoint twice at once.
//
// Schedule returns nil once ctx is done and the refreshes under way have
// ended (they are cancelled with ctx), or ErrScheduling when this Service
// is scheduling already. A host starts it in a goroutine next to its
// server and stops it with the context.
func (s *Service) Schedule(ctx context.Context) error {
	if !s.scheduling.CompareAndSwap(false, true) {
		return ErrScheduling
	}
	defer s.scheduling.Store(false)
	var (
		wg    sync.WaitGroup
		fl    = refreshesUnderWay{again: map[string]string{}}
		slots = make(chan struct{}, s.cfg.ScheduleConcurrency)
	)
	start := func(project, id, name, trigger string) {
		if !fl.begin(id, trigger) {
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ; trigger != ""; trigger = fl.next(id) {
				select {
				case slots <- struct{}{}:
				case <-ctx.Done():
					fl.end(id)
					return
				}
				still := s.due
				if trigger == triggerWoken {
					still = s.dueAwake
				}
				_, _ = s.refreshGuarded(ctx, project, id, name, false, trigger, still)
				<-slots
			}
		}()
	}
	look := func() {
		list, err := s.cfg.Endpoints.ListMaterialized(ctx)
		if err != nil {
			return
		}
		list = s.live(ctx, list)
		now := s.now()
		for i := range list {
			if e := &list[i]; s.due(ctx, e, now) {
				start(e.ProjectID, e.ID, e.Name, "scheduled")
			}
		}
	}
	t := time.NewTicker(s.cfg.ScheduleInterval)
	defer t.Stop()
	look()
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			return nil
		case k := <-s.refreshRequests:
			start(k.project, k.id, k.name, k.trigger)
		case <-t.C:
			look()
		}
	}
}

// refreshesUnderWay are the scheduler's refreshes under way, by endpoint
// id, each with the trigger of a request for it that came meanwhile ("" for none).
// The scheduler refreshes once more after such a one, when the endpoint is
// still due: the refresh request of an update that lands as the refresh of the
// version before ends is not lost until the next look.
type refreshesUnderWay struct {
	mu    sync.Mutex
	again map[string]string
}

// begin reports whether a refresh of id may start, and when one is under
// way notes trigger for after it.
func (f *refreshesUnderWay) begin(id, trigger string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.again[id]; ok {
		f.again[id] = trigger
		return false
	}
	f.again[id] = ""
	return true
}

// next returns the trigger noted while id refreshed, and forgets the refresh
// when there is none.
func (f *refreshesUnderWay) next(id string) string {
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

// end forgets the refresh of id.
func (f *refreshesUnderWay) end(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.again, id)
}

// dueAwake reports whether the scheduler should refresh e at now, were it
// not hibernating (see due). An endpoint whose current version does not
// compile is due: its refresh fails and says why, and the back-off then
// applies.
func (s *Service) dueAwake(ctx context.Context, e *driver.Endpoint, now time.Time) bool {
	st := &e.MaterializationState
	c, err := s.compiledVersion(ctx, e, e.CurrentVersion)
	if err != nil {
		return st.Status != StatusFailed || st.FailedAt == nil || !now.Before(st.FailedAt.Add(min(freshness(e), failureRetry)))
	}
	key := tableKey(e, c)
	period := freshness(e)
	if st.Status == StatusFailed && st.Attempt == key && st.FailedAt != nil &&
		now.Before(st.FailedAt.Add(min(period, failureRetry))) {
		return false
	}
	if st.Table == "" || st.At == nil || st.Built != key {
		return true
	}
	early := time.Duration(float64(period) * s.cfg.RefreshJitter * jitterOf(e.ID, *st.At))
	return !now.Before(st.At.Add(period - early))
}

// jitterOf is a number in [0, 1) fixed by an endpoint and the instant of
// its table: every process computes the same one, and it changes with
// every refresh.
func jitterOf(id string, at time.Time) float64 {
	h := sha256.New()
	h.Write([]byte(id))
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(at.UnixNano()))
	h.Write(b[:])
	sum := h.Sum(nil)
	return float64(binary.BigEndian.Uint64(sum[:8])>>11) / (1 << 53)
}
