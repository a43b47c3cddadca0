package endpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/insight"
	"github.com/endpointkit/endpointkit/internal/refreshes"
	"github.com/endpointkit/endpointkit/materialize"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/scope"
)

// dropWait bounds the drops of a Delete or an update that turns
// materialization off: on an engine with one writer (SQLite) a drop waits
// for a refresh that builds another table, and the write that asked for it
// must not. A table left behind is an orphan, which RemoveOrphans drops.
const dropWait = time.Second

// tablePrefix starts the name of every stored table (materialize.TableName).
const tablePrefix = "endpointkit_mat_"

// Materialize refreshes the stored table of the materialized endpoint named
// name, synchronously: the status goes to running, the table of the current
// version is rebuilt in the executor's database, and the status goes to
// completed (with last_materialized_at) or failed. A failed refresh leaves
// the last good table in place, serving while it is fresh; its error says
// what failed without engine internals (the cause stays reachable through
// errors.As for a host that logs it).
//
// A refresh of the same endpoint under way in this Service is waited for
// first; when it was the refresh of a save (the first refresh after a
// create or update) and built the current version, or such a refresh
// ended since the last Materialize, its table is the answer and none is
// built again. A turn is waited for too a turn when Config.MaxRefreshes refreshes run already;
// the wait ends with ctx. A refresh takes at most Config.RefreshTimeout and
// builds at most Config.MaxMaterializedRows rows taking at most
// Config.MaxMaterializedBytes bytes. An endpoint deleted or
// changed while its table is built is noticed before the table is swapped
// in: the table is dropped and the refresh fails.
func (s *Service) Materialize(ctx context.Context, project, name string) error {
	e, err := s.materializable(ctx, project, name)
	if err != nil {
		return err
	}
	_, err = s.refreshGuarded(ctx, project, e.ID, name, true, "manual", s.savedStill)
	return err
}

// materializable returns the endpoint named name if Materialize may
// refresh it: it exists and is materialized. Admission asks it before a
// refresh is charged, so that a refusal costs no budget.
func (s *Service) materializable(ctx context.Context, project, name string) (driver.Endpoint, error) {
	e, err := s.get(ctx, project, name)
	if err != nil {
		return driver.Endpoint{}, err
	}
	if !e.IsMaterialized {
		return driver.Endpoint{}, invalidf(CodeInvalidInput, "is_materialized", "Endpoint '%s' is not materialized; set is_materialized to true first.", name)
	}
	return e, nil
}

// refreshWaitError is the error of a Materialize whose context ended while
// it waited for its turn.
func (s *Service) refreshWaitError(name string, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return withCause(NewError(ErrTimeout, CodeTimeout, "", "Materialization of endpoint '"+name+"' timed out waiting for a turn: other refreshes are running."), err)
	}
	return withCause(NewError(ErrExecution, CodeMaterializationFailed, "", "Materialization of endpoint '"+name+"' was cancelled before it started."), err)
}

// RefreshStale refreshes every materialized endpoint, of every project,
// that has no table for its current version, buckets and variable
// definitions, or whose table is older than its freshness period, or
// whose live tail the scheduler refreshes at the start of a day and that
// day has begun (see Service.Schedule), one after another; each waits for
// a turn among Config.MaxRefreshes.
// Endpoints being refreshed already are skipped, and so are hibernating
// ones (see Config.HibernateAfter). It then drops orphaned
// tables (RemoveOrphans). It returns how many refreshes completed, and the
// failures joined.
func (s *Service) RefreshStale(ctx context.Context) (int, error) {
	list, err := s.cfg.Endpoints.ListMaterialized(ctx)
	if err != nil {
		return 0, storeError(err, nil)
	}
	list = s.live(ctx, list)
	var (
		n    int
		errs []error
	)
	now := s.now()
	for i := range list {
		e := &list[i]
		if _, asleep := s.hibernatingSince(e, now); asleep {
			continue
		}
		if !s.stale(ctx, e, now) {
			continue
		}
		ran, err := s.refreshGuarded(ctx, e.ProjectID, e.ID, e.Name, false, "stale", s.stale)
		if !ran && err == nil {
			continue // being refreshed, here or by another process
		}
		if err != nil {
			errs = append(errs, err)
		} else {
			n++
		}
		if ctx.Err() != nil {
			break
		}
	}
	if ctx.Err() == nil {
		if _, err := s.RemoveOrphans(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return n, errors.Join(errs...)
}

// stale reports whether e has no table that serves at now within its
// freshness period, or is a live tail's due at the start of its cut's day
// (cutDue), or cannot be compiled, which a refresh then reports.
func (s *Service) stale(ctx context.Context, e *driver.Endpoint, now time.Time) bool {
	c, err := s.compiledVersion(ctx, e, e.CurrentVersion)
	if err != nil {
		return true
	}
	return !s.withinPeriod(e, c, now) || s.cutDue(ctx, e, c, now)
}

// withinPeriod reports whether e has a table that serves at now and is
// not older than its freshness period (a live tail's serves a little
// longer, see servingTable, but is stale once its period has passed).
func (s *Service) withinPeriod(e *driver.Endpoint, c *compiled, now time.Time) bool {
	_, at, ok := s.servingTable(e, c, now)
	return ok && now.Sub(at) <= freshness(e)
}

// refresh rebuilds the table of the endpoint with id; the caller holds its
// refresh lock and a turn. The endpoint is read again under the lock, so a
// refresh always builds the version, buckets and variables that are
// current when it starts, and once more before the swap, so that a table
// built for an endpoint deleted or changed meanwhile is dropped instead.
func (s *Service) refresh(ctx context.Context, project, id, name string, run *refreshes.Run) error {
	if s.cfg.RefreshTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.cfg.RefreshTimeout)
		defer cancel()
	}
	e, c, v, err := s.refreshTarget(ctx, project, id, name)
	if err != nil {
		return err
	}
	key := tableKey(&e, c)
	run.Key = key
	table := materialize.TableName(e.ID, e.CurrentVersion)
	st := e.MaterializationState
	st.Status, st.Attempt, st.Error = StatusRunning, key, ""
	if err := s.setState(ctx, &e, st); err != nil {
		return err
	}
	at := s.now()
	if v.plan != nil && v.plan.Tail() {
		// The instant splits the rows between the table and the tail: in
		// whole seconds, it reads back from every store and engine as it
		// was bound.
		at = at.Truncate(time.Second)
	}
	// The version's columns first: a table of another shape is not built.
	next, rows, bytes, err := "", (*int64)(nil), (*int64)(nil), s.checkColumns(ctx, &e, c)
	if err == nil {
		next, rows, bytes, err = s.buildChecked(ctx, project, name, id, key, c, v, table, at, run)
	}
	if err != nil {
		// Whatever was built goes: the last good table stays.
		if next != "" {
			s.dropTable(ctx, next)
		}
		var ue *unchangedError
		if errors.As(err, &ue) {
			return ue.err
		}
		failed := s.now()
		st.Status, st.Error, st.FailedAt = StatusFailed, s.refreshFailure(err), &failed
		// The context may be what failed; the state is still worth saving.
		_ = s.setState(context.WithoutCancel(ctx), &e, st)
		return s.refreshError(name, st.Error, err)
	}
	old := st.Table
	source := st.SourceRows
	if builtVersion(st.Built) != e.CurrentVersion || source == nil {
		// The first table of this version: how many source rows its
		// query reads tells what storing it saves.
		run.Set(PhaseMeasuring)
		source = s.countSource(ctx, c, v, at)
	}
	// Once a refresh: whether an index serves the source reads of runs.
	edge, note := s.checkEdges(ctx, v, at)
	st = driver.MaterializationState{Status: StatusCompleted, Attempt: key, Table: table, Built: key, At: &at,
		Rows: rows, Bytes: bytes, Took: s.now().Sub(at), SourceRows: source, EdgeIndex: edge, EdgeIndexNote: note}
	return s.completeRefresh(ctx, &e, st, old)
}

// refreshTarget reads the endpoint with id again, under its refresh lock,
// and returns it with its compiled current version and the verdict that
// lets it be materialized.
func (s *Service) refreshTarget(ctx context.Context, project, id, name string) (driver.Endpoint, *compiled, *verdict, error) {
	e, err := s.get(ctx, project, name)
	if err != nil {
		return driver.Endpoint{}, nil, nil, err
	}
	if e.ID != id || !e.IsMaterialized {
		// Renamed, replaced or no longer materialized meanwhile.
		return driver.Endpoint{}, nil, nil, notFoundf("Endpoint '%s' is no longer materialized.", name)
	}
	c, err := s.compiledVersion(ctx, &e, e.CurrentVersion)
	if err != nil {
		return driver.Endpoint{}, nil, nil, err
	}
	v := s.verdict(ctx, c, e.MaterializationBuckets, e.MaterializationTailColumn)
	if !v.ok {
		return driver.Endpoint{}, nil, nil, invalidf(CodeCannotMaterialize, "is_materialized", "Cannot materialize endpoint. Reason: %s", v.reason)
	}
	return e, c, v, nil
}

// buildChecked builds the table beside the live one, checks its row count,
// its bytes and that the endpoint is still of key, and swaps it in. It
// returns the name of what it built (to drop on an error), and the rows
// and bytes when known.
func (s *Service) buildChecked(ctx context.Context, project, name, id, key string, c *compiled, v *verdict, table string, at time.Time, run *refreshes.Run) (string, *int64, *int64, error) {
	run.Set(PhaseBuilding)
	next, err := s.build(ctx, c, v, table, at)
	if err != nil {
		return next, nil, nil, err
	}
	run.Set(PhaseCounting)
	rows, err := s.checkRows(ctx, next)
	if err != nil {
		return next, rows, nil, err
	}
	if rows == nil {
		rows = s.countRows(ctx, next)
	}
	run.SetRows(rows)
	run.Set(PhaseMeasuring)
	bytes, err := s.checkBytes(ctx, next)
	if err != nil {
		return next, rows, bytes, err
	}
	run.SetBytes(bytes)
	if err := s.unchanged(ctx, project, name, id, key); err != nil {
		return next, rows, bytes, err
	}
	run.Set(PhaseSwapping)
	return next, rows, bytes, s.swap(ctx, c, v, next, table)
}

// completeRefresh saves the state st of a refresh that swapped its table
// in, and drops old, the table it replaced.
func (s *Service) completeRefresh(ctx context.Context, e *driver.Endpoint, st driver.MaterializationState, old string) error {
	if st.Rows == nil {
		st.Rows = s.countRows(ctx, st.Table)
	}
	if err := s.setState(context.WithoutCancel(ctx), e, st); err != nil {
		if errors.Is(err, ErrNotFound) {
			// Deleted between the check and now: nothing will read it.
			s.dropTable(ctx, st.Table)
		}
		return err
	}
	if old != "" && old != st.Table {
		// The previous version's table served until now; nothing reads it
		// any more.
		s.dropTable(ctx, old)
	}
	return nil
}

// refreshError is the error of a failed refresh, whose state says why.
func (s *Service) refreshError(name, why string, cause error) error {
	e := withCause(NewError(ErrExecution, CodeMaterializationFailed, "", "Materialization of endpoint '"+name+"' failed: "+why), cause)
	var le *Error
	if errors.As(cause, &le) && le.Limit != "" {
		e.Limit, e.LimitValue = le.Limit, le.LimitValue
	}
	if errors.Is(cause, context.DeadlineExceeded) && s.cfg.RefreshTimeout > 0 {
		e.Limit, e.LimitValue = LimitRefreshTimeout, s.cfg.RefreshTimeout.Milliseconds()
	}
	return e
}

// refreshFailure words a failed refresh for the endpoint's error field.
func (s *Service) refreshFailure(err error) string {
	var le *Error
	var changed *ColumnsChangedError
	switch {
	case errors.As(err, &changed):
		return changed.Error()
	case errors.As(err, &le) && le.Limit != "":
		return le.Detail
	case errors.Is(err, context.DeadlineExceeded) && s.cfg.RefreshTimeout > 0:
		return "the refresh ran longer than refresh_timeout (" + s.cfg.RefreshTimeout.String() + ")"
	case errors.Is(err, context.DeadlineExceeded):
		return "the refresh timed out"
	case errors.Is(err, context.Canceled):
		return "the refresh was cancelled"
	}
	return "the query could not be executed against the database"
}

// unchangedError is a refresh that found its endpoint deleted or changed
// before the swap; err is what Materialize returns.
type unchangedError struct{ err error }

func (e *unchangedError) Error() string { return e.err.Error() }

// unchanged checks, before a built table is swapped in, that the endpoint
// is still there, still materialized and still of the key the table was
// built for: a delete or a change while the table was built must not
// leave it behind, nor let it serve.
func (s *Service) unchanged(ctx context.Context, project, name, id, key string) error {
	cur, err := s.liveByName(ctx, project, name)
	switch {
	case errors.Is(err, ErrNotFound) || err == nil && cur.ID != id:
		return &unchangedError{notFoundf("Endpoint '%s' was deleted or renamed while its table was built; the table was dropped.", name)}
	case err != nil:
		return storeError(err, nil)
	}
	cur.ProjectID = project
	c, err := s.compiledVersion(ctx, &cur, cur.CurrentVersion)
	if err != nil || !cur.IsMaterialized || tableKey(&cur, c) != key {
		return &unchangedError{conflictf(CodeConflict, "", "Endpoint '%s' changed while its table was built; the table was dropped. Refresh it again.", name)}
	}
	return nil
}

// build builds a fresh copy of an endpoint's stored table beside it, and
// returns its name; a failure leaves the last good table as it was. The
// stored rows are the project's only: the pre-compute query is made
// through the version's scope, as a run is. With a live tail, they are
// those up to at, which reads are given.
func (s *Service) build(ctx context.Context, c *compiled, v *verdict, table string, at time.Time) (string, error) {
	next := table + "_next"
	var (
		build []scope.Statement
		err   error
	)
	if c.insight == nil {
		build, err = v.scoped.Build(next, at)
	} else {
		build, err = c.scope.InsightBuild(c.insight, next, at)
	}
	if err != nil {
		return next, err
	}
	return next, s.execWithin(ctx, build, s.cfg.MaxMaterializedBytes)
}

// checkRows refuses a built table of more than MaxMaterializedRows rows,
// counting at most one row more than the bound; within the bound the
// count is the table's, which it returns (nil when there is no bound, and
// nothing was counted).
func (s *Service) checkRows(ctx context.Context, next string) (*int64, error) {
	max := s.cfg.MaxMaterializedRows
	if max <= 0 {
		return nil, nil
	}
	res, err := s.queryOwn(ctx, scope.Count(s.cfg.Executor.Engine(), next, max))
	if err != nil {
		return nil, err
	}
	if len(res.Rows) != 1 || len(res.Rows[0]) != 1 {
		return nil, fmt.Errorf("endpoint: counting the rows of %s: %d rows", next, len(res.Rows))
	}
	n, ok := asInt64(res.Rows[0][0])
	if !ok || n > max {
		return nil, limited(NewError(ErrExecution, CodeMaterializationFailed, "",
			fmt.Sprintf("the stored table would hold more than max_materialized_rows (%d) rows", max)), LimitMaxMaterializedRows, max)
	}
	return &n, nil
}

// asInt64 reads a count as drivers return it.
func asInt64(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case uint64:
		return int64(n), n <= 1<<63-1
	case float64:
		return int64(n), true
	case string:
		var i int64
		_, err := fmt.Sscan(n, &i)
		return i, err == nil
	}
	return 0, false
}

// swap replaces table by next, in one transaction where the engine's DDL
// allows, and indexes it.
func (s *Service) swap(ctx context.Context, c *compiled, v *verdict, next, table string) error {
	e := s.cfg.Executor.Engine()
	stmts, inTx := e.Swap(next, table)
	if err := s.execAll(ctx, scope.Owns(stmts), inTx); err != nil {
		return err
	}
	if c.insight == nil {
		// After the swap: a renamed table keeps its index's name.
		r, err := v.plan.Refresh(table)
		if err != nil {
			return err
		}
		if err := s.execAll(ctx, scope.Owns(r.Index), false); err != nil {
			return err
		}
	}
	if c.insight != nil {
		if ddl := insight.Index(c.insight, e, table); ddl != "" {
			return s.execAll(ctx, []scope.Statement{scope.Own(ddl)}, false)
		}
	}
	return nil
}

// execAll runs statements in order, in one transaction when inTx (the
// engine's DDL is transactional). It, queryOwn and executeCapped are the
// only callers of the executor: a statement reaches the database only as a
// scope.Statement.
func (s *Service) execAll(ctx context.Context, stmts []scope.Statement, inTx bool) error {
	return s.cfg.Executor.Exec(ctx, stmts, driver.Write{Tx: inTx})
}

// execWithin runs statements in order as execAll does, growing the
// database by at most maxBytes where the executor can count it, and
// answers a write past it with the max_materialized_bytes error (that is
// the bound it is given). It is the fourth gateway to the executor.
func (s *Service) execWithin(ctx context.Context, stmts []scope.Statement, maxBytes int64) error {
	err := s.cfg.Executor.Exec(ctx, stmts, driver.Write{MaxBytes: maxBytes})
	if errors.Is(err, driver.ErrWriteLimit) {
		return withCause(limited(NewError(ErrExecution, CodeMaterializationFailed, "",
			fmt.Sprintf("the stored table grew past max_materialized_bytes (%d) while it was built", maxBytes)), LimitMaxMaterializedBytes, maxBytes), err)
	}
	return err
}

// queryOwn runs a statement of the library's own (scope.Own) that returns
// rows, outside any run's bounds; and the statement that reads a table's
// columns' types (scope.Scope.Describe, see describeTable), which reads no
// row and is no run's.
func (s *Service) queryOwn(ctx context.Context, st scope.Statement) (*driver.Result, error) {
	return s.cfg.Executor.Query(ctx, st, driver.Bounds{})
}

func (s *Service) setState(ctx context.Context, e *driver.Endpoint, st driver.MaterializationState) error {
	if err := s.cfg.Endpoints.SetMaterialization(ctx, e.ProjectID, e.ID, st); err != nil {
		return storeError(err, func() *Error { return endpointNotFound(e.Name) })
	}
	e.MaterializationState = st
	return nil
}

// dropTable drops a stored table, best effort: a table left behind wastes
// space but serves nothing, since runs read only the table the state names,
// and RemoveOrphans drops it later.
func (s *Service) dropTable(ctx context.Context, table string) {
	_ = s.dropTableErr(context.WithoutCancel(ctx), table)
}

func (s *Service) dropTableErr(ctx context.Context, table string) error {
	return s.execAll(ctx, []scope.Statement{scope.Own(s.cfg.Executor.Engine().DropTable(table))}, false)
}

// dropTables drops every stored table of a deleted endpoint that this
// package knows of, best effort and within dropWait: the delete is done
// already, and leftovers are orphans. The table a refresh of this Service
// is building is left to the refresh, which notices the delete.
func (s *Service) dropTables(ctx context.Context, e *driver.Endpoint) {
	if !e.IsMaterialized && e.MaterializationState.Table == "" {
		return
	}
	cur := materialize.TableName(e.ID, e.CurrentVersion)
	tables := []string{cur}
	if !s.refreshing.Busy(e.ID) {
		tables = append(tables, cur+"_next")
	}
	if t := e.MaterializationState.Table; t != "" && t != cur {
		tables = append(tables, t)
	}
	s.refreshing.Forget(e.ID)
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), dropWait)
	defer cancel()
	for _, t := range tables {
		_ = s.dropTableErr(dctx, t)
	}
}

// dematerialize clears the state of an endpoint that is no longer
// materialized and returns the new state, and the table to drop (once the
// caller lets go of the write lock), if any.
func (s *Service) dematerialize(ctx context.Context, e *driver.Endpoint) (driver.MaterializationState, string) {
	if err := s.cfg.Endpoints.SetMaterialization(ctx, e.ProjectID, e.ID, driver.MaterializationState{}); err != nil {
		// The state names a table that is about to go; a run then fails
		// over to inline, and turning materialization on again rebuilds it.
		return e.MaterializationState, e.MaterializationState.Table
	}
	return driver.MaterializationState{}, e.MaterializationState.Table
}

// dropLater drops table, if any, best effort within dropWait.
func (s *Service) dropLater(ctx context.Context, table string) {
	if table == "" {
		return
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), dropWait)
	defer cancel()
	_ = s.dropTableErr(dctx, table)
}

// RemoveOrphans drops the stored tables (named endpointkit_mat_...) in the
// executor's database that no materialized endpoint of any project needs:
// those of deleted endpoints, of endpoints no longer materialized, of
// versions replaced, and whatever a process that stopped mid-refresh left.
// It keeps, for each materialized endpoint, the table its state names and
// the tables of its current version (a refresh, perhaps of another
// process, may be building them). It returns how many tables it dropped.
// Call it at start-up; RefreshStale calls it after every pass. The engine
// value lists the tables (engine.Engine's Tables).
func (s *Service) RemoveOrphans(ctx context.Context) (int, error) {
	res, err := s.queryOwn(ctx, scope.Own(s.cfg.Executor.Engine().Tables()))
	if err != nil {
		return 0, withCause(NewError(ErrExecution, CodeExecutionFailed, "", "listing the stored tables failed"), err)
	}
	var found []string
	for _, row := range res.Rows {
		if len(row) > 0 {
			if name, ok := row[0].(string); ok && strings.HasPrefix(name, tablePrefix) {
				found = append(found, name)
			}
		}
	}
	if len(found) == 0 {
		return 0, nil
	}
	list, err := s.cfg.Endpoints.ListMaterialized(ctx)
	if err != nil {
		return 0, storeError(err, nil)
	}
	keep := make(map[string]bool, 3*len(list))
	for i := range list {
		e := &list[i]
		cur := materialize.TableName(e.ID, e.CurrentVersion)
		keep[cur], keep[cur+"_next"] = true, true
		if t := e.MaterializationState.Table; t != "" {
			keep[t] = true
		}
	}
	n := 0
	var errs []error
	for _, t := range found {
		if keep[t] {
			continue
		}
		if err := s.dropTableErr(ctx, t); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	if len(errs) > 0 {
		return n, withCause(NewError(ErrExecution, CodeExecutionFailed, "", "dropping orphaned stored tables failed"), errors.Join(errs...))
	}
	return n, nil
}

// DefaultLeaseDuration is Config.LeaseDuration's default.
const DefaultLeaseDuration = time.Minute

// leasePoll is how often a refresh that must wait for another process's
// lease tries again.
const leasePoll = 50 * time.Millisecond

// refreshLease names the lease of the refreshes of an endpoint.
func refreshLease(project, id string) string {
	return "refresh:" + project + ":" + id
}

// takeLease takes the refresh lease of the endpoint with id for this
// Service, when the store has leases: waiting for it when wait is set,
// giving up at once otherwise (ok false). While it is held, it is renewed
// every third of its duration; the context returned is cancelled when a
// renewal finds the lease lost, so that a refresh stops rather than
// overlap another holder's. release ends the renewals and the lease.
func (s *Service) takeLease(ctx context.Context, project, id string, wait bool) (held context.Context, release func(), ok bool, err error) {
	if s.leases == nil {
		return ctx, func() {}, true, nil
	}
	name := refreshLease(project, id)
	dur := s.cfg.LeaseDuration
	for {
		now := s.now()
		got, err := s.leases.AcquireLease(ctx, name, s.holder, now, now.Add(dur))
		if err != nil {
			return nil, nil, false, storeError(fmt.Errorf("taking the refresh lease: %w", err), nil)
		}
		if got {
			break
		}
		if !wait {
			return nil, nil, false, nil
		}
		select {
		case <-ctx.Done():
			return nil, nil, false, contextError(ctx.Err())
		case <-time.After(leasePoll):
		}
	}
	held, cancel := context.WithCancel(ctx)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(dur / 3)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				now := s.now()
				got, err := s.leases.AcquireLease(held, name, s.holder, now, now.Add(dur))
				if err == nil && !got {
					cancel()
					return
				}
			}
		}
	}()
	release = func() {
		close(stop)
		<-done
		cancel()
		_ = s.leases.ReleaseLease(context.WithoutCancel(ctx), name, s.holder)
	}
	return held, release, true, nil
}

// refreshGuarded refreshes the endpoint with id (named name) so that no
// other refresh of it runs at the same time: in this Service (its refresh
// lock) and in any Service sharing the store (a lease); it then waits for a
// turn among Config.MaxRefreshes. With wait it waits for a refresh under
// way to end and then refreshes; without, it returns ran false at once
// when one is under way. still, when not nil, is asked again about the
// endpoint as the store holds it once the lease is held: a refresh that
// another process completed meanwhile is not run twice. The Observer is
// told of every refresh that ran.
func (s *Service) refreshGuarded(ctx context.Context, project, id, name string, wait bool, trigger string, still func(context.Context, *driver.Endpoint, time.Time) bool) (ran bool, err error) {
	lock := s.refreshing.Get(id)
	if ok, err := s.lockRefresh(ctx, lock, name, wait); !ok {
		return false, err
	}
	defer func() { <-lock }()
	run := s.runs.Begin(id, trigger, PhaseWaiting, s.now())
	defer s.runs.End(id, run)
	held, release, ok, err := s.takeLease(ctx, project, id, wait)
	switch {
	case err != nil && ctx.Err() != nil:
		return false, s.refreshWaitError(name, ctx.Err())
	case err != nil || !ok:
		return false, err
	}
	defer release()
	if still != nil {
		e, err := s.liveByName(held, project, name)
		if err != nil || e.ID != id || !still(held, &e, s.now()) {
			return false, nil
		}
	}
	if err := refreshes.Acquire(held, s.refreshSlots); err != nil {
		return false, s.refreshWaitError(name, err)
	}
	defer func() { <-s.refreshSlots }()
	start := time.Now()
	err = s.refresh(held, project, id, name, run)
	if err == nil && trigger == "saved" {
		// Before the lock goes: a Materialize waiting for it finds the
		// table of the save built (savedStill).
		s.saved.Built(id, run.Key)
	}
	s.observeRefresh(ctx, project, name, trigger, time.Since(start), err)
	return true, err
}

// lockRefresh takes lock, the refresh lock of the endpoint named name:
// with wait it waits for it, without it reports false at once when another
// refresh holds it.
func (s *Service) lockRefresh(ctx context.Context, lock chan struct{}, name string, wait bool) (bool, error) {
	if wait {
		if err := refreshes.Acquire(ctx, lock); err != nil {
			return false, s.refreshWaitError(name, err)
		}
		return true, nil
	}
	select {
	case lock <- struct{}{}:
		return true, nil
	default:
		return false, nil
	}
}

// observeRefresh tells the Observer of a refresh that ran, with the rows of
// the table it built when it succeeded.
func (s *Service) observeRefresh(ctx context.Context, project, name, trigger string, took time.Duration, err error) {
	ev := RefreshEvent{Project: project, Endpoint: name, Trigger: trigger, Duration: took, Rows: -1, Err: err}
	if err == nil {
		if e, gerr := s.liveByName(context.WithoutCancel(ctx), project, name); gerr == nil {
			if e.MaterializationState.Rows != nil {
				ev.Rows = *e.MaterializationState.Rows
			}
			ev.EdgeIndex, ev.EdgeIndexWarning = e.MaterializationState.EdgeIndex, e.MaterializationState.EdgeIndexNote
		}
	}
	s.observer.ObserveRefresh(ctx, ev)
}

// countRows counts the rows of a stored table just built; nil when the
// count fails, which does not fail the refresh.
func (s *Service) countRows(ctx context.Context, table string) *int64 {
	return s.countOf(ctx, scope.Count(s.cfg.Executor.Engine(), table, 0))
}

// countOf runs st, a statement of the library's own that answers one
// count, and returns it; nil when it fails or answers anything else.
func (s *Service) countOf(ctx context.Context, st scope.Statement) *int64 {
	res, err := s.queryOwn(ctx, st)
	if err != nil || len(res.Rows) != 1 || len(res.Rows[0]) != 1 {
		return nil
	}
	n, ok := asInt64(res.Rows[0][0])
	if !ok {
		return nil
	}
	return &n
}

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

// progress is the report of r, a refresh under way, at now.
func progress(r *refreshes.Run, now time.Time) *RefreshProgress {
	phase, rows, bytes := r.Snapshot()
	p := &RefreshProgress{Phase: phase, Trigger: r.Trigger, RowsWritten: rows, BytesWritten: bytes,
		ElapsedMS: ms(now.Sub(r.Started)), StartedAt: r.Started}
	if rows == nil && phase != PhaseWaiting {
		p.Note = buildRowsNote
	}
	return p
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
	if s.saved.Claim(e.ID, key) && st.Status == StatusCompleted && st.Built == key && st.Table != "" {
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
	if r := s.runs.Get(e.ID); r != nil && r.Trigger == "saved" {
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
	r := s.runs.Get(id)
	if r == nil {
		return nil
	}
	return progress(r, s.now())
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

// LimitMaxMaterializedBytes is Config.MaxMaterializedBytes, in bytes, as
// an *Error's Limit names it.
const LimitMaxMaterializedBytes = "max_materialized_bytes"

// checkBytes measures next (engine.Engine.TableBytes), a table a refresh built, and refuses it when
// it takes more than Config.MaxMaterializedBytes. It returns the size,
// nil when the engine cannot be measured (the refresh then goes on: the
// row bound still holds) or when there is no bound.
func (s *Service) checkBytes(ctx context.Context, next string) (*int64, error) {
	max := s.cfg.MaxMaterializedBytes
	prepare, q := s.cfg.Executor.Engine().TableBytes(next)
	if max <= 0 || q == "" {
		return nil, nil
	}
	if prepare != "" {
		// The statistics the measure reads, refreshed for a table just
		// built (engine.Engine.TableBytes).
		if err := s.execAll(ctx, []scope.Statement{scope.Own(prepare)}, false); err != nil {
			return nil, fmt.Errorf("endpoint: measuring %s: %w", next, err)
		}
	}
	res, err := s.queryOwn(ctx, scope.Own(q))
	if err != nil {
		return nil, fmt.Errorf("endpoint: measuring %s: %w", next, err)
	}
	if len(res.Rows) != 1 || len(res.Rows[0]) != 1 {
		return nil, fmt.Errorf("endpoint: measuring %s: %d rows", next, len(res.Rows))
	}
	n, ok := asInt64(res.Rows[0][0])
	if !ok {
		return nil, fmt.Errorf("endpoint: measuring %s: %v (%T) is not a size", next, res.Rows[0][0], res.Rows[0][0])
	}
	if n > max {
		return &n, limited(NewError(ErrExecution, CodeMaterializationFailed, "",
			fmt.Sprintf("the stored table took %d bytes, more than max_materialized_bytes (%d)", n, max)), LimitMaxMaterializedBytes, max)
	}
	return &n, nil
}

// The words of MaterializationReport.EdgeIndex (and of
// driver.MaterializationState.EdgeIndex): what the latest refresh found of
// the reads of the source that runs make beside the stored table.
const (
	// EdgeIndexUsed: the engine reads each through an index.
	EdgeIndexUsed = "used"
	// EdgeIndexNotUsed: the engine scans a table for one of them, so runs
	// of a range off its buckets' boundaries (or with the live tail) read
	// the whole table there; MaterializationReport.EdgeIndexWarning says
	// which and what index would serve.
	EdgeIndexNotUsed = "not_used"
	// EdgeIndexNotChecked: the engine's plans are not read (ClickHouse,
	// whose sparse index is its table's order).
	EdgeIndexNotChecked = "not_checked"
	// EdgeIndexCheckFailed: the engine did not answer the plan's question;
	// the refresh itself completed.
	EdgeIndexCheckFailed = "check_failed"
)

// edgeAdvice is what a warning of EdgeIndexNotUsed tells the host to do.
const edgeAdvice = "give the source table an index on its time column (after the tenant column where reads are scoped to a project)"

// checkEdges asks the engine's plan (driver.Explainer) of each read of the source that runs
// of v's plan make beside the stored table (materialize.Plan.EdgeProbes),
// once a refresh, as of its build instant at: it returns the
// driver.MaterializationState.EdgeIndex word and note, "" when runs read
// no source beside the table. A check that fails is logged; the refresh
// it belongs to does not fail.
func (s *Service) checkEdges(ctx context.Context, v *verdict, at time.Time) (string, string) {
	if v == nil || v.scoped == nil {
		return "", ""
	}
	probes, err := v.scoped.EdgeProbes(at)
	if err != nil {
		slog.WarnContext(ctx, "endpoint: the reads of a materialized endpoint's source could not be written for their query plan", "error", err)
		return EdgeIndexCheckFailed, "the reads of the source beside the stored table could not be written to ask the engine's plan of them"
	}
	if len(probes) == 0 {
		return "", ""
	}
	e := s.cfg.Executor.Engine()
	x, ok := s.cfg.Executor.(driver.Explainer)
	switch {
	case !plansRead(e):
		return EdgeIndexNotChecked, "the query plans of " + e.DisplayName() + " are not checked; " + edgeAdvice + ", so that the partial buckets and the live tail read a few hours of rows"
	case !ok:
		return EdgeIndexNotChecked, "the executor does not show the engine's query plans, so they are not checked; " + edgeAdvice + ", so that the partial buckets and the live tail read a few hours of rows"
	}
	var scans []string
	for _, pr := range probes {
		res, err := x.Explain(ctx, pr.Statement)
		var scan string
		if err == nil {
			scan, err = planScan(e, res)
		}
		if err != nil {
			slog.WarnContext(ctx, "endpoint: the query plan of a materialized endpoint's source read could not be read", "read", pr.Name, "error", err)
			return EdgeIndexCheckFailed, "the engine's query plan of " + pr.Name + " could not be read"
		}
		if scan != "" {
			scans = append(scans, pr.Name+" reads "+scan)
		}
	}
	if len(scans) > 0 {
		return EdgeIndexNotUsed, "no index serves the reads of the source beside the stored table: " + strings.Join(scans, "; ") +
			", so runs of a range off its buckets' boundaries read the whole table there; " + edgeAdvice
	}
	return EdgeIndexUsed, ""
}

// plansRead reports whether planScan reads the plans of e.
func plansRead(e engine.Engine) bool {
	_, form := e.Explain()
	return form != engine.PlanNone
}

// planScan reads the engine's plan of one probe, in the form
// driver.Explainer gives it, and returns the table it reads whole, "" when every table is read
// through an index.
func planScan(e engine.Engine, res *driver.Result) (string, error) {
	switch _, form := e.Explain(); form {
	case engine.PlanSQLite:
		return sqliteScan(res)
	case engine.PlanPostgresJSON:
		return postgresScan(res)
	case engine.PlanMySQL:
		return mysqlScan(res)
	}
	return "", fmt.Errorf("no reader of the plans of %s", e.Name())
}

// planText returns a value of a plan's row as text.
func planText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

// noRange is how planScan words a table read through an index without a
// range: every row of the tenant, or of a constant filter's value.
const noRange = " through an index without a range on the time"

// hasRange reports whether an index condition, as an engine prints it,
// holds a range (the probes' only ranges are on the time).
func hasRange(cond string) bool { return strings.ContainsAny(cond, "<>") }

// sqliteScan reads EXPLAIN QUERY PLAN (id, parent, notused, detail): a
// step "SCAN t" (with or without an index: a whole index is no range) of a
// table, not of a subquery or a co-routine, reads t whole; "SEARCH t ...
// (constraints)" reads a range when a constraint is one.
func sqliteScan(res *driver.Result) (string, error) {
	if len(res.Columns) < 4 {
		return "", fmt.Errorf("EXPLAIN QUERY PLAN answered %d columns, want 4", len(res.Columns))
	}
	inner := map[string]bool{}
	var details []string
	for _, row := range res.Rows {
		if len(row) < 4 {
			return "", fmt.Errorf("EXPLAIN QUERY PLAN answered a row of %d values, want 4", len(row))
		}
		d := planText(row[3])
		details = append(details, d)
		for _, p := range []string{"CO-ROUTINE ", "MATERIALIZE "} {
			if name, ok := strings.CutPrefix(d, p); ok {
				inner[name] = true
			}
		}
	}
	for _, d := range details {
		verb, rest, _ := strings.Cut(d, " ")
		rest = strings.TrimPrefix(rest, "TABLE ") // SQLite before 3.36
		name, how, _ := strings.Cut(rest, " ")
		if verb != "SCAN" && verb != "SEARCH" || name == "" || rest == "CONSTANT ROW" || strings.HasPrefix(rest, "(") || inner[name] {
			continue
		}
		switch {
		case verb == "SCAN":
			return "the table " + name + " whole", nil
		case !hasRange(how):
			return "the table " + name + noRange + " (" + how + ")", nil
		}
	}
	return "", nil
}

// postgresScan reads EXPLAIN (FORMAT JSON): a Seq Scan node reads its
// relation whole, and an index scan without a range in its condition
// (Index Cond, of the Bitmap Index Scan under a Bitmap Heap Scan) reads
// every row of an equality.
func postgresScan(res *driver.Result) (string, error) {
	if len(res.Rows) != 1 || len(res.Rows[0]) != 1 {
		return "", fmt.Errorf("EXPLAIN (FORMAT JSON) answered %d rows", len(res.Rows))
	}
	var plans []struct {
		Plan pgPlan `json:"Plan"`
	}
	if err := json.Unmarshal([]byte(planText(res.Rows[0][0])), &plans); err != nil {
		return "", fmt.Errorf("EXPLAIN (FORMAT JSON): %w", err)
	}
	for _, p := range plans {
		if scan := p.Plan.scan(); scan != "" {
			return scan, nil
		}
	}
	return "", nil
}

// pgPlan is a node of PostgreSQL's JSON plan, as far as postgresScan reads
// it.
type pgPlan struct {
	NodeType  string   `json:"Node Type"`
	Relation  string   `json:"Relation Name"`
	IndexName string   `json:"Index Name"`
	IndexCond string   `json:"Index Cond"`
	Plans     []pgPlan `json:"Plans"`
}

// scan returns how the first table of p read without a range is read, ""
// when none is.
func (p *pgPlan) scan() string {
	switch p.NodeType {
	case "Seq Scan":
		return "the table " + p.Relation + " whole"
	case "Index Scan", "Index Only Scan":
		if !hasRange(p.IndexCond) {
			return "the table " + p.Relation + noRange + " (" + p.IndexName + ")"
		}
	case "Bitmap Heap Scan":
		if !p.bitmapRange() {
			return "the table " + p.Relation + noRange
		}
	}
	for i := range p.Plans {
		if scan := p.Plans[i].scan(); scan != "" {
			return scan
		}
	}
	return ""
}

// bitmapRange reports whether a Bitmap Index Scan under p has a range.
func (p *pgPlan) bitmapRange() bool {
	for i := range p.Plans {
		c := &p.Plans[i]
		if c.NodeType == "Bitmap Index Scan" && hasRange(c.IndexCond) || c.bitmapRange() {
			return true
		}
	}
	return false
}

// mysqlOK are the access types of MySQL's and MariaDB's EXPLAIN that read
// a range or a row: ALL and index read a table or an index whole, ref
// every row of an equality (the tenant's).
var mysqlOK = map[string]bool{"RANGE": true, "INDEX_MERGE": true, "CONST": true, "EQ_REF": true, "SYSTEM": true}

// mysqlScan reads MySQL's and MariaDB's EXPLAIN by its access types (see
// mysqlOK); a derived or union result (<derived2>) is the engine's own.
func mysqlScan(res *driver.Result) (string, error) {
	tcol, kcol := -1, -1
	for i, c := range res.Columns {
		switch strings.ToLower(c) {
		case "table":
			tcol = i
		case "type":
			kcol = i
		}
	}
	if tcol < 0 || kcol < 0 {
		return "", fmt.Errorf("EXPLAIN answered no table or type column: %v", res.Columns)
	}
	for _, row := range res.Rows {
		if len(row) <= max(tcol, kcol) {
			return "", fmt.Errorf("EXPLAIN answered a row of %d values", len(row))
		}
		table, typ := planText(row[tcol]), strings.ToUpper(planText(row[kcol]))
		if table == "" || strings.HasPrefix(table, "<") || mysqlOK[typ] {
			continue
		}
		if typ == "ALL" || typ == "INDEX" {
			return "the table " + table + " whole", nil
		}
		return "the table " + table + noRange + " (access " + strings.ToLower(typ) + ")", nil
	}
	return "", nil
}
