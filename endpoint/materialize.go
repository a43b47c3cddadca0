package endpoint

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/insight"
	"github.com/endpointkit/endpointkit/materialize"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/scope"

	"github.com/endpointkit/endpointkit/variable"
)

// verdict is whether one version, with one set of buckets, can be
// materialized: the plan of a SQL query, or the reason it cannot.
type verdict struct {
	ok     bool
	reason string
	plan   *materialize.Plan // SQL only
	// scoped is plan with its statements scoped (see scopeSource): the
	// only form of it that reaches the executor.
	scoped    *scope.Plan
	variables []VariableVerdict
}

// verdicts memoizes the verdicts of one compiled version by bucket key, so
// that neither a run nor a Get analyses a query again. Buckets are endpoint
// settings that may change without a new version, hence the map. types
// are the declared types of the columns of the tables the version sums,
// by table name (see columnTypes), kept for as long as the version stays
// compiled: a new version, or the version compiled again once it left the
// Service's cache (Config.RecheckInterval), reads them again.
type verdicts struct {
	mu    sync.Mutex
	m     map[string]*verdict
	types map[string]map[string]string
}

// verdict returns the verdict on c with buckets, analysing it on first use.
// An insight query is materializable when its materialization compiles:
// its variables are its breakdowns, which every stored series carries. A
// SQL query is analysed with the declared types of the columns it sums
// (see analyze); a verdict taken without some table's types, which the
// database did not tell, is not kept, so that the next use reads them
// again.
func (s *Service) verdict(ctx context.Context, c *compiled, buckets map[string]engine.Bucket, tail string) *verdict {
	key := bucketKey(buckets) + "tail=" + tail
	c.verdicts.mu.Lock()
	defer c.verdicts.mu.Unlock()
	if v, ok := c.verdicts.m[key]; ok {
		return v
	}
	v := &verdict{}
	keep := true
	if c.insight != nil {
		if _, err := insight.Materialize(c.insight, s.cfg.Executor.Engine(), "endpointkit_check", s.now()); err != nil {
			v.reason = strings.TrimPrefix(err.Error(), "insight: ")
		} else {
			v.ok = true
		}
	} else {
		types := make(map[string]variable.Type, len(c.vars))
		for _, vr := range c.vars {
			types[vr.CodeName] = vr.Type
		}
		a, unread, err := s.analyze(ctx, c, materialize.Options{Engine: s.cfg.Executor.Engine(), Types: types, Buckets: buckets, TailColumn: tail})
		keep = unread == ""
		switch {
		case err != nil:
			v.reason = strings.TrimPrefix(err.Error(), "materialize: ")
		case !a.Materializable():
			v.reason = a.Reason() + unread
		default:
			v.ok, v.plan = true, a.Plan
			v.scopeSource(c.scope)
		}
		if a != nil {
			v.variables = variableVerdicts(a)
		}
	}
	if !keep {
		return v
	}
	if c.verdicts.m == nil {
		c.verdicts.m = make(map[string]*verdict)
	}
	c.verdicts.m[key] = v
	return v
}

// analyze is materialize.Analyze of c's query with opts, and with the
// declared types of the columns of the tables whose types decide a sum
// (materialize.Analysis.Untyped), read from the engine's catalog as c's
// scope sees those tables (see columnTypes): a query that sums none reads
// nothing, one that does is analysed again with them, so that a sum of a
// floating-point column whose stored parts a read adds up again is
// refused. When some table's types could not be read, the second analysis
// takes the safe side (materialize.Options.StrictSums) and unread says
// why, worded to follow a refusal's reason; it is logged and counted
// (Observer's ObserveSaveCheck) where it happens. The caller holds
// c.verdicts.mu.
func (s *Service) analyze(ctx context.Context, c *compiled, opts materialize.Options) (a *materialize.Analysis, unread string, err error) {
	a, err = materialize.Analyze(c.query.SQL, opts)
	if err != nil || !a.Materializable() || len(a.Untyped) == 0 || c.scope == nil {
		return a, "", err
	}
	types, failed := s.columnTypes(ctx, c, a.Untyped)
	opts.ColumnTypes = types
	if len(failed) > 0 {
		opts.StrictSums = true
		names := make([]string, len(failed))
		for i, f := range failed {
			names[i] = f.table
		}
		errs := make([]error, len(failed))
		for i, f := range failed {
			errs[i] = f.err
			if e := (*Error)(nil); errors.As(f.err, &e) && e.Err != nil {
				// The engine's error, which the Detail keeps from a
				// client, for the log.
				errs[i] = fmt.Errorf("%s: %w", e.Detail, e.Err)
			}
		}
		cause := errors.Join(errs...)
		slog.WarnContext(ctx, "endpoint: the declared types of the columns a query sums could not be read; its sums of them are taken as floating point",
			"project", c.scope.Project(), "tables", names, "error", cause)
		s.observeSaveCheck(ctx, SaveCheckEvent{Project: c.scope.Project(),
			Err: fmt.Errorf("the declared types of the columns of %s could not be read from the database: %w", strings.Join(names, ", "), cause)})
		unread = "; the declared types of the columns of " + cut(strings.Join(names, ", ")) +
			" could not be read from the database (" + cut(errorDetail(failed[0].err)) + "), so a sum of one of them is taken as floating point; saving or reading the endpoint again retries"
	}
	a, err = materialize.Analyze(c.query.SQL, opts)
	return a, unread, err
}

// unreadTable is a table whose columns' types could not be read.
type unreadTable struct {
	table string
	err   error
}

// columnTypes returns the declared types of the columns of tables, read
// from the engine as c's scope sees them (scope.Scope.Describe: a
// statement that reads no row, the columns those the access policy
// allows, the types the engine names for them), from c.verdicts.types
// when they hold them, and the tables whose types could not be read (not
// kept). The caller holds c.verdicts.mu.
func (s *Service) columnTypes(ctx context.Context, c *compiled, tables []materialize.Table) (map[string]map[string]string, []unreadTable) {
	out := make(map[string]map[string]string, len(tables))
	var failed []unreadTable
	for _, t := range tables {
		if cols, ok := c.verdicts.types[t.Name]; ok {
			out[t.Name] = cols
			continue
		}
		cols, err := s.describeTable(ctx, c.scope, t.Text)
		if err != nil {
			failed = append(failed, unreadTable{table: t.Name, err: err})
			continue
		}
		if c.verdicts.types == nil {
			c.verdicts.types = make(map[string]map[string]string)
		}
		c.verdicts.types[t.Name], out[t.Name] = cols, cols
	}
	return out, failed
}

// describeTable returns the declared types of table's columns by name, as
// sc sees the table, within Config.RunTimeout. It runs outside any run's
// bounds and rows (queryOwn): it is not the run's statement, which a
// streamed run hands its rows to, and it reads no row.
func (s *Service) describeTable(ctx context.Context, sc *scope.Scope, table string) (map[string]string, error) {
	st, err := sc.Describe(table)
	if err != nil {
		return nil, scopeError(err)
	}
	ctx, cancel := driver.BoundContext(ctx, s.cfg.RunTimeout)
	defer cancel()
	res, err := s.queryOwn(ctx, st)
	if err == nil && res == nil {
		err = errors.New("the executor answered no result")
	}
	if err != nil {
		return nil, withCause(NewError(ErrExecution, CodeExecutionFailed, "", "query execution failed"), err)
	}
	cols := make(map[string]string, len(res.Columns))
	for i, name := range res.Columns {
		typ := ""
		if i < len(res.Types) {
			typ = res.Types[i]
		}
		cols[name] = typ
	}
	return cols, nil
}

// scopeSource scopes the plan's statements with the scope the version was
// compiled under: its pre-compute query and its reads of the source data
// (partial buckets, a live tail), without which those would read every
// project's rows. A plan whose source cannot be scoped is not
// materializable.
func (v *verdict) scopeSource(sc *scope.Scope) {
	plan, err := sc.Plan(v.plan)
	if err != nil {
		v.ok, v.plan = false, nil
		v.reason = "its source data cannot be scoped to the project: " + errorDetail(scopeError(err))
		return
	}
	v.scoped = plan
}

// checkMaterialization decides whether next may be saved with its
// materialization settings and IsMaterialized flag; c is the compiled form
// of next's query. It runs after every other check of a create or update
// and before the write, so a refusal changes nothing. A freshness left
// unset stays unset, so that it follows data_freshness_seconds.
func (s *Service) checkMaterialization(ctx context.Context, next *driver.Endpoint, c *compiled) error {
	if c == nil {
		return nil
	}
	if err := checkSettings(next, c); err != nil {
		return err
	}
	if col := next.MaterializationTailColumn; col != "" {
		if why := s.tailColumnUnread(ctx, next, c, col); why != "" {
			return invalidf(CodeInvalidInput, "materialization_tail_column", "materialization_tail_column: %s.", why)
		}
	}
	if !next.IsMaterialized {
		return nil
	}
	if v := s.verdict(ctx, c, next.MaterializationBuckets, next.MaterializationTailColumn); !v.ok {
		return invalidf(CodeCannotMaterialize, "is_materialized", "Cannot materialize endpoint. Reason: %s", v.reason)
	}
	return nil
}

// checkTailColumn checks the live tail's column: SQL endpoints only, and a
// column name (name or qualifier.name).
func checkTailColumn(e *driver.Endpoint, c *compiled) error {
	col := e.MaterializationTailColumn
	switch {
	case col == "":
		return nil
	case c.insight != nil:
		return invalidf(CodeInvalidInput, "materialization_tail_column", "materialization_tail_column applies to SQL endpoints only.")
	case !materialize.IsColumnName(col):
		return invalidf(CodeInvalidInput, "materialization_tail_column", "materialization_tail_column: '%s' is not a column name (name or table.name).", cut(col))
	}
	return nil
}

// checkSettings checks the bucket overrides (SQL: Date variables of the
// query only, each a known bucket) and the optional breakdowns (insight:
// breakdown properties of the query only).
func checkSettings(e *driver.Endpoint, c *compiled) error {
	if c.insight != nil && len(e.MaterializationBuckets) > 0 {
		return invalidf(CodeInvalidInput, "materialization_buckets", "materialization_buckets apply to SQL endpoints only.")
	}
	if err := checkTailColumn(e, c); err != nil {
		return err
	}
	names := make([]string, 0, len(e.MaterializationBuckets))
	for n := range e.MaterializationBuckets {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		i, ok := c.index[n]
		if !ok || c.vars[i].Type != variable.Date {
			return invalidf(CodeInvalidInput, "materialization_buckets", "materialization_buckets: '%s' is not a Date variable of this query.", n)
		}
		switch b := e.MaterializationBuckets[n]; b {
		case engine.Minute, engine.Hour, engine.Day, engine.Week, engine.Month:
		default:
			return invalidf(CodeInvalidInput, "materialization_buckets", "materialization_buckets: invalid bucket '%s' for '%s'. Expected one of: minute, hour, day, week, month.", b, n)
		}
	}
	if len(e.OptionalBreakdowns) == 0 {
		return nil
	}
	if c.insight == nil {
		return invalidf(CodeInvalidInput, "optional_breakdown_properties", "optional_breakdown_properties apply to insight endpoints only.")
	}
	props := c.insight.Variables(true)
	for _, p := range e.OptionalBreakdowns {
		if !slices.Contains(props, p) {
			return invalidf(CodeInvalidInput, "optional_breakdown_properties", "optional_breakdown_properties: '%s' is not a breakdown property of this query.", p)
		}
	}
	return nil
}

// endpointView returns e as the Service shows it: its settings as they apply,
// and the view of its materialization, from the stored state and the
// verdict on its current version (compiled once and cached, so a Get or
// List analyses nothing again).
func (s *Service) endpointView(ctx context.Context, e *driver.Endpoint) Endpoint {
	return Endpoint{
		ID: e.ID, Name: e.Name, Description: e.Description, Query: Query(e.Query),
		IsActive: e.IsActive, IsMaterialized: e.IsMaterialized,
		CurrentVersion: e.CurrentVersion, VersionsCount: e.VersionsCount,
		CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt, LastExecutedAt: e.LastExecutedAt,
		DeletedAt:                 e.DeletedAt,
		DataFreshnessSeconds:      int(dataFreshness(e) / time.Second),
		MaterializationFreshness:  Seconds(freshness(e)),
		MaterializationBuckets:    e.MaterializationBuckets,
		MaterializationTailColumn: e.MaterializationTailColumn,
		OptionalBreakdowns:        e.OptionalBreakdowns,
		Materialization:           s.materializationView(ctx, e),
	}
}

// materializationView is the view of e's materialization.
func (s *Service) materializationView(ctx context.Context, e *driver.Endpoint) Materialization {
	m := Materialization{}
	c, err := s.compiledVersion(ctx, e, e.CurrentVersion)
	if err != nil {
		m.Reason = "the query cannot be compiled: " + errorDetail(err)
	} else if v := s.verdict(ctx, c, e.MaterializationBuckets, e.MaterializationTailColumn); v.ok {
		m.CanMaterialize, m.Variables = true, v.variables
	} else {
		m.Reason, m.Variables = v.reason, v.variables
	}
	if e.IsMaterialized {
		st := &e.MaterializationState
		// Without the compiled query no table can be vouched for.
		key := "\x00"
		if c != nil {
			key = tableKey(e, c)
		}
		switch {
		case st.Status == StatusRunning:
			m.Status = StatusRunning
		case st.Status != "" && st.Attempt == key:
			m.Status = st.Status
		default:
			m.Status = StatusPending
		}
		if m.Status == StatusFailed {
			m.Error = st.Error
		}
		_, m.Hibernating = s.hibernatingSince(e, s.now())
		if st.Table != "" && st.Built == key && st.At != nil {
			at := *st.At
			m.LastMaterializedAt = &at
			if f, ok := s.readFailures.Load(e.ID); ok && f.(readFailure).table == tableOf(*st) {
				failed := f.(readFailure)
				m.ReadError, m.ReadFailedAt = failed.err, &failed.at
			}
		}
	}
	return m
}

// errorDetail is the detail of an *Error, or a generic text.
func errorDetail(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Detail
	}
	return "storage failed"
}

// variableVerdicts returns the verdict on each variable of a, in order of
// first use, without the tenant variable, which is the library's own.
func variableVerdicts(a *materialize.Analysis) []VariableVerdict {
	out := make([]VariableVerdict, 0, len(a.Variables))
	for _, v := range a.Variables {
		if v.Name == tenantVariable {
			continue
		}
		vv := VariableVerdict{CodeName: v.Name, As: string(v.Kind), Expression: v.Column, Bucket: string(v.Bucket)}
		if v.Reason != nil {
			vv = VariableVerdict{CodeName: v.Name, Code: string(v.Reason.Code), Reason: v.Reason.String()}
		}
		out = append(out, vv)
	}
	return out
}

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
	// younger than the freshness period (a live tail's table: plus a tenth
	// of it, at least Config.RefreshTimeout).
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
	// the jitter, or, for a live tail whose runs read the source from the
	// start of the build instant's day (or hour), at the last such start
	// within that period; null while the materialization hibernates.
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
	var built *compiled
	if c, err := s.compiledVersion(ctx, &e, e.CurrentVersion); err == nil {
		_, _, r.Serving = s.servingTable(&e, c, now)
		if st.Built == tableKey(&e, c) {
			built = c
		}
	}
	if since, ok := s.hibernatingSince(&e, now); ok {
		r.Hibernating, r.HibernatingSince = true, &since
		return r, nil
	}
	next := s.nextRefresh(ctx, &e, status, built, now)
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
// status and whose table is of its current key, compiled as built, when
// built is not nil: at once when no table of the current key was built;
// then as refreshDueAt says; after a failure, not before the retry delay.
func (s *Service) nextRefresh(ctx context.Context, e *driver.Endpoint, status MaterializationStatus, built *compiled, now time.Time) time.Time {
	st := e.MaterializationState
	next := now
	if st.Table != "" && st.At != nil && built != nil {
		next = s.refreshDueAt(ctx, e, built, *st.At)
	}
	if status == StatusFailed && st.FailedAt != nil {
		if retry := st.FailedAt.Add(min(freshness(e), failureRetry)); retry.After(next) {
			next = retry
		}
	}
	return next
}

// tailColumnUnread returns why the query of c cannot read the live
// tail's column col (name or qualifier.name) in the FROM of its outermost
// SELECT, where the live tail's bound goes, worded for the 400; "" when
// it can, or when only the engine can tell (materialize.CheckTailColumn
// judges). A query the syntax tree cannot read is not judged: it is
// logged and counted as a save the Service could not check
// (SaveCheckEvent, counted by endpoint/metrics), and its materialization
// is judged as before.
func (s *Service) tailColumnUnread(ctx context.Context, next *driver.Endpoint, c *compiled, col string) string {
	u, err := materialize.CheckTailColumn(s.cfg.Executor.Engine(), c.query.SQL, col)
	if err != nil {
		slog.WarnContext(ctx, "endpoint: the live tail's column could not be checked against the query's FROM",
			"project", next.ProjectID, "endpoint", next.Name, "error", err)
		s.observeSaveCheck(ctx, SaveCheckEvent{Project: next.ProjectID, Endpoint: next.Name,
			Err: fmt.Errorf("the live tail's column %q could not be checked against the query's FROM: %w", col, err)})
		return ""
	}
	switch {
	case u == nil:
		return ""
	case u.Qualifier != "":
		return "the query's FROM has no table or alias named '" + cut(u.Qualifier) + "' (it reads " + describeRelations(u.Relations) + ")"
	}
	if u.Subquery {
		return "'" + cut(col) + "' is not a column of the FROM of the query's subquery, which gives " + describeRelations(u.Relations) +
			"; the live tail's column is the column holding each row's time among the columns of the FROM where the query's variables are compared, its subquery's"
	}
	return "'" + cut(col) + "' is not a column of the query's FROM, which gives " + describeRelations(u.Relations) +
		"; the live tail's column is the column holding each row's time among the columns of the query's outermost FROM"
}

// describeRelations names rels and, where the query shows them, their
// columns: "f (distinct_id, first_day)", "the table events".
func describeRelations(rels []materialize.Relation) string {
	parts := make([]string, 0, len(rels))
	for _, r := range rels {
		name := r.Name
		if name == "" {
			name = "a derived table without an alias"
		}
		switch {
		case r.Known:
			parts = append(parts, name+" ("+strings.Join(r.Columns, ", ")+")")
		case r.Table != "" && r.Table != r.Name:
			parts = append(parts, name+" (the table "+r.Table+")")
		default:
			parts = append(parts, name)
		}
	}
	return cut(strings.Join(parts, ", "))
}

// bucketKey is buckets in a canonical text form.
func bucketKey(buckets map[string]engine.Bucket) string {
	names := make([]string, 0, len(buckets))
	for n := range buckets {
		names = append(names, n)
	}
	slices.Sort(names)
	var b strings.Builder
	for _, n := range names {
		b.WriteString(n + "=" + string(buckets[n]) + ";")
	}
	return b.String()
}
