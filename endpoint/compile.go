package endpoint

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/endpointkit/endpointkit/internal/apierror"
	"github.com/endpointkit/endpointkit/sql/scope"
	"github.com/endpointkit/endpointkit/sql/sqltoken"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/insight"
	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/sql/engine"
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
	// insight is the decoded query of an insight kind (see insight.go).
	insight *insight.Query
	// verdicts memoizes materialization analyses (see materialized.go).
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
