// Package scope is the one place where SQL that endpointkit sends to an
// executor meets the tables of the access policy. Every statement a run, a
// query of the editor, or a refresh executes is a Statement, and a
// Statement can only be made here: by rendering a query text that Compile
// scoped, by a materialization plan that Plan scoped, by an insight query
// this package compiles with the scope's tenant, or, for the library's own
// stored tables only, by Own. It is driver.Statement, sealed in package
// internal/stmt: its fields are unexported, and its constructor is called
// only here and by the executor conformance suite (a test of internal/stmt
// walks the module to hold that), so a new way for a run to happen cannot
// forget the scope, because it has nothing else to hand the executor,
// whose one query method takes a Statement.
//
// Scoping is access.Confine's rewrite, printed by package sql/tree's
// printer: every reference to a table with a
// tenant column becomes a derived table filtered on the placeholder
// TenantVariable, which a Statement always binds to the Scope's project.
// An insight query is confined by the same printer: each of its reads of
// the events is the derived table that tree.WriteTable writes, with the
// project bound (see Tenant).
//
// Derived statements (the pre-compute query of a stored table, the partial
// buckets and live tail of a materialized read) are scoped by the same
// rewrite of the same rules: the plan is analysed on the user's query and
// its source is scoped (see materialize.Plan.ScopeSource), since
// materialization cannot read the derived tables of the rewrite.
package scope

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/endpointkit/endpointkit/insight"
	"github.com/endpointkit/endpointkit/internal/stmt"
	"github.com/endpointkit/endpointkit/materialize"
	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/tree"
	"github.com/endpointkit/endpointkit/variable"
)

// TenantVariable is the placeholder that scoping binds to the project a
// statement runs for. A query may not use it, nor any name with its
// prefix: a Statement binds it, over anything a client sends.
const TenantVariable = "__endpointkit_tenant"

// Statement is one statement for an executor: its text, with the engine's
// bind markers, and their arguments. It is driver.Statement, sealed in
// package internal/stmt, and this package is the only one whose code
// makes one for the Service (the conformance suite makes its own).
type Statement = stmt.Statement

// Scope is what the statements of one project may read: the rules of the
// access policy for it, and the project its tenant columns are bound to.
// A Scope is immutable and safe for concurrent use.
type Scope struct {
	rules   *access.Rules
	project string
	e       engine.Engine
}

// anyTable is the rules of a library without a policy: every table but
// the library's own and the engines' catalogs.
var anyTable = &access.Rules{AnyTable: true}

// New returns the scope of project under rules (nil: any table but the
// library's own and the catalogs), for statements of engine e.
func New(rules *access.Rules, project string, e engine.Engine) *Scope {
	if rules == nil {
		rules = anyTable
	}
	return &Scope{rules: rules, project: project, e: e}
}

// Project returns the project the scope binds tenants to.
func (sc *Scope) Project() string { return sc.project }

// Engine returns the engine its statements are written for.
func (sc *Scope) Engine() engine.Engine { return sc.e }

// Text checks sql against the rules and returns it rewritten to read only
// what they allow, TenantVariable standing for the project
// (access.ConfineFor, reading the text as the scope's engine does).
// A refusal is an *access.Error naming what was refused.
func (sc *Scope) Text(sql string) (string, error) {
	return access.ConfineFor(sc.e.Lexical(), sql, sc.rules, TenantVariable)
}

// Template is a query text scoped and compiled: rendered for each run.
type Template struct {
	sc *Scope
	t  *placeholder.Template
	// tenant: the text reads a table with a tenant column.
	tenant bool
}

// Compile scopes sql (Text) and compiles the rewrite. scoped tells whether
// the rewrite differs from sql.
func (sc *Scope) Compile(sql string) (t *Template, scoped bool, err error) {
	text, err := sc.Text(sql)
	if err != nil {
		return nil, false, err
	}
	pt, err := placeholder.CompileFor(sc.e.Lexical(), text)
	if err != nil {
		return nil, false, err
	}
	t = &Template{sc: sc, t: pt}
	for _, n := range pt.Names() {
		if n == TenantVariable {
			t.tenant = true
		}
	}
	return t, text != sql, nil
}

// Text returns the compiled template: the scoped text, its placeholders
// and its statement, for reading.
func (t *Template) Text() *placeholder.Template { return t.t }

// Tenant reports whether the template binds the tenant.
func (t *Template) Tenant() bool { return t.tenant }

// Render binds values (coerced, by code name) and the tenant, which it
// sets in values too, over any value there.
func (t *Template) Render(values map[string]any) (Statement, error) {
	if t.tenant {
		values[TenantVariable] = t.sc.project
	}
	sql, args, err := t.t.Render(t.sc.e, values)
	if err != nil {
		return Statement{}, err
	}
	// A template is a query its author wrote, scoped: what the engine
	// says is wrong with it is the author's to read.
	return stmt.New(sql, args).ByUser(), nil
}

// Plan is a materialization plan whose reads of the source are scoped.
type Plan struct {
	sc *Scope
	p  *materialize.Plan
}

// Plan scopes the source reads of p (the partial buckets of a range off
// its buckets' boundaries, a live tail's newer rows) with the rules, as
// its pre-compute query is.
func (sc *Scope) Plan(p *materialize.Plan) (*Plan, error) {
	scoped, err := p.ScopeSource(sc.Text)
	if err != nil {
		return nil, err
	}
	return &Plan{sc: sc, p: scoped}, nil
}

// Materialize returns the plan itself, for what does not reach the
// executor (its columns, whether it has a tail, its index DDL).
func (p *Plan) Materialize() *materialize.Plan { return p.p }

// ReadPage is materialize.Plan.ReadPage of the scoped plan, with the
// tenant bound (set in values too).
func (p *Plan) ReadPage(table string, values map[string]any, limit, offset int64) (Statement, error) {
	values[TenantVariable] = p.sc.project
	sql, args, err := p.p.ReadPage(table, values, limit, offset)
	if err != nil {
		return Statement{}, err
	}
	return stmt.New(sql, args), nil
}

// Probe is one read of the source that runs of a materialized plan make
// beside its stored table (see Plan.EdgeProbes).
type Probe struct {
	// Name says which read, in the user's words.
	Name      string
	Statement Statement
}

// EdgeProbes returns materialize.Plan.EdgeProbes of the scoped plan as of
// at, with the tenant bound: queries to ask the engine's plan of
// (driver.Explainer), not to run.
func (p *Plan) EdgeProbes(at time.Time) ([]Probe, error) {
	probes, err := p.p.EdgeProbes(at, map[string]any{TenantVariable: p.sc.project})
	if err != nil {
		return nil, err
	}
	out := make([]Probe, len(probes))
	for i, pr := range probes {
		out[i] = Probe{Name: pr.Name, Statement: stmt.New(pr.SQL, pr.Args)}
	}
	return out, nil
}

// Build returns the statements that build the stored table next of data
// as of at: drop it, then create it from the pre-compute query, scoped,
// with the tenant and the build instant bound.
func (p *Plan) Build(next string, at time.Time) ([]Statement, error) {
	src, _, err := p.sc.Compile(p.p.Precompute())
	if err != nil {
		return nil, err
	}
	st, err := src.Render(map[string]any{materialize.BuiltAtVariable: variable.Timestamp{Time: at}})
	if err != nil {
		return nil, err
	}
	e := p.sc.e
	return []Statement{Own(e.DropTable(next)), stmt.New(e.CreateTableAs(next, st.SQL()), st.Args())}, nil
}

// SourceCount returns the statement that counts the source rows the
// pre-compute query reads as of at (materialize.Plan.SourceCount), scoped
// as Build's is.
func (p *Plan) SourceCount(at time.Time) (Statement, error) {
	src, _, err := p.sc.Compile(p.p.SourceCount())
	if err != nil {
		return Statement{}, err
	}
	st, err := src.Render(map[string]any{materialize.BuiltAtVariable: variable.Timestamp{Time: at}})
	if err != nil {
		return Statement{}, err
	}
	return stmt.New(st.SQL(), st.Args()), nil
}

// Tenant checks that the scope may read the events table that insight
// queries read, and returns how its rules confine it (nil for not at
// all): insight writes each read of the events through package sql/tree's
// printer with it (tree.WriteTable), as the derived table that a query
// text's reference is printed as, the project bound as the tenant. When
// the rules list the columns of the events, they must list every column
// an insight reads (insight.EventsColumns); a refusal is an
// *access.Error naming the table and the column.
func (sc *Scope) Tenant() (*tree.Confinement, error) {
	if err := access.Check("SELECT * FROM "+insight.EventsTable, sc.rules); err != nil {
		return nil, err
	}
	for _, t := range sc.rules.Tables {
		if !strings.EqualFold(t.Name, insight.EventsTable) || t.TenantColumn == "" && t.Columns == nil {
			continue
		}
		if t.Columns != nil {
			for _, c := range insight.EventsColumns() {
				if !slices.ContainsFunc(t.Columns, func(l string) bool { return strings.EqualFold(l, c) }) {
					return nil, &access.Error{Reason: access.ReasonColumn, Table: t.Name, Line: 1, Column: 1,
						Detail: fmt.Sprintf("insight queries read the column '%s' of table '%s', which this project's endpoints cannot read", c, t.Name)}
				}
			}
		}
		return &tree.Confinement{
			Table:  tree.Table{Parts: []string{t.Name}, TenantColumn: t.TenantColumn, Columns: slices.Clone(t.Columns)},
			Tenant: sc.project,
		}, nil
	}
	return nil, nil
}

// withTenant returns a copy of q reading the events through the scope.
func (sc *Scope) withTenant(q *insight.Query) (*insight.Query, error) {
	tenant, err := sc.Tenant()
	if err != nil {
		return nil, err
	}
	out := *q
	out.Tenant = tenant
	return &out, nil
}

// Insight compiles an insight query (its values applied) against now with
// the scope's tenant, whatever tenant q holds.
func (sc *Scope) Insight(q *insight.Query, now time.Time) (Statement, *insight.Compiled, error) {
	q, err := sc.withTenant(q)
	if err != nil {
		return Statement{}, nil, err
	}
	c, err := insight.Compile(q, sc.e, now)
	if err != nil {
		return Statement{}, nil, err
	}
	return stmt.New(c.SQL, c.Args), c, nil
}

// InsightBuild returns the statements that build the stored table next of
// an insight query as of now, reading the events with the scope's tenant.
func (sc *Scope) InsightBuild(q *insight.Query, next string, now time.Time) ([]Statement, error) {
	q, err := sc.withTenant(q)
	if err != nil {
		return nil, err
	}
	built, err := insight.Materialize(q, sc.e, next, now)
	if err != nil {
		return nil, err
	}
	out := make([]Statement, len(built))
	for i, b := range built {
		out[i] = stmt.New(b.SQL, b.Args)
	}
	return out, nil
}

// InsightRead returns the read of an insight query's stored table with a
// run's values; it reads that table only.
func (sc *Scope) InsightRead(q *insight.Query, table string, values map[string]any, at time.Time) (Statement, *insight.Compiled, error) {
	c, err := insight.ReadMaterialized(q, sc.e, table, values, at)
	if err != nil {
		return Statement{}, nil, err
	}
	return stmt.New(c.SQL, c.Args), c, nil
}

// Describe is the statement that reads no row of table, one of the rules'
// tables, so that its answer's columns and types describe what a query of
// the project sees there: SELECT * FROM table LIMIT 0, scoped like any
// query (Text), its tenant bound to the project and its columns those the
// rules allow.
func (sc *Scope) Describe(table string) (Statement, error) {
	t, _, err := sc.Compile("SELECT * FROM " + table + " LIMIT 0")
	if err != nil {
		return Statement{}, err
	}
	return t.Render(map[string]any{})
}

// Own is a statement of the library on the tables it made: the DDL of
// stored tables, their row counts, the list of them. It must read no table
// of an access policy; the engine's DDL and the library's table names are
// what it is written from.
func Own(sql string) Statement { return stmt.New(sql, nil) }

// Owns returns Own of each statement.
func Owns(sqls []string) []Statement {
	out := make([]Statement, len(sqls))
	for i, s := range sqls {
		out[i] = Own(s)
	}
	return out
}

// Count is the statement counting the rows of the stored table, at most
// max+1 of them when max > 0.
func Count(e engine.Engine, table string, max int64) Statement {
	if max > 0 {
		return Own(fmt.Sprintf("SELECT count(*) FROM (SELECT 1 AS one FROM %s LIMIT %d) AS endpointkit_rows", e.QuoteIdent(table), max+1))
	}
	return Own("SELECT count(*) FROM " + e.QuoteIdent(table))
}
