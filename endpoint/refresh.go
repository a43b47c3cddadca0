package endpoint

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/endpointkit/endpointkit/insight"
	"github.com/endpointkit/endpointkit/materialize"
)

// refreshLocks hold one mutex per endpoint id, so that this process runs at
// most one refresh of an endpoint at a time.
type refreshLocks struct {
	m sync.Map // endpoint id -> *sync.Mutex
}

func (l *refreshLocks) get(id string) *sync.Mutex {
	mu, _ := l.m.LoadOrStore(id, new(sync.Mutex))
	return mu.(*sync.Mutex)
}

func (l *refreshLocks) forget(id string) { l.m.Delete(id) }

// Materialize refreshes the stored table of the materialized endpoint named
// name, synchronously: the status goes to running, the table of the current
// version is rebuilt in the executor's database, and the status goes to
// completed (with last_materialized_at) or failed. A failed refresh leaves
// the last good table in place, serving while it is fresh; its error says
// what failed without engine internals (the cause stays reachable through
// errors.As for a host that logs it). A refresh of the same endpoint already
// under way in this Service is waited for first.
func (s *Service) Materialize(ctx context.Context, project, name string) error {
	e, err := s.get(ctx, project, name)
	if err != nil {
		return err
	}
	if !e.IsMaterialized {
		return invalidf(CodeInvalidInput, "is_materialized", "Endpoint '%s' is not materialized; set is_materialized to true first.", name)
	}
	mu := s.refreshing.get(e.ID)
	mu.Lock()
	defer mu.Unlock()
	return s.refresh(ctx, project, e.ID, name)
}

// RefreshStale refreshes every materialized endpoint, of every project,
// that has no table for its current version and buckets, or whose table is
// older than its freshness period. Endpoints being refreshed already are
// skipped. It returns how many refreshes completed, and the failures
// joined.
func (s *Service) RefreshStale(ctx context.Context) (int, error) {
	list, err := s.cfg.Endpoints.ListMaterialized(ctx)
	if err != nil {
		return 0, storeError(err, nil)
	}
	var (
		n    int
		errs []error
	)
	now := s.now()
	for i := range list {
		e := &list[i]
		if _, _, fresh := servingTable(e, now); fresh {
			continue
		}
		mu := s.refreshing.get(e.ID)
		if !mu.TryLock() {
			continue
		}
		err := s.refresh(ctx, e.ProjectID, e.ID, e.Name)
		mu.Unlock()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		n++
		if ctx.Err() != nil {
			break
		}
	}
	return n, errors.Join(errs...)
}

// refresh rebuilds the table of the endpoint with id; the caller holds its
// refresh lock. The endpoint is read again under the lock, so a refresh
// always builds the version and buckets that are current when it starts.
func (s *Service) refresh(ctx context.Context, project, id, name string) error {
	e, err := s.get(ctx, project, name)
	if err != nil {
		return err
	}
	if e.ID != id || !e.IsMaterialized {
		// Renamed, replaced or no longer materialized meanwhile.
		return notFoundf("Endpoint '%s' is no longer materialized.", name)
	}
	c, err := s.compiledVersion(ctx, &e, e.CurrentVersion)
	if err != nil {
		return err
	}
	v := s.verdict(c, e.MaterializationBuckets)
	if !v.ok {
		return invalidf(CodeCannotMaterialize, "is_materialized", "Cannot materialize endpoint. Reason: %s", v.reason)
	}
	key := tableKey(&e)
	table := materialize.TableName(e.ID, e.CurrentVersion)
	st := e.MaterializationState
	st.Status, st.Attempt, st.Error = StatusRunning, key, ""
	if err := s.setState(ctx, &e, st); err != nil {
		return err
	}
	at := s.now()
	if err := s.rebuild(ctx, project, c, v, table, at); err != nil {
		st.Status, st.Error = StatusFailed, refreshFailure(err)
		// The context may be what failed; the state is still worth saving.
		_ = s.setState(context.WithoutCancel(ctx), &e, st)
		return withCause(NewError(ErrExecution, CodeMaterializationFailed, "", "Materialization of endpoint '"+name+"' failed: "+st.Error), err)
	}
	old := st.Table
	st = MaterializationState{Status: StatusCompleted, Attempt: key, Table: table, Built: key, At: &at}
	if err := s.setState(context.WithoutCancel(ctx), &e, st); err != nil {
		return err
	}
	if old != "" && old != table {
		// The previous version's table served until now; nothing reads it
		// any more.
		s.dropTable(ctx, old)
	}
	return nil
}

// refreshFailure words a failed refresh for the endpoint's error field.
func refreshFailure(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "the refresh timed out"
	case errors.Is(err, context.Canceled):
		return "the refresh was cancelled"
	}
	return "the query could not be executed against the database"
}

// rebuild builds a fresh copy of an endpoint's stored table beside it and
// swaps it in, so that a failure before the swap keeps the last good table.
func (s *Service) rebuild(ctx context.Context, project string, c *compiled, v *verdict, table string, at time.Time) error {
	e := s.cfg.Executor.Engine()
	next := table + "_next"
	var build []insight.Statement
	var index []string
	if c.insight == nil {
		r, err := v.plan.Refresh(table)
		if err != nil {
			return err
		}
		for _, q := range r.Build {
			build = append(build, insight.Statement{SQL: q})
		}
		next, index = r.Next, r.Index
		if c.scoped {
			// The stored rows are the project's only: the pre-compute
			// query reads through the same rules as a run.
			src, args, err := s.scopedSource(ctx, project, v.plan.Precompute())
			if err != nil {
				return err
			}
			build = []insight.Statement{{SQL: e.DropTable(next)}, {SQL: e.CreateTableAs(next, src), Args: args}}
		}
	} else {
		built, err := insight.Materialize(c.insight, e, next, at)
		if err != nil {
			return err
		}
		build = built
	}
	for _, stmt := range build {
		if err := s.cfg.Executor.Exec(ctx, stmt.SQL, stmt.Args); err != nil {
			return err
		}
	}
	swap, inTx := e.Swap(next, table)
	if err := s.execAll(ctx, swap, inTx); err != nil {
		return err
	}
	if index != nil {
		// After the swap: a renamed table keeps its index's name.
		if err := s.execAll(ctx, index, false); err != nil {
			return err
		}
	}
	if c.insight != nil {
		if ddl := insight.Index(c.insight, e, table); ddl != "" {
			return s.cfg.Executor.Exec(ctx, ddl, nil)
		}
	}
	return nil
}

// execAll runs statements in order, in one transaction when inTx and the
// executor can.
func (s *Service) execAll(ctx context.Context, stmts []string, inTx bool) error {
	if tx, ok := s.cfg.Executor.(TxExecutor); ok && inTx {
		return tx.ExecTx(ctx, stmts)
	}
	for _, q := range stmts {
		if err := s.cfg.Executor.Exec(ctx, q, nil); err != nil {
			return err
		}
	}
	return nil
}

func (s *Service) setState(ctx context.Context, e *Endpoint, st MaterializationState) error {
	if err := s.cfg.Endpoints.SetMaterialization(ctx, e.ProjectID, e.ID, st); err != nil {
		return storeError(err, func() *Error { return endpointNotFound(e.Name) })
	}
	e.MaterializationState = st
	return nil
}

// dropTable drops a stored table, best effort: a table left behind wastes
// space but serves nothing, since runs read only the table the state names.
func (s *Service) dropTable(ctx context.Context, table string) {
	_ = s.cfg.Executor.Exec(context.WithoutCancel(ctx), s.cfg.Executor.Engine().DropTable(table), nil)
}

// dropTables drops every stored table of a deleted endpoint that this
// package knows of (best effort).
func (s *Service) dropTables(ctx context.Context, e *Endpoint) {
	s.refreshing.forget(e.ID)
	cur := materialize.TableName(e.ID, e.CurrentVersion)
	tables := []string{cur, cur + "_next"}
	if t := e.MaterializationState.Table; t != "" && t != cur {
		tables = append(tables, t)
	}
	if !e.IsMaterialized && e.MaterializationState.Table == "" {
		return
	}
	for _, t := range tables {
		s.dropTable(ctx, t)
	}
}

// dematerialize drops the stored table of an endpoint that is no longer
// materialized and clears its state; it returns the new state.
func (s *Service) dematerialize(ctx context.Context, e *Endpoint) MaterializationState {
	if t := e.MaterializationState.Table; t != "" {
		s.dropTable(ctx, t)
	}
	if err := s.cfg.Endpoints.SetMaterialization(ctx, e.ProjectID, e.ID, MaterializationState{}); err != nil {
		// The state names a table that is gone; a run then fails over to
		// inline, and turning materialization on again rebuilds it.
		return e.MaterializationState
	}
	return MaterializationState{}
}
