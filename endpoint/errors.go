package endpoint

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/internal/apierror"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/scope"
	"github.com/endpointkit/endpointkit/sql/sqltoken"
	"github.com/endpointkit/endpointkit/variable"
)

// Sentinel errors, compared with errors.Is. Every *Error wraps one of them.
var (
	ErrInvalid      = apierror.ErrInvalid
	ErrNotFound     = driver.ErrNotFound
	ErrConflict     = driver.ErrConflict
	ErrUnauthorized = apierror.ErrUnauthorized
	ErrForbidden    = apierror.ErrForbidden
	// ErrExecution is an executor failure; its detail leaks no internals.
	ErrExecution = apierror.ErrExecution
	// ErrTimeout is an executor that ran out of time.
	ErrTimeout = apierror.ErrTimeout
)

// Stable error codes, the Code of an *Error. Clients may switch on them; the
// Detail text is for humans and may be reworded.
const (
	CodeInvalidInput            = apierror.CodeInvalidInput
	CodeNotFound                = apierror.CodeNotFound
	CodeConflict                = "conflict"
	CodeUnauthorized            = apierror.CodeUnauthorized
	CodeForbidden               = apierror.CodeForbidden
	CodeRequiredVariableMissing = "required_variable_missing"
	CodeUnknownVariable         = "unknown_variable"
	CodeInvalidVariableValue    = "invalid_variable_value"
	CodeUndefinedVariable       = "undefined_variable"
	CodeInvalidVariableID       = "invalid_variable_id"
	CodeVariableNotFound        = "variable_not_found"
	CodeVariableInUse           = "variable_in_use"
	CodeUnsupportedQuery        = apierror.CodeUnsupportedQuery
	CodeCannotMaterialize       = "cannot_materialize"
	CodeMaterializationFailed   = "materialization_failed"
	CodeExecutionFailed         = apierror.CodeExecutionFailed
	CodeTimeout                 = apierror.CodeTimeout
	// CodeResultTooLarge is a run whose rows weigh more than
	// Config.MaxResultBytes.
	CodeResultTooLarge = "result_too_large"
	// CodeQueryTooLarge is a query refused at save for its length
	// (Config.MaxQueryLength) or its placeholders (Config.MaxPlaceholders).
	CodeQueryTooLarge = "query_too_large"
	// CodeThrottled is the Code of a run refused by a budget (429): an
	// API key's, an embed token's or the project's.
	CodeThrottled = apierror.CodeThrottled
	// CodeBudgetUnavailable is the Code of a run refused because its
	// budget could not be counted: the counter store failed (503).
	CodeBudgetUnavailable = apierror.CodeBudgetUnavailable
)

// The limits an *Error names in its Limit field, each a Config setting.
// LimitValue is the setting in the limit's unit: milliseconds for times,
// rows, bytes or placeholders otherwise.
const (
	LimitRunTimeout          = "run_timeout"
	LimitMaxLimit            = "max_limit"
	LimitMaxResultBytes      = "max_result_bytes"
	LimitMaxQueryLength      = "max_query_length"
	LimitMaxPlaceholders     = "max_placeholders"
	LimitRefreshTimeout      = "refresh_timeout"
	LimitMaxMaterializedRows = "max_materialized_rows"
	// LimitMaxBreakdownLimit is Config.MaxBreakdownLimit, in breakdown
	// values.
	LimitMaxBreakdownLimit = "max_breakdown_limit"
)

// Error is the one error type callers of the Service see, *Error in an
// errors.As. Status is the HTTP status it maps to (see StatusOf), Code a
// stable machine-readable code (the Code constants), Detail the message for
// humans, and Attr the request field it concerns, if any. Where they apply,
// Variable, Type and Value name the variable concerned, its type and the
// value received (cut to 200 characters), Table a table a query may not
// read, and Limit and LimitValue the limit that was hit (the Limit
// constants) and its setting. Err is the sentinel (ErrInvalid, ErrNotFound,
// ...) or a cause wrapping it, for errors.Is.
//
// The decoding of a Query or a Seconds from JSON returns it too.
type Error = apierror.Error

// statusOf maps sentinels to HTTP statuses.
var statusOf = map[error]int{
	ErrInvalid:      http.StatusBadRequest,
	ErrNotFound:     http.StatusNotFound,
	ErrConflict:     http.StatusConflict,
	ErrUnauthorized: http.StatusUnauthorized,
	ErrForbidden:    http.StatusForbidden,
	ErrExecution:    http.StatusBadGateway,
	ErrTimeout:      http.StatusGatewayTimeout,
}

// StatusOf is the one place an error's HTTP status is decided: the Status
// an *Error carries, else that of the sentinel it wraps; 500 for anything
// else, which the Service itself never returns.
func StatusOf(err error) int {
	var e *Error
	if errors.As(err, &e) && e.Status != 0 {
		return e.Status
	}
	for sentinel, status := range statusOf {
		if errors.Is(err, sentinel) {
			return status
		}
	}
	return http.StatusInternalServerError
}

// NewError returns an *Error wrapping sentinel, one of the package's Err
// values, with the HTTP status that sentinel maps to (see StatusOf).
func NewError(sentinel error, code, attr, detail string) *Error {
	return &Error{Status: StatusOf(sentinel), Code: code, Detail: detail, Attr: attr, Err: sentinel}
}

// maxEcho is the most characters of a client's input an error detail
// repeats; longer input is cut with "...".
const maxEcho = apierror.MaxEcho

// cut shortens a client's input for an error detail (see maxEcho), on a
// character boundary.
func cut(s string) string { return apierror.Cut(s) }

// limited marks e as the refusal of limit, whose setting is value.
func limited(e *Error, limit string, value int64) *Error {
	e.Limit, e.LimitValue = limit, value
	return e
}

// invalidf is the common 400.
func invalidf(code, attr, format string, args ...any) *Error {
	return NewError(ErrInvalid, code, attr, fmt.Sprintf(format, args...))
}

// notFoundf is the common 404.
func notFoundf(format string, args ...any) *Error {
	return NewError(ErrNotFound, CodeNotFound, "", fmt.Sprintf(format, args...))
}

// conflictf is the common 409.
func conflictf(code, attr, format string, args ...any) *Error {
	return NewError(ErrConflict, code, attr, fmt.Sprintf(format, args...))
}

// required is the answer to a missing mandatory field, worded as the
// reference system words it.
func required(attr string) *Error {
	return NewError(ErrInvalid, CodeInvalidInput, attr, "This field is required.")
}

// withCause keeps cause reachable through errors.Is and errors.As (a host may
// log it) while callers see only e's detail.
func withCause(e *Error, cause error) *Error { return apierror.WithCause(e, cause) }

// storeError turns an error of a Store into an *Error. Stores return
// sentinels (possibly wrapped); anything else is a failing backend, which
// callers see as a generic 502 so that no internals leak.
func storeError(err error, notFound func() *Error) error { return apierror.StoreError(err, notFound) }

// argFault returns the 400 of a run whose executor could not hold one of
// its bound values as the type the engine gave its marker (a
// *driver.ArgError: PostgreSQL binds a number compared with an integer
// expression as int4), naming the variable whose value it is, so that a
// value out of an engine's range answers as any other bad value does; nil
// for any other error. The variable is found by its value among values,
// those the run bound.
func argFault(err error, st scope.Statement, c *compiled, values map[string]any) *Error {
	var ae *driver.ArgError
	if err == nil || !errors.As(err, &ae) || ae.Index < 0 || ae.Index >= len(st.Args()) {
		return nil
	}
	arg := st.Args()[ae.Index]
	typ := "its type"
	if ae.Type != "" {
		typ = ae.Type
	}
	for i := range c.vars {
		v := &c.vars[i]
		if !holds(values[v.CodeName], arg) {
			continue
		}
		e := invalidf(CodeInvalidVariableValue, variableAttr(v.CodeName),
			"Invalid value for variable '%s': the database cannot hold %v as the type it compares it with (%s); cast the expression in the query to a wider type (for example ::bigint or ::float8)",
			v.CodeName, arg, typ)
		e.Variable, e.Type, e.Value = v.CodeName, string(v.Type), fmt.Sprint(arg)
		return withCause(e, err)
	}
	return withCause(invalidf(CodeInvalidVariableValue, "variables",
		"Invalid value: the database cannot hold the bound value %v as the type it compares it with (%s)", arg, typ), err)
}

// holds reports whether arg is val, or one of the elements of val when it
// is a list.
func holds(val, arg any) bool {
	if val == nil {
		return false
	}
	rv := reflect.ValueOf(val)
	if rv.Kind() == reflect.Slice {
		for i := range rv.Len() {
			if same(rv.Index(i).Interface(), arg) {
				return true
			}
		}
		return false
	}
	return same(val, arg)
}

// same compares two bound scalars, numbers by value whatever their Go
// type.
func same(a, b any) bool {
	ra, rb := reflect.ValueOf(a), reflect.ValueOf(b)
	if ra.Comparable() && rb.Comparable() && ra.Type() == rb.Type() {
		return a == b
	}
	return fmt.Sprint(a) == fmt.Sprint(b) && numeric(ra.Kind()) && numeric(rb.Kind())
}

func numeric(k reflect.Kind) bool {
	return k >= reflect.Int && k <= reflect.Float64
}

// CodeQueryError is a query the engine refused or failed because of the
// query itself (a syntax error, an unknown column, table or function, a
// type mismatch, a division by zero): a 400 whose detail is the engine's
// message, with where it is in the query and, for an unknown name, the
// nearest names that exist. Create and Update check every SQL query with
// the engine before saving it (checkQuery), so a saved query that fails so
// fails for its data (a division by zero), not for its text.
const CodeQueryError = "query_error"

// queryFault returns the 400 of a run whose executor said the query is at
// fault (a *driver.QueryError), nil for any other error. A message that
// names the library's own tables or the tenant scope's variable is never
// shown: such a run stays a 502 whose cause is only logged.
func queryFault(err error) *Error {
	if err == nil {
		return nil // before qe, which escapes: a run that succeeds allocates nothing here
	}
	var qe *driver.QueryError
	if !errors.As(err, &qe) || qe.Message == "" || internalName(qe.Message) {
		return nil
	}
	return withCause(invalidf(CodeQueryError, "", "The database refused the query: %s", cleanMessage(qe.Message)), err)
}

// internalName reports whether msg names something of the library's own
// that a query's author must not see: its tables (endpointkit_...) or the
// variable that binds the tenant (variable.ReservedPrefix).
func internalName(msg string) bool {
	lower := strings.ToLower(msg)
	return strings.Contains(lower, "endpointkit_") || strings.Contains(lower, strings.ToLower(variable.ReservedPrefix))
}

// wrapperTail matches where an engine's message starts quoting the text
// the Service wrapped around the user's query (the paging subquery and
// its alias, ClickHouse's SETTINGS): what follows is not the author's.
var wrapperTail = regexp.MustCompile(`(?s)\s*\)\s*AS\s+endpoint_q\b.*$|(?s)\s*SETTINGS\s+max_execution_time\b.*$`)

// cleanMessage is an engine's message without the parts that are not the
// author's: the statement the Service wrapped around the query, which
// MySQL and ClickHouse quote in syntax errors.
func cleanMessage(msg string) string {
	near, syntax := "", false
	if m := mysqlSyntax.FindStringSubmatch(msg); m != nil {
		near, syntax = m[1], true
	} else if m := chSyntax.FindStringSubmatch(msg); m != nil {
		near, syntax = m[2], true
	}
	if syntax {
		if near = strings.TrimSpace(wrapperTail.ReplaceAllString(near, "")); near == "" {
			return "syntax error at the end of the query"
		}
		return "syntax error near '" + cut(firstLine(near)) + "'"
	}
	return strings.TrimSpace(wrapperTail.ReplaceAllString(msg, ""))
}

// What an engine's refusal is about, as explainFault reads it.
type faultKind int

const (
	faultOther faultKind = iota
	faultColumn
	faultTable
	faultSyntax
)

// The messages of the engines' syntax errors that quote the text from
// where the error is (MySQL and MariaDB, ClickHouse).
var (
	mysqlSyntax = regexp.MustCompile(`(?s)^You have an error in your SQL syntax; .*? near '(.*)' at line \d+$`)
	chSyntax    = regexp.MustCompile(`(?s)^Syntax error: failed at position \d+ \((.*?)\)(?: \(line \d+, col \d+\))?: (.*?)(?:\. Expected .*)?$`)
)

// faultPatterns read the messages of SQLite, PostgreSQL, MySQL/MariaDB and
// ClickHouse about an unknown column or table, and their syntax errors.
// The first group is the name (or the text the error is near).
var faultPatterns = []struct {
	re   *regexp.Regexp
	kind faultKind
}{
	{regexp.MustCompile(`^no such column: (\S+)$`), faultColumn},
	{regexp.MustCompile(`^column "?([^"]+?)"? does not exist`), faultColumn},
	{regexp.MustCompile(`^Unknown column '([^']+)' in `), faultColumn},
	{regexp.MustCompile("^Unknown expression (?:or function )?identifier `([^`]+)`"), faultColumn},
	{regexp.MustCompile(`^Identifier '([^']+)' cannot be resolved`), faultColumn},
	{regexp.MustCompile(`^Missing columns: '([^']+)'`), faultColumn},
	{regexp.MustCompile(`^no such table: (\S+)$`), faultTable},
	{regexp.MustCompile(`^relation "([^"]+)" does not exist`), faultTable},
	{regexp.MustCompile(`^Table '([^']+)' doesn't exist`), faultTable},
	{regexp.MustCompile(`^Unknown table expression identifier '([^']+)'`), faultTable},
	{regexp.MustCompile(`^Table (\S+) does(?:n't| not) exist`), faultTable},
	{regexp.MustCompile(`^near "(.*)": syntax error$`), faultSyntax},
	{regexp.MustCompile(`^syntax error at or near "(.*)"$`), faultSyntax},
	{regexp.MustCompile(`^unrecognized token: "(.*)"$`), faultSyntax},
	{regexp.MustCompile(`^(?:syntax error at end of input|incomplete input)()$`), faultSyntax},
	{mysqlSyntax, faultSyntax},
	{chSyntax, faultSyntax},
}

// readFault tells what an engine's message is about and the name (or the
// text near the error) it quotes.
func readFault(msg string) (faultKind, string) {
	for _, p := range faultPatterns {
		m := p.re.FindStringSubmatch(msg)
		if m == nil {
			continue
		}
		name := m[1]
		if p.re == chSyntax {
			name = m[2]
		}
		return p.kind, name
	}
	return faultOther, ""
}

// explainFault words the 400 of an engine's refusal of the user's SQL text
// sql (err is a query_error of queryFault): the engine's message cleaned
// of what the Service wrapped around the query, where the refused name or
// token is in sql (line and column), and for an unknown column or table
// the nearest names the project may read. sc is the query's scope, which
// Schema-like statements describing the tables are made through. Any
// other error is returned as it is.
func (s *Service) explainFault(ctx context.Context, sc *scope.Scope, sql string, err error) error {
	var e *Error
	var qe *driver.QueryError
	if !errors.As(err, &e) || e.Code != CodeQueryError || !errors.As(err, &qe) {
		return err
	}
	kind, name := readFault(qe.Message)
	out := *e
	out.Attr = "query.query"
	lx := s.cfg.Executor.Engine().Lexical()
	switch kind {
	case faultSyntax:
		near := strings.TrimSpace(wrapperTail.ReplaceAllString(name, ""))
		var where string
		switch off, n, ok := locateText(sql, near); {
		case near == "" || (near == ")" && balanced(lx, sql)):
			// The engine read past the query, into the parenthesis the
			// paging wrapper closes it with: the query ended too soon.
			out.Line, out.Column = position(sql, len(strings.TrimRight(sql, " \t\r\n;")))
			where = fmt.Sprintf("at the end of the query (line %d, column %d)", out.Line, out.Column)
		case ok:
			// Only what the user wrote is quoted: past it, the engine's
			// text is the scope's rewrite of the query.
			out.Line, out.Column = position(sql, off)
			where = fmt.Sprintf("at line %d, column %d, near '%s'", out.Line, out.Column, cut(firstLine(strings.TrimSpace(sql[off:off+n]))))
		case len(near) <= maxNear:
			// A token (SQLite, PostgreSQL) the query holds more than once.
			where = fmt.Sprintf("near '%s'", near)
		default:
			where = "somewhere the engine does not say"
		}
		out.Detail = "The database refused the query: syntax error " + where + "."
	case faultColumn, faultTable:
		bare := lastPart(name)
		if off, ok := locateName(lx, sql, name, bare); ok {
			out.Line, out.Column = position(sql, off)
			out.Detail = fmt.Sprintf("%s (line %d, column %d).", out.Detail, out.Line, out.Column)
		}
		if hint := s.nearestNames(ctx, sc, sql, kind, bare); hint != "" {
			out.Detail += " " + hint
		}
	}
	return &out
}

// nearestNames is the hint of an unknown column or table: the names that
// exist nearest to name ("did you mean event?"), or, when none is near,
// the names there are. The columns are those of the tables the query
// names, the tables those the access policy lists for the project; ""
// when the Service knows no names (no Policy lists tables). Describing a
// table reads no row; a table that cannot be described is left out.
func (s *Service) nearestNames(ctx context.Context, sc *scope.Scope, sql string, kind faultKind, name string) string {
	tables := s.listedTables(ctx, sc.Project())
	if kind == faultTable {
		if len(tables) == 0 {
			return ""
		}
		return fmt.Sprintf("There is no table %s; %s", name, suggest(name, tables, "tables that can be read"))
	}
	var read, cols []string
	for _, t := range queriedTables(s.cfg.Executor.Engine().Lexical(), sql) {
		st, err := sc.Describe(t)
		if err != nil {
			continue
		}
		res, err := s.executeCapped(ctx, st, 0)
		if err != nil {
			continue
		}
		read = append(read, t)
		for _, c := range res.Columns {
			if !slices.Contains(cols, c) {
				cols = append(cols, c)
			}
		}
	}
	if len(cols) == 0 {
		return ""
	}
	return fmt.Sprintf("There is no column %s in %s; %s", name, strings.Join(read, ", "), suggest(name, cols, "its columns are"))
}

// maxListed is how many names a hint lists when none is near.
const maxListed = 20

// suggest is "did you mean a?" (or "a or b?") for the names of have
// nearest to name, or, when none is near, what lists them all.
func suggest(name string, have []string, what string) string {
	best, near := -1, []string(nil)
	limit := max(2, utf8.RuneCountInString(name)/3)
	for _, h := range have {
		d := distance(strings.ToLower(name), strings.ToLower(h))
		switch {
		case d > limit || d >= max(utf8.RuneCountInString(name), 1):
		case best < 0 || d < best:
			best, near = d, []string{h}
		case d == best:
			near = append(near, h)
		}
	}
	if len(near) > 0 {
		return "did you mean " + strings.Join(near, " or ") + "?"
	}
	listed := have
	more := ""
	if len(listed) > maxListed {
		listed, more = listed[:maxListed], fmt.Sprintf(" and %d more", len(have)-maxListed)
	}
	return fmt.Sprintf("%s: %s%s.", what, strings.Join(listed, ", "), more)
}

// distance is the Damerau-Levenshtein distance of a and b (optimal string
// alignment: insertions, deletions, substitutions and transpositions of
// two adjacent characters, each 1), over runes.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// queriedTables are the names that follow FROM or JOIN in sql, with their
// dotted parts, in order, each once: the tables a query reads, as far as
// a hint needs them (a subquery's parenthesis is no name).
func queriedTables(lx engine.Lexical, sql string) []string {
	toks := significant(lx, sql)
	var out []string
	for i := 0; i < len(toks); i++ {
		w := strings.ToUpper(toks[i].Text(sql))
		if toks[i].Kind != sqltoken.Word || (w != "FROM" && w != "JOIN") {
			continue
		}
		name := ""
		j := i + 1
		for ; j < len(toks); j++ {
			t := toks[j]
			if t.Kind == sqltoken.Word || t.Kind == sqltoken.QuotedName {
				name += unquote(t.Text(sql))
				if j+1 < len(toks) && toks[j+1].Text(sql) == "." {
					name += "."
					j++
					continue
				}
			}
			break
		}
		if name != "" && !slices.Contains(out, name) {
			out = append(out, name)
		}
		i = j - 1
	}
	return out
}

// locateName returns the offset in sql of the first word or quoted name
// that spells name, or else its last part bare (case aside).
func locateName(lx engine.Lexical, sql, name, bare string) (int, bool) {
	toks := significant(lx, sql)
	for _, want := range []string{name, bare} {
		for i, t := range toks {
			if !strings.EqualFold(unquote(t.Text(sql)), lastPart(want)) {
				continue
			}
			// A qualified name: the parts before must precede it.
			start := t.Start
			parts := strings.Split(want, ".")
			ok := true
			for k := len(parts) - 2; k >= 0 && ok; k-- {
				dot, prev := i-2*(len(parts)-1-k)+1, i-2*(len(parts)-1-k)
				ok = prev >= 0 && toks[dot].Text(sql) == "." && strings.EqualFold(unquote(toks[prev].Text(sql)), parts[k])
				if ok {
					start = toks[prev].Start
				}
			}
			if ok {
				return start, true
			}
		}
	}
	return 0, false
}

// maxNear is the longest text of an engine's syntax error quoted when it
// cannot be found in the query: a token, never a piece of the rewrite.
const maxNear = 20

// locateText returns the offset in sql where near, the text an engine says
// its syntax error is at, starts, and how much of near is there: its
// longest prefix that sql holds exactly once (past it, near may be the
// scope's rewrite), of 6 bytes at least (a shorter one could be found by
// chance).
func locateText(sql, near string) (off, n int, ok bool) {
	if near == "" {
		return 0, 0, false
	}
	shortest := min(len(near), 6)
	for n := len(near); n >= shortest; n-- {
		if n < len(near) && !utf8.RuneStart(near[n]) {
			continue
		}
		p := near[:n]
		if i := strings.Index(sql, p); i >= 0 {
			if strings.Count(sql, p) != 1 {
				return 0, 0, false
			}
			return i, n, true
		}
	}
	return 0, 0, false
}

// balanced reports whether the parentheses of sql close as they open: a
// syntax error an engine places at a ')' of such a text is at the ')' the
// paging wrapper closes the query with (PostgreSQL says "at or near ")""
// of a query that ends too soon).
func balanced(lx engine.Lexical, sql string) bool {
	depth := 0
	for _, t := range significant(lx, sql) {
		switch t.Text(sql) {
		case "(":
			depth++
		case ")":
			if depth--; depth < 0 {
				return false
			}
		}
	}
	return depth == 0
}

// significant are the tokens of sql but its comments.
func significant(lx engine.Lexical, sql string) []sqltoken.Token {
	toks := sqltoken.Tokens(lx, sql)
	return slices.DeleteFunc(toks, func(t sqltoken.Token) bool { return t.Kind == sqltoken.Comment })
}

// unquote is a quoted name's text without its quotes ("x", `x`, [x]).
func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '`' || s[0] == '[') {
		return s[1 : len(s)-1]
	}
	return s
}

// lastPart is a dotted name's last part, without quotes.
func lastPart(name string) string {
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	return unquote(name)
}

// firstLine is s up to its first line break.
func firstLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return s[:i]
	}
	return s
}

// position returns the 1-based line and rune column of byte offset off of
// src.
func position(src string, off int) (line, col int) {
	off = min(max(off, 0), len(src))
	before := src[:off]
	line = 1 + strings.Count(before, "\n")
	if nl := strings.LastIndexByte(before, '\n'); nl >= 0 {
		before = before[nl+1:]
	}
	return line, 1 + utf8.RuneCountInString(before)
}

// variableAttr is the attr of an error about the run's variable name: the
// key of the request's "variables" that is at fault.
func variableAttr(name string) string { return "variables." + name }
