package endpoint

import (
	"context"
	"errors"
	"slices"
	"strconv"
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
// settings that may change without a new version, hence the map.
type verdicts struct {
	mu sync.Mutex
	m  map[string]*verdict
}

// verdict returns the verdict on c with buckets, analysing it on first use.
// An insight query is materializable when its materialization compiles:
// its variables are its breakdowns, which every stored series carries.
func (s *Service) verdict(c *compiled, buckets map[string]engine.Bucket, tail string) *verdict {
	key := bucketKey(buckets) + "tail=" + tail
	c.verdicts.mu.Lock()
	defer c.verdicts.mu.Unlock()
	if v, ok := c.verdicts.m[key]; ok {
		return v
	}
	v := &verdict{}
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
		a, err := materialize.Analyze(c.query.SQL, materialize.Options{Engine: s.cfg.Executor.Engine(), Types: types, Buckets: buckets, TailColumn: tail})
		switch {
		case err != nil:
			v.reason = strings.TrimPrefix(err.Error(), "materialize: ")
		case !a.Materializable():
			v.reason = a.Reason()
		default:
			v.ok, v.plan = true, a.Plan
			v.scopeSource(c.scope)
		}
		if a != nil {
			v.variables = variableVerdicts(a)
		}
	}
	if c.verdicts.m == nil {
		c.verdicts.m = make(map[string]*verdict)
	}
	c.verdicts.m[key] = v
	return v
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

// tableKey identifies what the stored table of e's current version,
// compiled as c, is built from: the version, the buckets, and the
// definitions of the variables the query was compiled with, since a
// variable's type decides how its column is stored (a Date range is
// bucketed, a String is not). A table serves only while its key is the
// current one, so that after a change to any of them runs go inline until
// a refresh builds the table anew.
func tableKey(e *driver.Endpoint, c *compiled) string {
	return "v" + strconv.Itoa(e.CurrentVersion) + ";" + bucketKey(e.MaterializationBuckets) + "tail=" + e.MaterializationTailColumn + ";" + c.varsKey()
}

// varsKey is the part of a table key that the variables' definitions
// decide: code name, type and whether it takes a list, in code name order
// (empty for a query without variables).
func (c *compiled) varsKey() string {
	var b strings.Builder
	for i := range c.vars {
		v := &c.vars[i]
		b.WriteString("|" + v.CodeName + ":" + string(v.Type))
		if v.IsMulti {
			b.WriteString("[]")
		}
	}
	return b.String()
}

// freshness is how long e's stored table serves: its own
// materialization_freshness when set, otherwise its data freshness.
func freshness(e *driver.Endpoint) time.Duration {
	if e.MaterializationFreshness <= 0 {
		return dataFreshness(e)
	}
	return time.Duration(e.MaterializationFreshness)
}

// servingTable returns the stored table that may answer a run of e's
// current version, compiled as c, at now, and the instant its data is of:
// the table of the last completed refresh, if it was built from the
// current version, buckets and variable definitions (tableKey) and is not
// older than the freshness period. A failed refresh leaves the last good
// table serving until it is stale.
func servingTable(e *driver.Endpoint, c *compiled, now time.Time) (string, time.Time, bool) {
	st := &e.MaterializationState
	if !e.IsMaterialized || st.Table == "" || st.At == nil || st.Built != tableKey(e, c) {
		return "", time.Time{}, false
	}
	if now.Sub(*st.At) > freshness(e) {
		return "", time.Time{}, false
	}
	return st.Table, *st.At, true
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
		if why := tailColumnUnread(ctx, s.cfg.Executor.Engine(), c.query.SQL, col); why != "" {
			return invalidf(CodeInvalidInput, "materialization_tail_column", "materialization_tail_column: %s.", why)
		}
	}
	if !next.IsMaterialized {
		return nil
	}
	if v := s.verdict(c, next.MaterializationBuckets, next.MaterializationTailColumn); !v.ok {
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
	} else if v := s.verdict(c, e.MaterializationBuckets, e.MaterializationTailColumn); v.ok {
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
