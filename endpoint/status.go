package endpoint

import (
	"context"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

// MaterializationReport is the state of an endpoint's materialization, as
// GET endpoints/{name}/materialization_status/ answers it.
type MaterializationReport struct {
	Name           string `json:"name"`
	IsMaterialized bool   `json:"is_materialized"`
	// Status is the endpoint's materialization status, in the same words:
	// pending (no refresh of the current version and settings has
	// completed), running, completed or failed; null for an endpoint that
	// is not materialized.
	Status *MaterializationStatus `json:"status"`
	// Serving tells that runs read the stored table now: it is ready and
	// younger than the freshness period.
	Serving bool `json:"serving"`
	// Version is the version the stored table was built from, 0 when there
	// is no table.
	Version int `json:"version"`
	// LastSuccessAt is when the data of the latest completed refresh was
	// taken; Rows its row count, Bytes what its table takes in the
	// database (null when not measured) and DurationMS how long it ran.
	LastSuccessAt *time.Time `json:"last_success_at"`
	Rows          *int64     `json:"rows"`
	Bytes         *int64     `json:"bytes"`
	DurationMS    *float64   `json:"duration_ms"`
	// LastError says why the latest refresh failed, without engine
	// internals; LastErrorAt is when. Both are null unless Status is
	// failed.
	LastError   *string    `json:"last_error"`
	LastErrorAt *time.Time `json:"last_error_at"`
	// DataFreshnessSeconds is the endpoint's data freshness (the age of
	// cached answers), MaterializationFreshnessSeconds the freshness period
	// of its stored table (materialization_freshness when set, the data
	// freshness otherwise), and NextRefreshAt when the scheduler
	// (Service.Schedule) refreshes it next at the latest: at once when
	// pending, otherwise when the table reaches its freshness period less
	// the jitter; null while the materialization hibernates.
	DataFreshnessSeconds            int        `json:"data_freshness_seconds"`
	MaterializationFreshnessSeconds int        `json:"materialization_freshness_seconds"`
	NextRefreshAt                   *time.Time `json:"next_refresh_at"`
	// Hibernating tells that no run read the materialization for the
	// Service's HibernateAfter (Config.HibernateAfter): it is not
	// refreshed, and the next run answers inline and wakes it.
	// HibernatingSince is when it fell asleep.
	Hibernating      bool       `json:"hibernating"`
	HibernatingSince *time.Time `json:"hibernating_since"`
	// Progress is the refresh under way in this process (phase, rows and
	// bytes written so far, elapsed), null when none is.
	Progress *RefreshProgress `json:"progress"`
	// SourceRows is how many source rows the query read when the stored
	// table of its version was first built (null when not measured: an
	// insight's table, or before the first refresh).
	SourceRows *int64 `json:"source_rows"`
	// SavingsWarning, when set, says that the stored table holds nearly
	// as many rows as the source (Config.LowSavingsRatio of them or
	// more): materializing then saves little.
	SavingsWarning *string `json:"savings_warning"`
	// EdgeIndex is what the latest completed refresh found, asking the
	// engine's query plan, of the reads of the source that runs make
	// beside the stored table (the partial buckets of a range off its
	// buckets' boundaries, the live tail): EdgeIndexUsed, EdgeIndexNotUsed,
	// EdgeIndexNotChecked or EdgeIndexCheckFailed; null when runs read no
	// source beside the table, or before the first refresh.
	// EdgeIndexWarning says which read and what to do, unless every one
	// uses an index.
	EdgeIndex        *string `json:"edge_index"`
	EdgeIndexWarning *string `json:"edge_index_warning"`
}

// MaterializationStatus reports the materialization of the endpoint named
// name.
func (s *Service) MaterializationStatus(ctx context.Context, project, name string) (MaterializationReport, error) {
	e, err := s.get(ctx, project, name)
	if err != nil {
		return MaterializationReport{}, err
	}
	now := s.now()
	r := MaterializationReport{
		Name: e.Name, IsMaterialized: e.IsMaterialized,
		DataFreshnessSeconds:            int(dataFreshness(&e) / time.Second),
		MaterializationFreshnessSeconds: int(freshness(&e) / time.Second),
	}
	st := e.MaterializationState
	r.lastBuild(st)
	if !e.IsMaterialized {
		return r, nil
	}
	if r.Rows != nil {
		r.SourceRows = st.SourceRows
		if w := s.lowSavings(st.Rows, st.SourceRows); w != "" {
			r.SavingsWarning = &w
		}
	}
	status := s.materializationView(ctx, &e).Status
	r.Status = &status
	if p := s.progressOf(e.ID); p != nil && (status == StatusRunning || p.Phase == PhaseWaiting) {
		// A refresh that stored its end is no longer under way.
		r.Progress = p
	}
	if status == StatusFailed {
		msg := st.Error
		r.LastError, r.LastErrorAt = &msg, st.FailedAt
	}
	built := false
	if c, err := s.compiledVersion(ctx, &e, e.CurrentVersion); err == nil {
		_, _, r.Serving = servingTable(&e, c, now)
		built = st.Built == tableKey(&e, c)
	}
	if since, ok := s.hibernatingSince(&e, now); ok {
		r.Hibernating, r.HibernatingSince = true, &since
		return r, nil
	}
	next := s.nextRefresh(&e, status, built, now)
	r.NextRefreshAt = &next
	return r, nil
}

// builtVersion reads the version number out of a table key ("v3;...").
func builtVersion(key string) int {
	n := 0
	for i := 1; i < len(key) && key[0] == 'v'; i++ {
		c := key[i]
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// lastBuild sets the fields of r that describe the table st last built, if
// any.
func (r *MaterializationReport) lastBuild(st driver.MaterializationState) {
	if st.Table == "" || st.At == nil {
		return
	}
	at := *st.At
	r.LastSuccessAt, r.Rows, r.Bytes = &at, st.Rows, st.Bytes
	r.Version = builtVersion(st.Built)
	if st.EdgeIndex != "" {
		edge := st.EdgeIndex
		r.EdgeIndex = &edge
	}
	if st.EdgeIndexNote != "" {
		note := st.EdgeIndexNote
		r.EdgeIndexWarning = &note
	}
	if st.Took > 0 || st.Rows != nil {
		d := ms(st.Took)
		r.DurationMS = &d
	}
}

// nextRefresh is when the scheduler will next refresh e, whose status is
// status and whose table is of its current key when built: at once when
// no table of the current key was built; then once its freshness has
// passed (less the jitter); after a failure, not before the retry delay.
func (s *Service) nextRefresh(e *driver.Endpoint, status MaterializationStatus, built bool, now time.Time) time.Time {
	st := e.MaterializationState
	next := now
	if st.Table != "" && st.At != nil && built {
		period := freshness(e)
		early := time.Duration(float64(period) * s.cfg.RefreshJitter * jitterOf(e.ID, *st.At))
		next = st.At.Add(period - early)
	}
	if status == StatusFailed && st.FailedAt != nil {
		if retry := st.FailedAt.Add(min(freshness(e), failureRetry)); retry.After(next) {
			next = retry
		}
	}
	return next
}
