package endpoint

import (
	"context"
	"errors"
	"fmt"
	"github.com/endpointkit/endpointkit/sql/scope"
	"strings"
	"sync"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/insight"
	"github.com/endpointkit/endpointkit/materialize"
)

// dropWait bounds the drops of a Delete or an update that turns
// materialization off: on an engine with one writer (SQLite) a drop waits
// for a refresh that builds another table, and the write that asked for it
// must not. A table left behind is an orphan, which RemoveOrphans drops.
const dropWait = time.Second

// tablePrefix starts the name of every stored table (materialize.TableName).
const tablePrefix = "endpointkit_mat_"

// refreshLocks hold one lock per endpoint id, so that this process runs at
// most one refresh of an endpoint at a time. Only refreshes of the same
// endpoint wait on it: runs, writes and deletes never do.
type refreshLocks struct {
	m sync.Map // endpoint id -> chan struct{} (capacity 1: held when full)
}

func (l *refreshLocks) get(id string) chan struct{} {
	ch, _ := l.m.LoadOrStore(id, make(chan struct{}, 1))
	return ch.(chan struct{})
}

// busy reports whether a refresh of id is under way.
func (l *refreshLocks) busy(id string) bool {
	ch, ok := l.m.Load(id)
	return ok && len(ch.(chan struct{})) > 0
}

func (l *refreshLocks) forget(id string) { l.m.Delete(id) }

// acquire takes ch, waiting while ctx lasts.
func acquire(ctx context.Context, ch chan struct{}) error {
	select {
	case ch <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

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
// definitions, or whose table is older than its freshness period, one
// after another; each waits for a turn among Config.MaxRefreshes.
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
		if c, err := s.compiledVersion(ctx, e, e.CurrentVersion); err == nil {
			if _, _, fresh := servingTable(e, c, now); fresh {
				continue
			}
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

// stale reports whether e has no table that serves at now (or cannot be
// compiled, which a refresh then reports).
func (s *Service) stale(ctx context.Context, e *driver.Endpoint, now time.Time) bool {
	c, err := s.compiledVersion(ctx, e, e.CurrentVersion)
	if err != nil {
		return true
	}
	_, _, fresh := servingTable(e, c, now)
	return !fresh
}

// refresh rebuilds the table of the endpoint with id; the caller holds its
// refresh lock and a turn. The endpoint is read again under the lock, so a
// refresh always builds the version, buckets and variables that are
// current when it starts, and once more before the swap, so that a table
// built for an endpoint deleted or changed meanwhile is dropped instead.
func (s *Service) refresh(ctx context.Context, project, id, name string, run *refreshRun) error {
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
	run.key = key
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
		run.set(PhaseMeasuring)
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
	v := s.verdict(c, e.MaterializationBuckets, e.MaterializationTailColumn)
	if !v.ok {
		return driver.Endpoint{}, nil, nil, invalidf(CodeCannotMaterialize, "is_materialized", "Cannot materialize endpoint. Reason: %s", v.reason)
	}
	return e, c, v, nil
}

// buildChecked builds the table beside the live one, checks its row count,
// its bytes and that the endpoint is still of key, and swaps it in. It
// returns the name of what it built (to drop on an error), and the rows
// and bytes when known.
func (s *Service) buildChecked(ctx context.Context, project, name, id, key string, c *compiled, v *verdict, table string, at time.Time, run *refreshRun) (string, *int64, *int64, error) {
	run.set(PhaseBuilding)
	next, err := s.build(ctx, c, v, table, at)
	if err != nil {
		return next, nil, nil, err
	}
	run.set(PhaseCounting)
	rows, err := s.checkRows(ctx, next)
	if err != nil {
		return next, rows, nil, err
	}
	if rows == nil {
		rows = s.countRows(ctx, next)
	}
	run.setRows(rows)
	run.set(PhaseMeasuring)
	bytes, err := s.checkBytes(ctx, next)
	if err != nil {
		return next, rows, bytes, err
	}
	run.setBytes(bytes)
	if err := s.unchanged(ctx, project, name, id, key); err != nil {
		return next, rows, bytes, err
	}
	run.set(PhaseSwapping)
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
// rows, outside any run's bounds.
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
	if !s.refreshing.busy(e.ID) {
		tables = append(tables, cur+"_next")
	}
	if t := e.MaterializationState.Table; t != "" && t != cur {
		tables = append(tables, t)
	}
	s.refreshing.forget(e.ID)
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
