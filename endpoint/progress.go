package endpoint

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

// DefaultLowSavingsRatio is Config.LowSavingsRatio's default: a stored
// table holding half as many rows as the source rows its query reads, or
// more, saves little over running the query.
const DefaultLowSavingsRatio = 0.5

// Phases of a refresh under way, as RefreshProgress.Phase names them.
const (
	// PhaseWaiting: the refresh waits for the endpoint's lease or for a
	// turn among Config.MaxRefreshes.
	PhaseWaiting = "waiting"
	// PhaseBuilding: the engine runs the pre-compute query into a new
	// table, in one statement.
	PhaseBuilding = "building"
	// PhaseCounting: the new table's rows are being counted.
	PhaseCounting = "counting"
	// PhaseMeasuring: the new table's bytes are being measured, and at
	// the first refresh of a version the source rows counted.
	PhaseMeasuring = "measuring"
	// PhaseSwapping: the new table replaces the serving one.
	PhaseSwapping = "swapping"
)

// buildRowsNote says why a refresh reports no rows while it builds.
const buildRowsNote = "the engine writes the stored table in one statement and says how many rows it wrote only when that statement ends; rows and bytes are reported from then on"

// RefreshProgress is a refresh under way in this Service, as the
// materialization status reports it.
type RefreshProgress struct {
	// Phase is what the refresh does now: waiting, building, counting,
	// measuring or swapping.
	Phase string `json:"phase"`
	// Trigger is what started it: manual, saved, scheduled, stale or
	// woken.
	Trigger string `json:"trigger"`
	// RowsWritten and BytesWritten are the rows and bytes of the new
	// table so far; null while the engine cannot say (see Note).
	RowsWritten  *int64 `json:"rows_written"`
	BytesWritten *int64 `json:"bytes_written"`
	// ElapsedMS is how long the refresh has run.
	ElapsedMS float64 `json:"elapsed_ms"`
	// StartedAt is when it started.
	StartedAt time.Time `json:"started_at"`
	// Note says why a figure is null, when one is.
	Note string `json:"note,omitempty"`
}

// refreshRun is a refresh under way in this Service: its progress, read
// by the status while the refresh writes it.
type refreshRun struct {
	trigger string
	started time.Time
	// key is the key of the table it builds, set once the endpoint is
	// read under the lock.
	key   string
	mu    sync.Mutex
	phase string
	rows  *int64
	bytes *int64
}

func (r *refreshRun) set(phase string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.phase = phase
	r.mu.Unlock()
}

func (r *refreshRun) setRows(n *int64) {
	if r == nil || n == nil {
		return
	}
	r.mu.Lock()
	r.rows = n
	r.mu.Unlock()
}

func (r *refreshRun) setBytes(n *int64) {
	if r == nil || n == nil {
		return
	}
	r.mu.Lock()
	r.bytes = n
	r.mu.Unlock()
}

// progress is the report of r at now.
func (r *refreshRun) progress(now time.Time) *RefreshProgress {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := &RefreshProgress{Phase: r.phase, Trigger: r.trigger, RowsWritten: r.rows, BytesWritten: r.bytes,
		ElapsedMS: ms(now.Sub(r.started)), StartedAt: r.started}
	if r.rows == nil && r.phase != PhaseWaiting {
		p.Note = buildRowsNote
	}
	return p
}

// runs are the refreshes under way in a Service, by endpoint id.
type runs struct{ m sync.Map }

func (rs *runs) begin(id, trigger string, started time.Time) *refreshRun {
	r := &refreshRun{trigger: trigger, started: started, phase: PhaseWaiting}
	rs.m.Store(id, r)
	return r
}

func (rs *runs) end(id string, r *refreshRun) { rs.m.CompareAndDelete(id, r) }

func (rs *runs) get(id string) *refreshRun {
	r, ok := rs.m.Load(id)
	if !ok {
		return nil
	}
	return r.(*refreshRun)
}

// savings are, by endpoint id, the keys of tables that a refresh
// triggered by a save built and that no Materialize has claimed yet: the
// Materialize that follows a save (the README's sequence) finds the table
// of the save built and does not build it again.
type savings struct{ m sync.Map }

func (sv *savings) built(id, key string) { sv.m.Store(id, key) }

// claim reports whether the table of key was built for a save since the
// last Materialize of id, and forgets it either way.
func (sv *savings) claim(id, key string) bool {
	k, ok := sv.m.LoadAndDelete(id)
	return ok && k.(string) == key
}

// savedStill is the check of a Materialize once it holds the endpoint's
// lease: it refreshes unless the refresh of a save (waited for, or just
// ended) built the table of the endpoint's current key, which then
// serves.
func (s *Service) savedStill(ctx context.Context, e *driver.Endpoint, _ time.Time) bool {
	c, err := s.compiledVersion(ctx, e, e.CurrentVersion)
	if err != nil {
		return true
	}
	key := tableKey(e, c)
	st := &e.MaterializationState
	if s.saved.claim(e.ID, key) && st.Status == StatusCompleted && st.Built == key && st.Table != "" {
		return false
	}
	return true
}

// MaterializeStarted is what StartMaterialize did.
type MaterializeStarted struct {
	// Joined tells that a refresh of the endpoint was under way or
	// queued already: the request joined it instead of building again.
	Joined bool
}

// StartMaterialize starts a refresh of the stored table of the
// materialized endpoint named name in the background, as Materialize runs
// it, and returns at once: the materialization status then shows its
// progress and its end. A refresh asked for while another Materialize of
// the endpoint is queued or under way joins it; one that follows a save
// whose refresh is under way or has just built the current version joins
// that refresh instead of building the table twice. The background refresh
// outlives ctx (it is bounded by Config.RefreshTimeout); its failure is in
// the status and told to the Observer.
func (s *Service) StartMaterialize(ctx context.Context, project, name string) (MaterializeStarted, error) {
	e, err := s.get(ctx, project, name)
	if err != nil {
		return MaterializeStarted{}, err
	}
	if !e.IsMaterialized {
		return MaterializeStarted{}, invalidf(CodeInvalidInput, "is_materialized", "Endpoint '%s' is not materialized; set is_materialized to true first.", name)
	}
	if _, queued := s.manual.LoadOrStore(e.ID, struct{}{}); queued {
		return MaterializeStarted{Joined: true}, nil
	}
	joined := false
	if r := s.runs.get(e.ID); r != nil && r.trigger == "saved" {
		joined = true
	}
	bg := context.WithoutCancel(ctx)
	go func() {
		defer s.manual.Delete(e.ID)
		ran, err := s.refreshGuarded(bg, project, e.ID, name, true, "manual", s.savedStill)
		if err != nil && !ran {
			// A refresh that ran told the Observer already; one that never
			// started is told here, so that no failure goes unseen.
			s.observer.ObserveRefresh(bg, RefreshEvent{Project: project, Endpoint: name, Trigger: "manual", Rows: -1,
				Err: fmt.Errorf("the background materialization did not start: %w", err)})
		}
	}()
	return MaterializeStarted{Joined: joined}, nil
}

// progressOf is the progress of the refresh of id under way in this
// Service, nil when none is.
func (s *Service) progressOf(id string) *RefreshProgress {
	r := s.runs.get(id)
	if r == nil {
		return nil
	}
	return r.progress(s.now())
}

// lowSavings is the warning of a stored table of rows rows built from
// source source rows, when it holds at least Config.LowSavingsRatio of
// them; "" otherwise, or when either is unknown.
func (s *Service) lowSavings(rows, source *int64) string {
	if rows == nil || source == nil || *source <= 0 || s.cfg.LowSavingsRatio <= 0 {
		return ""
	}
	ratio := float64(*rows) / float64(*source)
	if ratio < s.cfg.LowSavingsRatio {
		return ""
	}
	return fmt.Sprintf("The stored table holds %d rows for the %d source rows its query reads (%.0f%%, at or above low_savings_ratio %.0f%%): materializing this endpoint saves little over running its query.",
		*rows, *source, 100*ratio, 100*s.cfg.LowSavingsRatio)
}

// countSource counts the source rows the pre-compute query of v reads as
// of at, for a SQL endpoint; nil for an insight or when the count fails
// (which does not fail the refresh, and the status then says nothing of
// the savings).
func (s *Service) countSource(ctx context.Context, c *compiled, v *verdict, at time.Time) *int64 {
	if c.insight != nil || v.scoped == nil {
		return nil
	}
	st, err := v.scoped.SourceCount(at)
	if err != nil {
		return nil
	}
	return s.countOf(ctx, st)
}
