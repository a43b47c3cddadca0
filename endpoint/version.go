package endpoint

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/insight"
	"github.com/endpointkit/endpointkit/variable"
)

// Version is one version of an endpoint as GET endpoints/{name}/versions/
// shows it: an immutable snapshot of its query (every change of the query
// creates the next version; numbers start at 1), the variables a run of it
// takes, when it was saved, and its materialization.
type Version struct {
	Version   int       `json:"version"`
	Query     Query     `json:"query"`
	CreatedAt time.Time `json:"created_at"`
	IsCurrent bool      `json:"is_current"`
	// Variables are what a run of this version takes, by code name. Empty
	// when the version no longer compiles (a variable it used was
	// changed); Materialization.Reason then says why.
	Variables       []RunVariable          `json:"variables"`
	Materialization VersionMaterialization `json:"materialization"`
}

// RunVariable is a variable as a run sees it: its definition (for a SQL
// endpoint, the data-management variable; for an insight endpoint, a
// breakdown property or date_from and date_to) and whether a run must give
// it.
type RunVariable struct {
	ID       string        `json:"id,omitempty"`
	Name     string        `json:"name"`
	CodeName string        `json:"code_name"`
	Type     variable.Type `json:"type"`
	IsMulti  bool          `json:"is_multi,omitempty"`
	Values   []string      `json:"values,omitempty"`
	Required bool          `json:"required"`
}

// VersionMaterialization is a version's materialization: whether it can be
// materialized with the endpoint's current settings (and why not), and
// whether the endpoint's stored table was built from it.
type VersionMaterialization struct {
	CanMaterialize     bool       `json:"can_materialize"`
	Reason             string     `json:"reason"`
	Materialized       bool       `json:"materialized"`
	LastMaterializedAt *time.Time `json:"last_materialized_at"`
}

// Versions returns every version of the endpoint named name, oldest
// first.
func (s *Service) Versions(ctx context.Context, project, name string) ([]Version, error) {
	e, err := s.get(ctx, project, name)
	if err != nil {
		return nil, err
	}
	vs, err := s.cfg.Endpoints.Versions(ctx, project, e.ID)
	if err != nil {
		return nil, storeError(err, func() *Error { return endpointNotFound(name) })
	}
	out := make([]Version, len(vs))
	for i := range vs {
		out[i] = s.versionView(ctx, &e, vs[i])
	}
	return out, nil
}

// Version returns version n of the endpoint named name.
func (s *Service) Version(ctx context.Context, project, name string, n int) (Version, error) {
	e, err := s.get(ctx, project, name)
	if err != nil {
		return Version{}, err
	}
	v, err := s.version(ctx, &e, n)
	if err != nil {
		return Version{}, err
	}
	return s.versionView(ctx, &e, v), nil
}

// version reads version n of e; a 404 names it when there is none.
func (s *Service) version(ctx context.Context, e *driver.Endpoint, n int) (driver.Version, error) {
	if n < 1 {
		return driver.Version{}, invalidf(CodeInvalidInput, "version", "Version must be a positive integer, got %d.", n)
	}
	v, err := s.cfg.Endpoints.Version(ctx, e.ProjectID, e.ID, n)
	if err != nil {
		return driver.Version{}, storeError(err, func() *Error {
			return notFoundf("Version %d not found for endpoint '%s'", n, e.Name)
		})
	}
	return v, nil
}

// versionView is v of e as Versions and Version show it.
func (s *Service) versionView(ctx context.Context, e *driver.Endpoint, v driver.Version) Version {
	info := Version{
		Version: v.Number, Query: Query(v.Query), CreatedAt: v.CreatedAt,
		IsCurrent: v.Number == e.CurrentVersion, Variables: []RunVariable{},
	}
	st := &e.MaterializationState
	if e.IsMaterialized && st.Table != "" && st.At != nil && builtVersion(st.Built) == v.Number {
		at := *st.At
		info.Materialization.Materialized, info.Materialization.LastMaterializedAt = true, &at
	}
	c, err := s.compiledAt(ctx, e, v.Number, s.now())
	if err != nil {
		info.Materialization.Reason = "the query cannot be compiled: " + errorDetail(err)
		return info
	}
	info.Variables = runVariables(e, c, v.Number)
	if vd := s.verdict(c, e.MaterializationBuckets, e.MaterializationTailColumn); vd.ok {
		info.Materialization.CanMaterialize = true
	} else {
		info.Materialization.Reason = vd.reason
	}
	return info
}

// runVariables lists the variables a run of version n of e takes, sorted
// by code name. A SQL run needs every one. An inline insight run may omit
// any; a run of a materialized insight endpoint's current version takes
// only the breakdowns, each required unless listed in OptionalBreakdowns.
func runVariables(e *driver.Endpoint, c *compiled, n int) []RunVariable {
	out := []RunVariable{}
	if c.insight == nil {
		for _, v := range c.vars {
			out = append(out, RunVariable{
				ID: v.ID, Name: v.Name, CodeName: v.CodeName, Type: v.Type,
				IsMulti: v.IsMulti, Values: slices.Clone(v.Values), Required: true,
			})
		}
		return out
	}
	materialized := e.IsMaterialized && n == e.CurrentVersion
	for _, name := range c.insight.Variables(materialized) {
		rv := RunVariable{Name: name, CodeName: name, Type: variable.String}
		switch name {
		case insight.DateFrom, insight.DateTo:
			rv.Type = variable.Date
		default:
			rv.Required = materialized && !slices.Contains(e.OptionalBreakdowns, name)
		}
		out = append(out, rv)
	}
	slices.SortFunc(out, func(a, b RunVariable) int { return strings.Compare(a.CodeName, b.CodeName) })
	return out
}

// RunSchema describes how to run one version of an endpoint: what a
// client needs to call it (and package endpoint/openapi to describe it).
type RunSchema struct {
	Name        string
	Description string
	Kind        string
	Version     int
	IsCurrent   bool
	// Materialized tells that runs of this version may read the stored
	// table.
	Materialized bool
	Variables    []RunVariable
	// Columns and Types are the columns a SQL run answers, as the database
	// described the query when the version was saved; Kinds the JSON form
	// of each (ColumnKindOf). Empty for an insight endpoint.
	Columns, Types []string
	Kinds          []ColumnKind
	// DefaultLimit and MaxLimit bound the limit of a SQL run.
	DefaultLimit, MaxLimit int
}

// RunSchema describes version n (0: the current one) of the endpoint named
// name. A SQL version's columns are those it was saved with; a version
// saved before versions kept them is described now (run once with LIMIT 0
// and placeholder values, no row read) and keeps them from then on; a
// database failure is the run's 502.
func (s *Service) RunSchema(ctx context.Context, project, name string, n int) (RunSchema, error) {
	e, err := s.get(ctx, project, name)
	if err != nil {
		return RunSchema{}, err
	}
	if n == 0 {
		n = e.CurrentVersion
	}
	if _, err := s.version(ctx, &e, n); err != nil {
		return RunSchema{}, err
	}
	c, err := s.compiledAt(ctx, &e, n, s.now())
	if err != nil {
		return RunSchema{}, err
	}
	rs := RunSchema{
		Name: e.Name, Description: e.Description, Kind: c.query.Kind, Version: n,
		IsCurrent: n == e.CurrentVersion, Materialized: e.IsMaterialized && n == e.CurrentVersion,
		Variables: runVariables(&e, c, n), Columns: []string{}, Types: []string{},
		DefaultLimit: s.cfg.DefaultLimit, MaxLimit: s.cfg.MaxLimit,
	}
	if c.insight != nil {
		return rs, nil
	}
	if sh := s.versionShape(ctx, &e, c, n); sh != nil {
		rs.Columns, rs.Types, rs.Kinds = slices.Clone(sh.columns), slices.Clone(sh.types), slices.Clone(sh.kinds)
		return rs, nil
	}
	// Not described: run the description now, for its error.
	res, err := s.describe(ctx, &e, c)
	if err != nil {
		return RunSchema{}, err
	}
	sh := newShape(s.engine(), res.Columns, res.Types)
	rs.Columns, rs.Types, rs.Kinds = sh.columns, sh.types, sh.kinds
	return rs, nil
}

// describe runs a SQL version with LIMIT 0, each variable bound to a
// value of its type (no row is read, so which value does not matter), to
// learn its columns as a run through the paging wrapper names them.
func (s *Service) describe(ctx context.Context, e *driver.Endpoint, c *compiled) (*driver.Result, error) {
	values := make(map[string]any, len(c.vars)+3)
	for _, v := range c.vars {
		values[v.CodeName] = sampleValue(v)
	}
	values[c.limitName] = int64(0)
	values[c.offsetName] = int64(0)
	st, err := c.paged.Render(values)
	if err != nil {
		return nil, withCause(invalidf(CodeInvalidVariableValue, "variables", "%s", placeholderError(err).Detail), err)
	}
	return s.execute(ctx, st)
}

// sampleValue is a coerced value of v's type.
func sampleValue(v variable.Variable) any {
	switch v.Type {
	case variable.Number:
		// 1, not 0: an engine that folds constants (ClickHouse, and
		// PostgreSQL's custom plans) would divide by zero at the check of
		// a save (checkQuery) where a run's value does not.
		return int64(1)
	case variable.Boolean:
		return false
	case variable.Date:
		return variable.Timestamp{Time: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), DateOnly: true}
	case variable.List:
		first := ""
		if len(v.Values) > 0 {
			first = v.Values[0]
		}
		if v.IsMulti {
			return []string{first}
		}
		return first
	}
	return ""
}
