package endpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/insight"
	"github.com/endpointkit/endpointkit/materialize"
	"github.com/endpointkit/endpointkit/sql/scope"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/google/uuid"
)

// QueryRequest is the input of Query (the JSON body of POST query/, in
// PostHog's shape): a query that is not saved, run with test values, as
// an editor runs it before the user saves it as an endpoint.
type QueryRequest struct {
	// Query is a HogQLQuery, whose variables (keyed by variable id) carry
	// their test values in "value", or a TrendsQuery, RetentionQuery or
	// LifecycleQuery.
	Query *Query `json:"query"`
	// Variables are the values of an insight query's variables by name
	// (its breakdown properties, date_from and date_to), as a run of an
	// insight endpoint takes them. A HogQLQuery carries its test values in
	// its own variables, so it may not use this field: two places for one
	// value would leave the user guessing which one ran.
	Variables map[string]any `json:"variables"`
	// Limit and Offset page the rows of a SQL query as in a run.
	Limit  *int `json:"limit"`
	Offset *int `json:"offset"`
	// Debug adds the executed SQL, its argument count and timings.
	Debug bool `json:"debug"`
}

// QueryResult is the answer of Query: the rows, and what the editor shows
// the user before saving (the placeholders, the values that ran, and
// whether the query could be materialized).
type QueryResult struct {
	// Kind is the query's kind.
	Kind string `json:"kind"`
	// Columns, Types, Results and HasMore are as in RunResult.
	Columns []string `json:"columns"`
	Types   []string `json:"types"`
	Results any      `json:"results"`
	HasMore bool     `json:"hasMore"`
	// Limit and Offset are the page that was read (0 for an insight
	// query, which returns its whole result).
	Limit  int `json:"limit"`
	Offset int `json:"offset"`
	// Placeholders are the code names of the SQL's {variables.x}, in order
	// of first appearance; empty for an insight query.
	Placeholders []string `json:"placeholders"`
	// Variables are the query's variables and the values they ran with.
	Variables []QueryVariable `json:"variables"`
	// Materialization is the verdict on materializing the query once saved.
	Materialization QueryVerdict `json:"materialization"`
	Debug           *DebugInfo   `json:"debug,omitempty"`
}

// Sources of a QueryVariable's value.
const (
	// SourceTest: the request gave the value.
	SourceTest = "test"
	// SourceDefault: the request gave none, so the variable's default ran.
	SourceDefault = "default"
	// SourceNone: an insight variable given no value, which does not
	// filter (an omitted breakdown returns every series, an omitted date
	// keeps the saved bound).
	SourceNone = "none"
)

// QueryVariable is one variable of a query run by Query.
type QueryVariable struct {
	// ID, Name and Type are the data-management variable's; empty for an
	// insight variable, which is named by its property or date bound.
	ID       string        `json:"id,omitempty"`
	Name     string        `json:"name,omitempty"`
	CodeName string        `json:"code_name"`
	Type     variable.Type `json:"type,omitempty"`
	// Value is the value as given (or the default), before coercion.
	Value any `json:"value"`
	// Source is SourceTest, SourceDefault or SourceNone.
	Source string `json:"source"`
}

// QueryVerdict says whether the query, saved as an endpoint, could be
// materialized, and if not, every reason why.
type QueryVerdict struct {
	CanMaterialize bool `json:"can_materialize"`
	// Reason is the first reason, as an endpoint's materialization.reason
	// and the refusal of is_materialized would word it.
	Reason  string          `json:"reason"`
	Reasons []VerdictReason `json:"reasons"`
	// Variables say, per variable of a SQL query, how a stored table would
	// answer it or why it cannot.
	Variables []VariableVerdict `json:"variables,omitempty"`
}

// VerdictReason is one reason a query cannot be materialized.
type VerdictReason struct {
	// Code is stable (materialize.Code's values); match on it.
	Code string `json:"code"`
	// Variable is the code name concerned; empty for the whole query.
	Variable string `json:"variable,omitempty"`
	Message  string `json:"message"`
}

// RunQuery runs a query that is not saved, for project, as Run runs a saved
// one: it passes every check a save does (kind, placeholders, variable ids
// and their existence, undefined placeholders, what the project may read)
// and is scoped, bound, paged and timed as a run. Each variable takes its
// test value, or its default when the request gives none; a variable with
// neither is refused as a run refuses a missing value, and values are
// coerced as in a run. Nothing is stored, and no run limit is taken here:
// the HTTP API admits a query as it admits a run.
func (s *Service) RunQuery(ctx context.Context, project string, req QueryRequest) (*QueryResult, error) {
	opts, err := s.checkQueryRequest(req)
	if err != nil {
		return nil, err
	}
	c, err := s.compileQuery(ctx, project, driver.Query(*req.Query))
	if err != nil {
		return nil, err
	}
	// The query is not an endpoint: a stand-in that is not materialized
	// makes the run go inline, with the tenant bound to the project.
	ep := &driver.Endpoint{ProjectID: project, IsActive: true}
	now := s.now()
	out := &QueryResult{Kind: c.query.Kind, Placeholders: []string{}, Materialization: s.queryVerdict(ctx, c)}
	var res *RunResult
	if c.insight != nil {
		out.Variables = insightQueryVariables(c.insight, req.Variables)
		run := RunRequest{Variables: req.Variables, Limit: req.Limit, Offset: req.Offset}
		if _, err = s.admit(ep, c, run, opts, now); err == nil {
			res, err = s.runInsight(ctx, ep, c, run, opts, now)
		}
	} else {
		out.Placeholders = c.placeholders()
		var given map[string]any
		given, out.Variables, err = c.testValues()
		if err != nil {
			return nil, err
		}
		var values map[string]any
		if values, err = c.bind(given, now, 3); err == nil {
			res, err = s.runSQL(ctx, ep, c, values, opts, now)
			err = s.explainFault(ctx, c.scope, c.query.SQL, err)
		}
		err = c.pointAtValue(err)
	}
	if err != nil {
		return nil, err
	}
	out.Columns, out.Types, out.Results, out.HasMore, out.Debug = res.Columns, res.Types, res.Results, res.HasMore, res.Debug
	if c.insight == nil {
		out.Limit, out.Offset = opts.limit, opts.offset
	}
	return out, nil
}

// placeholders are the code names the user's SQL uses, in order of first
// appearance, without the ones the Service binds itself.
func (c *compiled) placeholders() []string {
	names := append([]string{}, c.tmpl.Names()...)
	return slices.DeleteFunc(names, func(n string) bool { return strings.HasPrefix(n, reservedPrefix) })
}

// testValues picks each variable's value: the test value of its reference,
// else its default. The variables with neither are refused together, in
// the words of a run that lacks them; attr points at the first one's value.
func (c *compiled) testValues() (map[string]any, []QueryVariable, error) {
	given := make(map[string]any, len(c.vars))
	used := make([]QueryVariable, 0, len(c.vars))
	var missing []string
	attr := ""
	for i := range c.vars {
		v := &c.vars[i]
		qv := QueryVariable{ID: v.ID, Name: v.Name, CodeName: v.CodeName, Type: v.Type}
		switch ref := c.query.Variables[v.ID]; {
		case len(ref.Value) > 0 && string(ref.Value) != "null":
			value, err := decodeTestValue(ref.Value)
			if err != nil {
				return nil, nil, invalidf(CodeInvalidInput, valueAttr(v.ID), "The test value of variable '%s' is not valid JSON.", v.CodeName)
			}
			qv.Value, qv.Source = value, SourceTest
		case v.DefaultValue != nil:
			qv.Value, qv.Source = v.DefaultValue, SourceDefault
		default:
			missing = append(missing, "'"+v.CodeName+"'")
			if attr == "" {
				attr = valueAttr(v.ID)
			}
			continue
		}
		given[v.CodeName] = qv.Value
		used = append(used, qv)
	}
	if len(missing) > 0 {
		return nil, nil, invalidf(CodeRequiredVariableMissing, attr,
			"Required variable(s) %s not provided: give each a test value, or the variable a default value.", strings.Join(missing, ", "))
	}
	return given, used, nil
}

// pointAtValue makes the attr of a refused value name where the request
// holds it (query.variables.<id>.value), so that an editor can show the
// error beside the input it came from.
func (c *compiled) pointAtValue(err error) error {
	var e *Error
	if !errors.As(err, &e) || e.Variable == "" {
		return err
	}
	if i, ok := c.index[e.Variable]; ok {
		e.Attr = valueAttr(c.vars[i].ID)
	}
	return err
}

func valueAttr(id string) string { return "query.variables." + id + ".value" }

// insightQueryVariables lists an insight query's variables with the values
// given, in the order insight.Query.Variables gives them.
func insightQueryVariables(q *insight.Query, given map[string]any) []QueryVariable {
	names := q.Variables(false)
	out := make([]QueryVariable, 0, len(names))
	for _, n := range names {
		qv := QueryVariable{CodeName: n, Source: SourceNone}
		if v, ok := given[n]; ok {
			qv.Value, qv.Source = v, SourceTest
		}
		out = append(out, qv)
	}
	return out
}

// queryVerdict is the verdict on materializing c with the default buckets:
// every reason from materialize.Analyze for SQL (with the declared types
// of the columns it sums, see analyze), the reason insight
// materialization fails for an insight query.
func (s *Service) queryVerdict(ctx context.Context, c *compiled) QueryVerdict {
	out := QueryVerdict{Reasons: []VerdictReason{}}
	if c.insight != nil {
		v := s.verdict(ctx, c, nil, "")
		out.CanMaterialize, out.Reason = v.ok, v.reason
		if !v.ok {
			out.Reasons = append(out.Reasons, VerdictReason{Code: string(materialize.CodeUnsupportedQuery), Message: v.reason})
		}
		return out
	}
	types := make(map[string]variable.Type, len(c.vars))
	for _, vr := range c.vars {
		types[vr.CodeName] = vr.Type
	}
	c.verdicts.mu.Lock()
	a, unread, err := s.analyze(ctx, c, materialize.Options{Engine: s.cfg.Executor.Engine(), Types: types})
	c.verdicts.mu.Unlock()
	if err != nil {
		// Options come from a compiled query; this is a defect, said as
		// the endpoint's verdict says it rather than hidden.
		out.Reason = strings.TrimPrefix(err.Error(), "materialize: ")
		out.Reasons = append(out.Reasons, VerdictReason{Code: string(materialize.CodeUnsupportedQuery), Message: out.Reason})
		return out
	}
	out.CanMaterialize, out.Reason = a.Materializable(), a.Reason()
	out.Variables = variableVerdicts(a)
	for _, r := range a.Reasons {
		out.Reasons = append(out.Reasons, VerdictReason{Code: string(r.Code), Variable: r.Variable, Message: r.String()})
	}
	if !out.CanMaterialize && unread != "" {
		// The sums were judged without some columns' types.
		out.Reason += unread
		out.Reasons[0].Message += unread
	}
	return out
}

// AdHocVariable is a value of an ad-hoc query's variable (AdHocRequest),
// with its type when the value alone does not tell it.
type AdHocVariable struct {
	// Value is the value as a run takes it: a string, number, boolean,
	// or a list of strings.
	Value any
	// Type is the variable's type (String, Number, Boolean, Date, List);
	// empty means the type of the project's variable of that code name
	// when there is one, otherwise the type the value's JSON form has (a
	// list of strings is a multi-valued List). A date written as text
	// needs Type Date, or it is compared as text.
	Type variable.Type
}

// AdHocRequest is a SQL query that is not saved, with its variables by
// code name: nothing to create in data management first, and nothing is
// stored.
type AdHocRequest struct {
	// SQL is the query, with {variables.<code_name>} placeholders.
	SQL string
	// Variables are the placeholders' values by code name. A placeholder
	// given none takes the default of the project's variable of that code
	// name, when there is one.
	Variables map[string]AdHocVariable
	// Limit, Offset and Debug are as in QueryRequest.
	Limit  *int
	Offset *int
	Debug  bool
}

// adHocKey is the context key of the variables an ad-hoc query defines
// for itself, by id (lookupVariables reads them before the store).
type adHocKey struct{}

// adHocVariables are the variables an ad-hoc query run in ctx defines.
func adHocVariables(ctx context.Context) map[string]variable.Variable {
	m, _ := ctx.Value(adHocKey{}).(map[string]variable.Variable)
	return m
}

// RunAdHoc runs SQL that is not saved with its variables by code name, as
// RunQuery runs a HogQLQuery: every check of a save, scoped, bound (values
// are always bound as arguments, never written into the SQL), paged and
// timed as a run. A variable is the project's of that code name when the
// request gives it no type of its own (or the same one), otherwise one
// defined for this run only, never stored. The answer's variables say
// what ran; those defined for the run have no id.
func (s *Service) RunAdHoc(ctx context.Context, project string, req AdHocRequest) (*QueryResult, error) {
	tmpl, err := s.parseSQL(req.SQL)
	if err != nil {
		return nil, err
	}
	saved, err := s.ListVariables(ctx, project)
	if err != nil {
		return nil, err
	}
	byCode := make(map[string]variable.Variable, len(saved))
	for _, v := range saved {
		byCode[v.CodeName] = v
	}
	refs := map[string]VariableRef{}
	own := map[string]variable.Variable{}
	codes := make([]string, 0, len(req.Variables))
	for code := range req.Variables {
		codes = append(codes, code)
	}
	sort.Strings(codes)
	for _, code := range codes {
		given := req.Variables[code]
		raw, err := json.Marshal(given.Value)
		if err != nil {
			return nil, invalidf(CodeInvalidInput, "variables."+code, "The value of variable '%s' cannot be read.", code)
		}
		if v, ok := byCode[code]; ok && (given.Type == "" || given.Type == v.Type) {
			refs[v.ID] = VariableRef{VariableID: v.ID, CodeName: code, Value: raw}
			continue
		}
		v, err := adHocDefinition(code, given)
		if err != nil {
			return nil, err
		}
		own[v.ID] = v
		refs[v.ID] = VariableRef{VariableID: v.ID, CodeName: code, Value: raw}
	}
	// Placeholders given no value take the project's variable (and its
	// default), as the editor's test run does.
	for _, name := range tmpl.Names() {
		if _, given := req.Variables[name]; given {
			continue
		}
		if v, ok := byCode[name]; ok {
			refs[v.ID] = VariableRef{VariableID: v.ID, CodeName: name}
		}
	}
	q := &Query{Kind: KindSQL, SQL: req.SQL}
	if len(refs) > 0 {
		q.Variables = refs
	}
	if len(own) > 0 {
		ctx = context.WithValue(ctx, adHocKey{}, own)
	}
	out, err := s.RunQuery(ctx, project, QueryRequest{Query: q, Limit: req.Limit, Offset: req.Offset, Debug: req.Debug})
	if err != nil {
		return nil, err
	}
	for i := range out.Variables {
		if _, mine := own[out.Variables[i].ID]; mine {
			out.Variables[i].ID, out.Variables[i].Name = "", ""
		}
	}
	return out, nil
}

// adHocDefinition defines the variable code of an ad-hoc query from what
// was given for it.
func adHocDefinition(code string, given AdHocVariable) (variable.Variable, error) {
	v := variable.Variable{ID: uuid.NewString(), Name: code, CodeName: code, Type: given.Type}
	if v.Type == "" {
		switch val := given.Value.(type) {
		case string:
			v.Type = variable.String
		case float64, json.Number, int, int64:
			v.Type = variable.Number
		case bool:
			v.Type = variable.Boolean
		case []any:
			v.Type, v.IsMulti = variable.List, true
			for _, x := range val {
				s, ok := x.(string)
				if !ok {
					return variable.Variable{}, invalidf(CodeInvalidInput, "variables."+code,
						"The list given for variable '%s' holds a value that is not text; a list variable takes strings.", code)
				}
				v.Values = append(v.Values, s)
			}
		default:
			return variable.Variable{}, invalidf(CodeInvalidInput, "variables."+code,
				"Variable '%s' needs a value: a string, number, boolean or list of strings, or {\"value\": ..., \"type\": \"Date\"}.", code)
		}
	}
	if v.Type == variable.List && len(v.Values) == 0 {
		if list, ok := given.Value.([]any); ok {
			v.IsMulti = true
			for _, x := range list {
				v.Values = append(v.Values, fmt.Sprint(x))
			}
		} else if one, ok := given.Value.(string); ok {
			v.Values = []string{one}
		}
	}
	if err := v.Normalize(); err != nil {
		var de *variable.DefinitionError
		if errors.As(err, &de) {
			return variable.Variable{}, withCause(invalidf(CodeInvalidInput, "variables."+code, "Variable '%s': invalid %s: %s", code, de.Field, de.Message), err)
		}
		return variable.Variable{}, withCause(invalidf(CodeInvalidInput, "variables."+code, "Variable '%s' is not valid: %s", code, err), err)
	}
	return v, nil
}

// splitAdHoc splits ids into those to read from the store and the
// variables the ad-hoc query run in ctx defines itself.
func splitAdHoc(ctx context.Context, ids []string) ([]string, map[string]variable.Variable) {
	defs := adHocVariables(ctx)
	if len(defs) == 0 {
		return ids, nil
	}
	rest := make([]string, 0, len(ids))
	own := map[string]variable.Variable{}
	for _, id := range ids {
		if v, ok := defs[id]; ok {
			own[id] = v
		} else {
			rest = append(rest, id)
		}
	}
	return rest, own
}

// SchemaTable is one table a project's queries may read, as Schema
// describes it.
type SchemaTable struct {
	// Name is the table's name as the access policy spells it.
	Name string `json:"name"`
	// Columns are the columns a query of the project sees, in the
	// engine's order: those the policy allows (its tenant column
	// included, filtered to the project's rows).
	Columns []SchemaColumn `json:"columns"`
	// Error says why the table could not be described (it does not exist
	// on the database, or the database failed); "" otherwise.
	Error string `json:"error,omitempty"`
}

// SchemaColumn is a column of a SchemaTable.
type SchemaColumn struct {
	// Name is the column's name.
	Name string `json:"name"`
	// Type is the engine's type name of the column, as a run's types
	// report it ("TEXT", "text", "String", ...); "" when the engine does
	// not tell it for a result without rows.
	Type string `json:"type"`
}

// Schema lists the tables the access policy (Config.Access) lets project's
// queries read, sorted by name, with their columns and engine types, so
// that the author of a query sees what there is to read. Each table is
// described by a statement that reads no row (SELECT * FROM t LIMIT 0),
// scoped like any run: the columns are exactly those a query sees. A
// table the database cannot read is listed with its Error. Without a
// Policy, or for the tables a policy's AnyTable allows without listing
// them, nothing is listed: the Service reads no catalog.
func (s *Service) Schema(ctx context.Context, project string) ([]SchemaTable, error) {
	rules, err := s.rules(ctx, project)
	if err != nil {
		return nil, err
	}
	out := []SchemaTable{}
	if rules == nil {
		return out, nil
	}
	sc := scope.New(rules, project, s.cfg.Executor.Engine())
	for _, t := range rules.Tables {
		out = append(out, SchemaTable{Name: t.Name, Columns: []SchemaColumn{}})
	}
	slices.SortFunc(out, func(a, b SchemaTable) int { return strings.Compare(a.Name, b.Name) })
	for i := range out {
		st, err := sc.Describe(out[i].Name)
		if err != nil {
			return nil, scopeError(err)
		}
		res, err := s.executeCapped(ctx, st, 0)
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			out[i].Error = "the table could not be read"
			var e *Error
			if errors.As(err, &e) && e.Code == CodeQueryError {
				out[i].Error = e.Detail
			}
			continue
		}
		for j, name := range res.Columns {
			col := SchemaColumn{Name: name}
			if j < len(res.Types) {
				col.Type = res.Types[j]
			}
			out[i].Columns = append(out[i].Columns, col)
		}
	}
	return out, nil
}
