package endpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/insight"
	"github.com/endpointkit/endpointkit/internal/apierror"
	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/scope"
	"github.com/endpointkit/endpointkit/sql/sqltoken"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/google/uuid"
)

// compiled is one version of an endpoint's query, checked and ready to run:
// everything that parsing and validation produce, so that a run only binds
// values and renders. It is immutable once built and shared by concurrent
// runs through the Service's cache.
type compiled struct {
	// query is the normalized query as stored.
	query driver.Query
	// vars are the query's variables as they were validated, sorted by
	// code name; index maps a code name to its position.
	vars  []variable.Variable
	index map[string]int
	// tmpl is the query text itself, as the user wrote it. paged is its
	// scoped rewrite wrapped in SELECT * FROM (...) LIMIT/OFFSET, with
	// placeholders limitName and offsetName for the page bounds (see
	// compilePaged); direct is the scoped statement without its trailing
	// semicolons and comments when it is a plain SELECT that may run
	// unwrapped (see plainSelect), nil otherwise. Only those two run.
	tmpl                  *placeholder.Template
	paged                 *scope.Template
	direct                *scope.Template
	limitName, offsetName string
	// scope is what the version may read, for the project it was
	// compiled for: every statement derived from it is made through it
	// (see verdict and refresh). scoped tells that its rewrite differs
	// from the user's text.
	scope  *scope.Scope
	scoped bool
	// insight is the decoded query of an insight kind (see compileInsight).
	insight *insight.Query
	// verdicts memoizes materialization analyses (see materialize.go)
	// and the declared types of the columns they sum.
	verdicts verdicts
	// shape is the version's columns and types once known (see
	// versionShape).
	shape shapeSlot
}

// compileQuery checks a query for project and returns it normalized with its
// compiled form. It is the whole of create and update validation of a query,
// in the order the checks report: kind, text, placeholder syntax,
// hand-written bind markers, variable ids, their existence, code names,
// undefined placeholders, list positions, a single statement. Insight kinds
// are checked by compileInsight.
func (s *Service) compileQuery(ctx context.Context, project string, q driver.Query) (*compiled, error) {
	switch q.Kind {
	case KindSQL:
		return s.compileSQL(ctx, project, q)
	case KindTrends, KindRetention, KindLifecycle:
		return s.compileInsight(ctx, project, q)
	case "":
		return nil, required("query.kind")
	default:
		return nil, apierror.UnsupportedKind(q.Kind, KindSQL, KindTrends, KindRetention, KindLifecycle)
	}
}

func (s *Service) compileSQL(ctx context.Context, project string, q driver.Query) (*compiled, error) {
	tmpl, err := s.parseSQL(q.SQL)
	if err != nil {
		return nil, err
	}
	sc, err := s.scopeOf(ctx, project)
	if err != nil {
		return nil, err
	}
	text, scoped, err := sc.Compile(q.SQL)
	if err != nil {
		return nil, s.refusal(ctx, project, err)
	}
	refs, ids, err := normalizeRefs(q.Variables)
	if err != nil {
		return nil, err
	}
	c, err := s.bindVariables(ctx, project, tmpl, refs, ids)
	if err != nil {
		return nil, err
	}
	if err := c.checkDefined(); err != nil {
		return nil, err
	}
	if err := tmpl.CheckLists(c.isMulti); err != nil {
		return nil, placeholderError(err)
	}
	// The user's text passed every check; what runs is its scoped
	// rewrite, which reads only what the project may read.
	c.scope, c.scoped = sc, scoped
	if err := c.compilePaged(text); err != nil {
		return nil, err
	}
	c.query = driver.Query{Kind: KindSQL, SQL: q.SQL}
	if len(refs) > 0 {
		c.query.Variables = refs
	}
	return c, nil
}

// parseSQL checks the text of a SQL query on its own: present, within the
// length and placeholder limits, placeholders well formed, no bind marker
// written by hand, no reserved name, one statement.
func (s *Service) parseSQL(sql string) (*placeholder.Template, error) {
	if strings.TrimSpace(sql) == "" {
		return nil, required("query.query")
	}
	if err := s.checkLength(len(sql)); err != nil {
		return nil, err
	}
	tmpl, err := placeholder.CompileFor(s.cfg.Executor.Engine().Lexical(), sql)
	if err != nil {
		return nil, placeholderError(err)
	}
	if n := len(tmpl.Placeholders()); s.cfg.MaxPlaceholders > 0 && n > s.cfg.MaxPlaceholders {
		return nil, limited(invalidf(CodeQueryTooLarge, "query",
			"Query has %d placeholders, more than max_placeholders (%d).", n, s.cfg.MaxPlaceholders),
			LimitMaxPlaceholders, int64(s.cfg.MaxPlaceholders))
	}
	if err := s.checkBindMarkers(sql); err != nil {
		return nil, err
	}
	if err := checkReserved(tmpl.Names()); err != nil {
		return nil, err
	}
	if err := singleStatement(tmpl.Statement()); err != nil {
		return nil, err
	}
	if err := checkInert(s.cfg.Executor.Engine(), sql, tmpl); err != nil {
		return nil, err
	}
	return tmpl, nil
}

// checkInert refuses a placeholder written inside a string literal, a
// quoted name or a comment: the engine reads it as text, so no value is
// bound there and the query silently compares with the placeholder's own
// text ('%{variables.q}%' matches nothing the user meant). The message
// shows the form that works on e, the executor's engine. Malformed texts
// in literals ('{"a": 1}', JSON) are left alone: they name no variable.
func checkInert(e engine.Engine, sql string, tmpl *placeholder.Template) error {
	for _, p := range tmpl.Inert() {
		if p.Name == "" {
			continue
		}
		var tok sqltoken.Token
		for _, t := range sqltoken.Tokens(e.Lexical(), sql) {
			if t.Start <= p.Start && p.Start < t.End {
				tok = t
				break
			}
		}
		where, fix := "a comment", "write it outside the comment"
		switch tok.Kind {
		case sqltoken.String:
			where = "a string literal"
			fix = "build the text with the placeholder outside the quotes: " + literalFix(e, sql, tok, tmpl.Inert())
		case sqltoken.QuotedName:
			where, fix = "a quoted name", "a variable's value can only stand where a value does, outside the quotes"
		}
		return invalidf(CodeInvalidInput, "query",
			"Placeholder {variables.%s} at line %d, column %d is inside %s, where the database reads it as text and binds no value; %s",
			p.Name, p.Line, p.Column, where, fix)
	}
	return nil
}

// literalFix rewrites the string literal tok, which holds placeholders, as
// the engine's concatenation of its text pieces and the placeholders:
// '%{variables.q}%' becomes '%' || {variables.q} || '%' (concat('%',
// {variables.q}, '%') on MySQL and ClickHouse), and '{variables.q}' just
// {variables.q}. A literal of another spelling than '...' (E'...', dollar
// quotes, "..." on MySQL) gets the same form for its first placeholder
// alone.
func literalFix(e engine.Engine, sql string, tok sqltoken.Token, inert []placeholder.Placeholder) string {
	text := sql[tok.Start:tok.End]
	var parts []string
	simple := len(text) >= 2 && text[0] == '\'' && text[len(text)-1] == '\'' && !tok.Is(sqltoken.Unclosed)
	prev := tok.Start + 1
	for _, p := range inert {
		if p.Start < tok.Start || p.Start >= tok.End || p.Name == "" {
			continue
		}
		ph := "{variables." + p.Name + "}"
		if !simple {
			return e.Concat("'%'", ph, "'%'")
		}
		if p.Start > prev {
			parts = append(parts, "'"+sql[prev:p.Start]+"'")
		}
		parts = append(parts, ph)
		prev = p.End
	}
	if end := tok.End - 1; end > prev {
		parts = append(parts, "'"+sql[prev:end]+"'")
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return e.Concat(parts...)
}

// bindVariables looks up the variables a query refers to and ties each to
// its code name, sorted by code name.
func (s *Service) bindVariables(ctx context.Context, project string, tmpl *placeholder.Template, refs map[string]VariableRef, ids []string) (*compiled, error) {
	vars, err := s.lookupVariables(ctx, project, ids)
	if err != nil {
		return nil, err
	}
	c := &compiled{tmpl: tmpl, vars: make([]variable.Variable, 0, len(ids)), index: make(map[string]int, len(ids))}
	for _, id := range ids {
		v := vars[id]
		ref := refs[id]
		if ref.CodeName == "" {
			ref.CodeName = v.CodeName
			refs[id] = ref
		}
		if ref.CodeName != v.CodeName {
			return nil, invalidf(CodeInvalidInput, "query.variables", "Variable %s has code_name '%s', not '%s'.", id, v.CodeName, ref.CodeName)
		}
		c.vars = append(c.vars, v)
	}
	slices.SortFunc(c.vars, func(a, b variable.Variable) int { return strings.Compare(a.CodeName, b.CodeName) })
	for i, v := range c.vars {
		c.index[v.CodeName] = i
	}
	return c, nil
}

// checkLength refuses a query of n bytes, more than MaxQueryLength, before
// anything parses it.
func (s *Service) checkLength(n int) error {
	if s.cfg.MaxQueryLength > 0 && n > s.cfg.MaxQueryLength {
		return limited(invalidf(CodeQueryTooLarge, "query",
			"Query is %d bytes long, more than max_query_length (%d bytes).", n, s.cfg.MaxQueryLength),
			LimitMaxQueryLength, int64(s.cfg.MaxQueryLength))
	}
	return nil
}

// checkBindMarkers refuses a bind marker written by hand ('?', '$1',
// ':name', ... as the executor's engine reads them): nothing would be bound
// to it, and the run would fail with a 502 instead of the save with a 400.
func (s *Service) checkBindMarkers(sql string) error {
	markers, err := placeholder.BindMarkers(s.cfg.Executor.Engine(), sql)
	if err != nil {
		return placeholderError(err)
	}
	if len(markers) > 0 {
		m := markers[0]
		return invalidf(CodeInvalidInput, "query", "Query contains a bind marker '%s' at line %d, column %d; use {variables.<code_name>} instead", m.Text, m.Line, m.Column)
	}
	return nil
}

// normalizeRefs keys every variable reference by its canonical id. A key and
// its variableId must name the same variable (either may be left out of the
// reference). Ids that are not UUIDs are reported together, sorted.
func normalizeRefs(in map[string]VariableRef) (map[string]VariableRef, []string, error) {
	out := make(map[string]VariableRef, len(in))
	var invalid []string
	for key, ref := range in {
		id, err := uuid.Parse(key)
		if err != nil {
			invalid = append(invalid, key)
			continue
		}
		canon := id.String()
		if ref.VariableID != "" {
			rid, err := uuid.Parse(ref.VariableID)
			if err != nil {
				invalid = append(invalid, ref.VariableID)
				continue
			}
			if rid.String() != canon {
				return nil, nil, invalidf(CodeInvalidVariableID, "query.variables", "Variable key %s does not match its variableId %s.", key, ref.VariableID)
			}
		}
		if _, dup := out[canon]; dup {
			return nil, nil, invalidf(CodeInvalidVariableID, "query.variables", "Variable %s is listed twice.", canon)
		}
		ref.VariableID = canon
		out[canon] = ref
	}
	if len(invalid) > 0 {
		return nil, nil, invalidf(CodeInvalidVariableID, "query.variables", "Variable ID(s) not valid UUIDs: %s", joinSorted(invalid))
	}
	ids := make([]string, 0, len(out))
	for id := range out {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return out, ids, nil
}

// lookupVariables fetches the variables with ids from the project; unknown
// ones are reported together.
func (s *Service) lookupVariables(ctx context.Context, project string, ids []string) (map[string]variable.Variable, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	ids, own := splitAdHoc(ctx, ids)
	found := map[string]variable.Variable{}
	if len(ids) > 0 {
		var err error
		if found, err = s.cfg.Variables.GetMany(ctx, project, ids); err != nil {
			return nil, storeError(err, nil)
		}
		if found == nil {
			found = map[string]variable.Variable{}
		}
	}
	for id, v := range own {
		found[id] = v
	}
	var missing []string
	for _, id := range ids {
		if _, ok := found[id]; !ok {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		return nil, invalidf(CodeVariableNotFound, "query.variables", "Variable ID(s) not found: %s. A variable must first be created in data management.", strings.Join(missing, ", "))
	}
	return found, nil
}

// checkDefined refuses placeholders without a variable of that code name.
func (c *compiled) checkDefined() error {
	var undefined []string
	for _, name := range c.tmpl.Names() {
		if _, ok := c.index[name]; !ok {
			undefined = append(undefined, name)
		}
	}
	if len(undefined) > 0 {
		return invalidf(CodeUndefinedVariable, "query", "Query references undefined variable(s): %s", joinSorted(undefined))
	}
	return nil
}

// singleStatement refuses a second statement: an endpoint runs one query.
func singleStatement(st placeholder.Statement) error {
	if st.Second >= 0 {
		return invalidf(CodeInvalidInput, "query", "Invalid query at line %d, column %d: an endpoint runs a single statement; remove the ';' and what follows it.", st.Line, st.Column)
	}
	return nil
}

func (c *compiled) isMulti(codeName string) bool {
	i, ok := c.index[codeName]
	return ok && c.vars[i].IsMulti
}

// compilePaged prepares text, the scoped query, for paging without
// touching it: the page bounds become two more placeholders, so that they
// are bound as arguments in every dialect's marker style. Their names are
// chosen not to collide with the query's own. Trailing semicolons and
// comments are dropped (a subquery cannot hold them), and the newline
// before ')' ends a "-- comment" that the body may still hold. A second
// statement is refused: an endpoint runs one query.
func (c *compiled) compilePaged(text *scope.Template) error {
	st := text.Text().Statement()
	if err := singleStatement(st); err != nil {
		return err
	}
	c.limitName, c.offsetName = freeName(c.index, "endpoint_limit"), freeName(c.index, "endpoint_offset")
	paged, _, err := c.scope.Compile(c.scope.Engine().Page(st.Body, "{variables."+c.limitName+"}", "{variables."+c.offsetName+"}"))
	if err != nil {
		// The body compiled alone, and cutting it after a token cannot
		// open a quote or comment; this is a defect, but the user gets a
		// 400 naming it rather than a panic.
		return withCause(invalidf(CodeInvalidInput, "query", "Query cannot be paged: %s", scopeError(err).Detail), err)
	}
	c.paged = paged
	if plainSelect(c.scope.Engine().Lexical(), st.Body) {
		c.direct = text
		if st.Body != text.Text().Source() {
			// The body compiled inside the wrapper, so it compiles alone.
			if c.direct, _, err = c.scope.Compile(st.Body); err != nil {
				return withCause(invalidf(CodeInvalidInput, "query", "Query cannot be paged: %s", scopeError(err).Detail), err)
			}
		}
	}
	return nil
}

// plainSelect reports whether body, one statement, may run without the
// paging wrapper: its first token, past comments as the engine reads them
// (lx), is the word SELECT, and it holds no word INTO anywhere, in strings
// and comments included. The wrapper also keeps anything but a query from
// running, since only a SELECT can be a subquery: WITH, which may lead a
// DELETE in SQLite or PostgreSQL, and SELECT ... INTO, which writes a
// table or a file on some engines, keep it; so does a comment that MySQL
// executes. The test errs on the side of the wrapper, which is only
// slower.
func plainSelect(lx engine.Lexical, body string) bool {
	var sc sqltoken.Scanner
	sc.Reset(lx, body)
	first := true
	for {
		t, ok := sc.Next()
		if !ok {
			return !first
		}
		if t.Is(sqltoken.Unclosed) || t.Why == sqltoken.ExecutableComment {
			return false
		}
		text := t.Text(body)
		switch t.Kind {
		case sqltoken.Word:
			if first && !strings.EqualFold(text, "select") || strings.EqualFold(text, "into") {
				return false
			}
		case sqltoken.Comment:
			if !first && holdsWord(text, "into") {
				return false
			}
			continue
		case sqltoken.String, sqltoken.QuotedName:
			if first || holdsWord(text, "into") {
				return false
			}
		default:
			if first {
				return false
			}
		}
		first = false
	}
}

// holdsWord reports whether word (lower case ASCII) occurs in text, a
// string literal, quoted name or comment, as a whole word in any case:
// what the engine reads as text there, a differently configured engine
// might read as code.
func holdsWord(text, word string) bool {
	for i := 0; i+len(word) <= len(text); i++ {
		if text[i]|0x20 == word[0] && strings.EqualFold(text[i:i+len(word)], word) &&
			(i == 0 || !sqltoken.IsWordByte(text[i-1])) &&
			(i+len(word) == len(text) || !sqltoken.IsWordByte(text[i+len(word)])) {
			return true
		}
	}
	return false
}

// freeName returns base, or base followed by enough '_' to be unused.
func freeName(used map[string]int, base string) string {
	for {
		if _, ok := used[base]; !ok {
			return base
		}
		base += "_"
	}
}

// placeholderError turns an error of package placeholder into a 400 that
// says where in the query the problem is.
func placeholderError(err error) *Error {
	var se *placeholder.SyntaxError
	if errors.As(err, &se) {
		return invalidf(CodeInvalidInput, "query", "Invalid query at line %d, column %d: %s", se.Line, se.Column, se.Msg)
	}
	var ve *placeholder.VariableError
	if errors.As(err, &ve) {
		return invalidf(CodeInvalidInput, "query", "Variable '%s' at line %d, column %d: %s", ve.Name, ve.Line, ve.Column, ve.Reason())
	}
	return invalidf(CodeInvalidInput, "query", "Invalid query: %s", err)
}

// joinSorted sorts names, drops repeats and joins them with ", ".
func joinSorted(names []string) string {
	names = slices.Clone(names)
	slices.Sort(names)
	return strings.Join(slices.Compact(names), ", ")
}

// tenantVariable is the placeholder that tenant scoping binds to the
// project a query runs for (see access.Confine and sql/scope). A query
// may not use it, nor any name with its prefix: the Service alone binds
// it, over anything a client sends.
const tenantVariable = scope.TenantVariable

// reservedPrefix starts every placeholder name the Service binds itself.
const reservedPrefix = variable.ReservedPrefix

// CodeQueryNotAllowed is the Code of a query that reads what its project
// may not read (a table, a catalog, a function), or that the analyzer
// cannot vouch for. The Error names the table in Table when one is at
// fault.
const CodeQueryNotAllowed = "query_not_allowed"

// rules returns what the endpoints of project may read; nil without a
// Policy (every table but the library's own and the catalogs).
func (s *Service) rules(ctx context.Context, project string) (*access.Rules, error) {
	if s.cfg.Access == nil {
		return nil, nil
	}
	r, err := s.cfg.Access.Rules(ctx, project)
	if err != nil {
		return nil, withCause(NewError(ErrExecution, CodeExecutionFailed, "", "the access policy failed"), err)
	}
	return r, nil
}

// scopeOf returns the scope of project's statements: its rules, and the
// project its tenant columns are bound to. Every statement the Service
// executes is made through one (package sql/scope).
func (s *Service) scopeOf(ctx context.Context, project string) (*scope.Scope, error) {
	rules, err := s.rules(ctx, project)
	if err != nil {
		return nil, err
	}
	return scope.New(rules, project, s.cfg.Executor.Engine()), nil
}

// scopeError words a failure of scoping: a refusal of the rules (see
// accessError), or a query the rewrite left unreadable.
func scopeError(err error) *Error {
	var ae *access.Error
	if errors.As(err, &ae) || !isPlaceholderError(err) {
		return accessError(err)
	}
	return withCause(invalidf(CodeQueryNotAllowed, "query", "Query cannot be scoped: %s", placeholderError(err).Detail), err)
}

// isPlaceholderError reports whether err is package placeholder's.
func isPlaceholderError(err error) bool {
	var se *placeholder.SyntaxError
	var ve *placeholder.VariableError
	return errors.As(err, &se) || errors.As(err, &ve)
}

// accessError words a refusal of package access as a 400 naming what was
// refused and where (Line, Column); a fault of the host's rules is a 502.
// A query the analyzer cannot read is a syntax error (query_error); a
// table, catalog or function the project may not read, or a text engines
// read differently, is query_not_allowed. The words are the user's: no
// package prefix (access.Error's text has one, for Go callers).
func accessError(err error) *Error {
	var ae *access.Error
	if !errors.As(err, &ae) {
		return withCause(NewError(ErrExecution, CodeExecutionFailed, "", "the access policy is invalid"), err)
	}
	var e *Error
	switch ae.Reason {
	case access.ReasonUnsupported:
		e = invalidf(CodeQueryError, "query.query", "Syntax error at line %d, column %d: %s.", ae.Line, ae.Column, ae.Detail)
	case access.ReasonTable:
		e = invalidf(CodeQueryNotAllowed, "query.query", "Table '%s' at line %d, column %d does not exist or cannot be read by this project's endpoints.", ae.Table, ae.Line, ae.Column)
	case access.ReasonColumn:
		e = invalidf(CodeQueryNotAllowed, "query", "Query not allowed: %s.", ae.Detail)
	default:
		e = invalidf(CodeQueryNotAllowed, "query.query", "Query not allowed at line %d, column %d: %s.", ae.Line, ae.Column, ae.Detail)
	}
	e.Table = ae.Table
	e.Line, e.Column = ae.Line, ae.Column
	return withCause(e, err)
}

// refusal is scopeError of err, a failure to scope a query of project,
// with the hint a refused table needs: the tables the project's endpoints
// can read, or those nearest to the name refused.
func (s *Service) refusal(ctx context.Context, project string, err error) *Error {
	e := scopeError(err)
	var ae *access.Error
	if !errors.As(err, &ae) || ae.Reason != access.ReasonTable {
		return e
	}
	tables := s.listedTables(ctx, project)
	if len(tables) == 0 {
		e.Detail += " This project's endpoints can read no table."
		return e
	}
	e.Detail += " " + upperFirst(suggest(lastPart(ae.Table), tables, "tables that can be read"))
	return e
}

// upperFirst is s with its first letter in upper case.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// checkReserved refuses a placeholder the Service binds itself.
func checkReserved(names []string) error {
	for _, n := range names {
		if strings.HasPrefix(n, reservedPrefix) {
			return invalidf(CodeInvalidInput, "query", "Variable name '%s' is reserved: names starting with %s are bound by the library.", cut(n), reservedPrefix)
		}
	}
	return nil
}

// checkQuery asks the engine to describe c, a compiled query of project
// about to be saved, without reading its rows: the scoped, paged statement
// a run executes, with LIMIT 0 and each variable bound to a value of its
// type (describe). Every engine resolves the query's names and types to
// answer it (SQLite and MySQL prepare it, PostgreSQL plans it, ClickHouse
// analyzes it), so a query it cannot run is refused here, before anything
// is saved. It returns the columns and types the engine described (nil
// for an insight query, whose SQL the library writes).
//
// A refusal of the engine about the query's text (a name, a type, its
// syntax) is a 400 query_error (explainFault words it). One about a value
// (a division by zero or a text that does not parse as a date, which an
// engine meets when it folds constants, the check's values among them) is
// not: the query is saved, and the run that meets the value answers it.
//
// A refusal of the engine is a 400 query_error (explainFault words it). A
// failure of the database that says nothing of the query (it could not be
// reached, it timed out) is not the author's error: it is a 502 (504 for
// a timeout) saying that the query could not be checked and nothing was
// saved, for the caller to retry; the Service saves no query it has not
// checked.
func (s *Service) checkQuery(ctx context.Context, project, name string, c *compiled) (*driver.Result, string, error) {
	if c.insight != nil {
		return nil, "", nil
	}
	res, err := s.describe(ctx, nil, c)
	if err == nil {
		return res, "", nil
	}
	var e *Error
	if !errors.As(err, &e) {
		return nil, "", err
	}
	switch e.Code {
	case CodeQueryError:
		var qe *driver.QueryError
		if errors.As(err, &qe) && valueFault(qe.Message) {
			// The engine resolved every name and type and then failed on
			// a value (a constant it folded, with the values the check
			// binds): a run, with its own values, may not. The query is
			// saved, as it was before the check; said to the caller, the
			// log and the metrics.
			s.observeSaveCheck(ctx, SaveCheckEvent{Project: project, Endpoint: name, Err: err})
			return nil, fmt.Sprintf("The database could not check the query with sample values of its variables (%s); it was saved, and a run whose values meet the same fault will answer it.", qe.Message), nil
		}
		return nil, "", s.explainFault(ctx, c.scope, c.query.SQL, err)
	case CodeTimeout:
		out := *e
		out.Detail = fmt.Sprintf("The database did not describe the query in time (%s); nothing was saved: retry, or simplify the query.", e.Detail)
		return nil, "", &out
	case CodeExecutionFailed:
		var qe *driver.QueryError
		if errors.As(err, &qe) {
			// queryFault hid a message that names the library's own
			// tables or the tenant's variable: still the query's fault.
			return nil, "", withCause(invalidf(CodeQueryError, "query.query",
				"The database refused the query; its message is not shown because it names what the library adds to the query."), err)
		}
		out := *e
		out.Detail = "The database could not be reached to check the query; nothing was saved: retry."
		return nil, "", &out
	}
	return nil, "", err
}

// valueFaultWords match the engines' messages about a value rather than
// the query's text: PostgreSQL's SQLSTATE class 22 (division by zero,
// invalid input syntax for a type, out of range), ClickHouse's parse and
// division errors, MySQL's incorrect values.
var valueFaultWords = regexp.MustCompile(`(?i)division by zero|cannot parse|invalid input syntax for|out of range|incorrect \w+ value|value too long`)

// valueFault reports whether an engine's message is about a value.
func valueFault(msg string) bool { return valueFaultWords.MatchString(msg) }

// recordColumns sets the columns and types of v, a SQL version about to
// be saved, to res, the engine's description of c made by the check at
// save (checkQuery, a run with LIMIT 0 that reads no row), and keeps them
// with c for its runs. A nil res (an insight, or a check that the engine
// failed on a value) leaves them unset: the version is described again at
// its first run (see versionShape).
func (s *Service) recordColumns(c *compiled, v *driver.Version, res *driver.Result) {
	if c == nil || c.insight != nil || res == nil {
		return
	}
	v.Columns, v.Types = nonNil(res.Columns), s.describedTypes(c, nonNil(res.Types))
	c.shape.p.Store(newShape(s.engine(), v.Columns, v.Types))
}

// ColumnsChangedError is a refresh refused because the engine now
// describes the query of the endpoint's version with other columns, or
// other types, than the version was saved with (a table or view it reads
// was changed since): the stored table would answer in another shape
// than the version's inline runs. The refresh fails, the last good table
// stays, and the endpoint's materialization state says why; saving the
// endpoint again makes a version of the new shape.
type ColumnsChangedError struct {
	// Version is the endpoint's version.
	Version int
	// SavedColumns and SavedTypes are the version's, as saved; Columns and
	// Types the engine's description of its query now.
	SavedColumns, SavedTypes, Columns, Types []string
}

// Error names the first column that differs.
func (e *ColumnsChangedError) Error() string {
	col := func(cols, types []string, i int) string {
		if types[i] == "" {
			return cols[i]
		}
		return cols[i] + " " + types[i]
	}
	if len(e.Columns) != len(e.SavedColumns) {
		return fmt.Sprintf("the query now answers %d columns (%s) where version %d was saved with %d (%s); save the endpoint again to keep the new columns",
			len(e.Columns), strings.Join(e.Columns, ", "), e.Version, len(e.SavedColumns), strings.Join(e.SavedColumns, ", "))
	}
	for i := range e.Columns {
		if e.Columns[i] != e.SavedColumns[i] || e.Types[i] != e.SavedTypes[i] {
			return fmt.Sprintf("column %d of the query is now %s where version %d was saved with %s; save the endpoint again to keep the new columns",
				i+1, col(e.Columns, e.Types, i), e.Version, col(e.SavedColumns, e.SavedTypes, i))
		}
	}
	return fmt.Sprintf("the columns of version %d changed", e.Version)
}

// checkColumns describes the query of e's current version, compiled as c,
// again, as a refresh starts, and refuses (ColumnsChangedError) a
// description whose columns differ from the version's in number or name,
// or whose types differ where both name one (SQLite names none for an
// expression). An insight, or a query the engine cannot describe, is left
// to the build, which says why it fails.
func (s *Service) checkColumns(ctx context.Context, e *driver.Endpoint, c *compiled) error {
	if c.insight != nil {
		return nil
	}
	sh := s.versionShape(ctx, e, c, e.CurrentVersion)
	if sh == nil {
		return nil
	}
	res, err := s.describe(ctx, e, c)
	if err != nil {
		return nil
	}
	cols, types := nonNil(res.Columns), nonNil(res.Types)
	if len(types) != len(cols) {
		types = make([]string, len(cols))
	}
	changed := len(cols) != len(sh.columns)
	for i := 0; !changed && i < len(cols); i++ {
		changed = cols[i] != sh.columns[i] || types[i] != "" && sh.types[i] != "" && types[i] != sh.types[i]
	}
	if !changed {
		return nil
	}
	return &ColumnsChangedError{Version: e.CurrentVersion, SavedColumns: slices.Clone(sh.columns), SavedTypes: slices.Clone(sh.types),
		Columns: cols, Types: types}
}

// compileInsight checks an insight query (KindTrends, KindRetention,
// KindLifecycle): it is
// decoded once, here, and the decoded form is cached with the version, so
// that a run never decodes again. The query is also compiled once against
// the Service's clock, so that a saved date range that can never run (from
// after to, too many intervals) is refused now rather than on every run.
// The endpoint keeps the JSON as it was sent (compacted), not a
// re-encoding, so that a client reads back exactly what it saved.
func (s *Service) compileInsight(ctx context.Context, project string, q driver.Query) (*compiled, error) {
	if len(bytes.TrimSpace(q.Insight)) == 0 {
		return nil, invalidf(CodeInvalidInput, "query", "Query of kind '%s' holds no insight JSON.", q.Kind)
	}
	if err := s.checkLength(len(q.Insight)); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, q.Insight); err != nil {
		return nil, invalidf(CodeInvalidInput, "query", "Query is not valid JSON.")
	}
	iq, err := insight.Decode(buf.Bytes())
	if err != nil {
		return nil, s.insightQueryError(err)
	}
	if err := s.checkBreakdownLimit(iq); err != nil {
		return nil, err
	}
	if string(iq.Kind) != q.Kind {
		return nil, invalidf(CodeInvalidInput, "query.kind", "Query kind '%s' does not match its insight JSON, which is a %s.", q.Kind, iq.Kind)
	}
	sc, err := s.scopeOf(ctx, project)
	if err != nil {
		return nil, err
	}
	if iq.Tenant, err = sc.Tenant(); err != nil {
		return nil, accessError(err)
	}
	if _, err := insight.Compile(iq, s.cfg.Executor.Engine(), s.now()); err != nil {
		return nil, s.insightQueryError(err)
	}
	return &compiled{query: driver.Query{Kind: q.Kind, Insight: buf.Bytes()}, insight: iq, scope: sc}, nil
}

// breakdownLimitField is the JSON path of a trends query's breakdown
// limit, as insight.Error names it.
const breakdownLimitField = "breakdownFilter.breakdown_limit"

// checkBreakdownLimit gives a decoded trends query that names no
// breakdown_limit the Service's default, and refuses one above
// Config.MaxBreakdownLimit with a 400 naming the field and the limit. The
// decoded form is what runs and what a materialized read limits with, so
// a changed default applies to both alike.
func (s *Service) checkBreakdownLimit(iq *insight.Query) error {
	if iq.Kind != insight.Trends {
		return nil
	}
	if iq.BreakdownLimit == 0 {
		iq.BreakdownLimit = s.cfg.DefaultBreakdownLimit
	}
	if iq.BreakdownLimit > s.cfg.MaxBreakdownLimit {
		return s.breakdownLimitError(fmt.Sprintf("%d is more than the maximum", iq.BreakdownLimit), nil)
	}
	return nil
}

// breakdownLimitError is the 400 of a breakdown_limit out of range: its
// detail names the field and the most this Service allows, and it carries
// LimitMaxBreakdownLimit.
func (s *Service) breakdownLimitError(reason string, cause error) *Error {
	e := limited(invalidf(CodeInvalidInput, "query."+breakdownLimitField,
		"Invalid insight query: %s: %s; breakdown_limit may be 1 to %d (max_breakdown_limit).", breakdownLimitField, reason, s.cfg.MaxBreakdownLimit),
		LimitMaxBreakdownLimit, int64(s.cfg.MaxBreakdownLimit))
	if cause != nil {
		return withCause(e, cause)
	}
	return e
}

// insightQueryError is the package's insightQueryError, except that a
// refused breakdown_limit also names the maximum, as one above it does.
func (s *Service) insightQueryError(err error) *Error {
	var ie *insight.Error
	if errors.As(err, &ie) && ie.Field == breakdownLimitField {
		return s.breakdownLimitError(ie.Reason, err)
	}
	return insightQueryError(err)
}

// insightQueryError turns a refusal of a saved insight query into a 400
// whose attr points at the offending field ("query.series[0].math").
func insightQueryError(err error) *Error {
	var ie *insight.Error
	if errors.As(err, &ie) {
		attr := "query"
		if ie.Field != "" {
			attr += "." + ie.Field
		}
		reason := ie.Reason
		if ie.Field != "" {
			reason = ie.Field + ": " + reason
		}
		return withCause(invalidf(CodeInvalidInput, attr, "Invalid insight query: %s", reason), err)
	}
	return withCause(invalidf(CodeInvalidInput, "query", "Invalid insight query: %s", err), err)
}

// insightRunError turns a refusal of a run's values into a 400. An
// *insight.Error at run time comes from the date range the values made
// (date_from not before date_to, too many intervals), so it concerns the
// variables too.
func insightRunError(err error) *Error {
	var (
		uv *insight.UnknownVariablesError
		ve *insight.ValueError
		ie *insight.Error
	)
	switch {
	case errors.As(err, &uv):
		attr := "variables"
		if len(uv.Keys) > 0 {
			attr = variableAttr(uv.Keys[0])
		}
		return withCause(invalidf(CodeUnknownVariable, attr, "%s", uv.Error()), err)
	case errors.As(err, &ve):
		e := invalidf(CodeInvalidVariableValue, variableAttr(ve.Variable), "%s", ve.Error())
		e.Variable = ve.Variable
		return withCause(e, err)
	case errors.As(err, &ie):
		return withCause(invalidf(CodeInvalidVariableValue, "variables", "Invalid date range for this run: %s", ie.Reason), err)
	}
	return insightQueryError(err)
}

// listedTables are the tables the access policy lists for project, sorted;
// nil without a Policy or when it fails (the hint is then left out).
func (s *Service) listedTables(ctx context.Context, project string) []string {
	rules, err := s.rules(ctx, project)
	if err != nil || rules == nil {
		return nil
	}
	out := make([]string, 0, len(rules.Tables))
	for _, t := range rules.Tables {
		out = append(out, t.Name)
	}
	slices.Sort(out)
	return out
}
