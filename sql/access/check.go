package access

import (
	"errors"
	"fmt"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/tree"
)

// Check reports whether query may run under rules: nil, or the *Error that
// refuses it (a plain error when rules themselves are malformed). See the
// package documentation for what is checked.
//
// Check does not apply Table.Columns nor Table.TenantColumn: only the SQL
// that Confine returns is restricted to them.
func Check(query string, rules *Rules) error {
	_, err := checkQuery(query, rules, nil)
	return err
}

// CheckFor is Check for a query that runs on an engine whose rules lx
// holds. Where no setting of that engine changes how it reads a string
// literal (engine.Lexical.FixedEscapes: SQLite, ClickHouse), a literal is
// read as the engine reads it, so that 'C:\' is accepted on SQLite;
// everything else is refused where engines disagree, as Check does.
func CheckFor(lx engine.Lexical, query string, rules *Rules) error {
	_, err := checkQuery(query, rules, &lx)
	return err
}

// Query is a query Check accepted, with the tree package sql/tree read it
// into: Confine prints that tree, so that a query checked and then
// confined (as a save does) is read once. A Query is not safe for
// concurrent use.
type Query struct {
	rs   *ruleset
	tree *tree.Tree
}

// CheckQuery is Check returning the query it accepted, to confine or read
// further.
func CheckQuery(query string, rules *Rules) (*Query, error) {
	return checkQuery(query, rules, nil)
}

// CheckQueryFor is CheckFor returning the query it accepted.
func CheckQueryFor(lx engine.Lexical, query string, rules *Rules) (*Query, error) {
	return checkQuery(query, rules, &lx)
}

// Tree returns the query's tree. The caller may read it; Confine binds its
// table references to the rules' tables each time it prints.
func (q *Query) Tree() *tree.Tree { return q.tree }

func checkQuery(query string, rules *Rules, lx *engine.Lexical) (*Query, error) {
	rs, err := compileRules(rules)
	if err != nil {
		return nil, err
	}
	t, e := read(query, rs, lx)
	if e != nil {
		return nil, e
	}
	return &Query{rs: rs, tree: t}, nil
}

// read checks query and returns its tree, or the *Error that refuses it:
// first the text (what engines would tokenize differently, lexCheck), then
// its grammar (package sql/tree's parser), then what the tree reads
// (walkTree).
func read(query string, rs *ruleset, lx *engine.Lexical) (*tree.Tree, *Error) {
	if e := lexCheck(lx, query); e != nil {
		return nil, e
	}
	reading, _ := readingFor(lx)
	t, err := tree.ParseLexical(reading, query)
	if err != nil {
		return nil, unreadable(query, rs, lx, err)
	}
	if e := walkTree(t, rs); e != nil {
		return nil, e
	}
	return t, nil
}

// unreadable words the error of a query package sql/tree cannot read as a
// refusal: where the text is one no engine runs, a syntax error
// (ReasonUnsupported) with the tree's words and position; where it is
// another statement than one SELECT, or a form some engine reads as one
// (INTO, FOR UPDATE, SETTINGS), ReasonStatement; a few forms engines read
// differently, ReasonAmbiguous; text the tree cannot read among the
// arguments of a table function that is not allowed (MySQL's JSON_TABLE),
// ReasonTableFunction, naming it.
func unreadable(query string, rs *ruleset, lx *engine.Lexical, err error) *Error {
	var te *tree.Error
	if !errors.As(err, &te) {
		return errorAt(query, 0, ReasonUnsupported, "the query cannot be read: %v", err)
	}
	if errors.Is(te, tree.ErrTooDeep) {
		return errorAt(query, te.Offset, ReasonUnsupported, "%s", te.Detail)
	}
	toks, lerr := lexFor(lx, query)
	if lerr != nil {
		return lerr // lexCheck accepted the text: not reached
	}
	i := 0
	for i < len(toks)-1 && toks[i].end <= te.Offset {
		i++
	}
	t := &toks[i]
	at := func(reason Reason, format string, args ...any) *Error {
		return errorAt(query, t.start, reason, format, args...)
	}
	switch {
	case hasPrefix(te.Detail, "only one statement", "the query is empty", "a query must start with"):
		return errorAt(query, te.Offset, ReasonStatement, "%s", te.Detail)
	case t.kind == tWord && statementKeyword(t.lower) != "":
		return at(ReasonStatement, "%s", statementKeyword(t.lower))
	case t.kind == tLParen && i+1 < len(toks) && toks[i+1].kind == tWord && statementWords[toks[i+1].lower]:
		return errorAt(query, toks[i+1].start, ReasonStatement, "%s is not allowed: a query may only read", upperASCII(toks[i+1].text))
	case t.kind == tLParen && i > 0 && toks[i-1].kind == tRBracket:
		return at(ReasonAmbiguous, "'[...](' is a function call on SQLite ([name] is a quoted identifier there); it is not allowed")
	case t.kind == tString && i > 0 && (toks[i-1].isWord("from") || toks[i-1].isWord("join")):
		name := quotedContent(query[t.start:t.end])
		e := at(ReasonUnsupported, "expected a table name, found the string %q: SQLite reads it as table %q; write the name unquoted or in double quotes", echo(query[t.start:t.end]), echo(name))
		e.Table = echo(name)
		return e
	}
	if e := inTableFunction(query, rs, toks, i); e != nil {
		return e
	}
	return errorAt(query, te.Offset, ReasonUnsupported, "%s", syntaxDetail(te.Detail, query, t))
}

// syntaxDetail words the tree's detail for a user: where the tree stopped
// at a keyword, it says so first ("unexpected FROM: expected ) to close
// the ( at line 1, column 13").
func syntaxDetail(detail, query string, t *token) string {
	if t.kind != tWord {
		return detail
	}
	text := query[t.start:t.end]
	word := upperASCII(text)
	if detail == fmt.Sprintf("unexpected %q", text) {
		return "unexpected " + word
	}
	found := fmt.Sprintf(", found %q", text)
	if len(detail) > len(found) && detail[len(detail)-len(found):] == found {
		return "unexpected " + word + ": " + detail[:len(detail)-len(found)]
	}
	return detail
}

// inTableFunction returns the refusal of the table function not allowed
// whose arguments hold token i (name( after FROM, JOIN or LATERAL), or
// nil.
func inTableFunction(query string, rs *ruleset, toks []token, i int) *Error {
	var open []int
	for k := 0; k < i; k++ {
		switch toks[k].kind {
		case tLParen:
			open = append(open, k)
		case tRParen:
			if n := len(open); n > 0 {
				open = open[:n-1]
			}
		}
	}
	for n := len(open) - 1; n >= 0; n-- {
		j := open[n]
		if j < 2 || !toks[j-1].isName() {
			continue
		}
		if b := &toks[j-2]; !b.isWord("from") && !b.isWord("join") && !b.isWord("lateral") {
			continue
		}
		name := &toks[j-1]
		if rs.tableFunctionAllowed(name.text) {
			return nil
		}
		e := errorAt(query, name.start, ReasonTableFunction, "the query reads from table function %q, which is not allowed", echo(name.text))
		e.Function = echo(name.text)
		return e
	}
	return nil
}

// statementKeyword returns why the keyword w, where the tree could not
// read it, is refused as a statement's: "" when it is not one.
func statementKeyword(w string) string {
	switch w {
	case "into":
		return "SELECT ... INTO is not allowed: a query may only read"
	case "for":
		return "FOR (FOR UPDATE, FOR SHARE, ...) is not allowed: a query may only read"
	case "settings", "format":
		return fmt.Sprintf("%s is not allowed: a query may not change the engine's settings or output", upperASCII(w))
	case "table":
		return "TABLE <name> is not allowed; write SELECT ... FROM <name>"
	}
	if statementWords[w] {
		return fmt.Sprintf("%s is not allowed: a query may only read", upperASCII(w))
	}
	return ""
}

func hasPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if len(s) >= len(p) && s[:len(p)] == p {
			return true
		}
	}
	return false
}

// upperASCII returns s with ASCII letters in upper case.
func upperASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// quotedContent returns a string literal's content, doubled quotes made
// single, as SQLite reads it where a name belongs.
func quotedContent(lit string) string {
	if len(lit) < 2 {
		return lit
	}
	q := lit[0]
	out := make([]byte, 0, len(lit)-2)
	for i := 1; i < len(lit)-1; i++ {
		out = append(out, lit[i])
		if lit[i] == q && i+1 < len(lit)-1 && lit[i+1] == q {
			i++
		}
	}
	return string(out)
}
