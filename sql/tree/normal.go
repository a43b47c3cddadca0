package tree

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/endpointkit/endpointkit/sql/engine"
)

// ErrUnprintable is what an *Error wraps when the normal form (Normal)
// cannot print a construct faithfully; its Detail names the construct.
var ErrUnprintable = errors.New("sql: a construct the normal form does not print")

// Normal prints nodes in the normal form of one engine: generated text,
// never the source as written, with every name quoted for the engine,
// every keyword and operator in one spelling (<> for !=, % for MOD, LIMIT
// n OFFSET m, ASC where no direction is written, AS before every alias)
// and every literal and cast type byte for byte as the tree holds it. It
// is the Printer's node walk in another mode, not a second printer: the
// statements materialization builds are assembled from its text, and its
// canonical form compares expressions.
//
// A construct it cannot print faithfully in every engine (a typed
// literal, a named window, FILTER, a join it does not know...) is an
// *Error that wraps ErrUnprintable.
type Normal struct {
	// Engine quotes the names and decides the operators it has (DIV,
	// <=>). Nil means SQLite.
	Engine engine.Engine
	// Canonical prints the form used to compare expressions: names,
	// function names and cast types in lower case, no parentheses but
	// those the operators need.
	Canonical bool
	// Hook, when set, may print an expression in place of the printer:
	// ok reports that it did, with text; an error stops the printing.
	Hook func(e Expr) (text string, ok bool, err error)
	// Src is the text the nodes were read from, to say where in an
	// error; optional.
	Src string
}

// Canonical returns the canonical text of e, for comparing expressions: two
// expressions that differ only in the case of names, function names and
// cast types, in redundant parentheses or in the spelling of an operator
// print the same. An expression the normal form cannot print returns its
// error's text after a NUL byte, which no printed expression holds.
func Canonical(e Expr) string {
	s, err := Normal{Canonical: true}.Expr(e)
	if te, ok := err.(*Error); ok {
		return "\x00" + te.Detail
	}
	return s
}

// normPrinters holds printers between normal prints: a printer escapes
// to the heap (the walk passes it through the nodes' interface methods),
// and the normal form prints many small expressions (Canonical compares
// them), each of which would allocate one.
var normPrinters = sync.Pool{New: func() any { return new(printer) }}

// printer returns a printer in the normal form, from the pool; done
// returns it there.
func (n Normal) printer() *printer {
	if n.Engine == nil {
		n.Engine = engine.SQLite
	}
	p := normPrinters.Get().(*printer)
	p.normSet = n
	p.norm = &p.normSet
	return p
}

// text returns a printer for text: most of what the normal form prints is
// a name or a short expression, written in one allocation instead of the
// builder's steps.
func (n Normal) text() *printer {
	p := n.printer()
	p.b.Grow(32)
	return p
}

// done returns what p printed, or its error, and puts p back in the pool
// clean: the text it returns is the builder's, never written again.
func (p *printer) done() (string, error) {
	s, err := p.b.String(), p.err
	*p = printer{}
	normPrinters.Put(p)
	if err != nil {
		return "", err
	}
	return s, nil
}

// Expr prints e.
func (n Normal) Expr(e Expr) (string, error) {
	if isNil(e) {
		return "", &Error{Line: 1, Column: 1, Detail: "there is nothing to print", Err: ErrSyntax}
	}
	p := n.text()
	p.print(e)
	return p.done()
}

// Statement prints a whole query.
func (n Normal) Statement(s SelectStatement) (string, error) {
	if isNil(s) {
		return "", &Error{Line: 1, Column: 1, Detail: "there is no statement to print", Err: ErrSyntax}
	}
	p := n.text()
	p.print(s)
	return p.done()
}

// From prints a FROM clause, " FROM " and its items, or "" when there are
// none or the one item is MySQL's DUAL.
func (n Normal) From(from []TableExpr) (string, error) {
	if len(from) == 0 {
		return "", nil
	}
	p := n.text()
	p.normFrom(from)
	return p.done()
}

// Limit prints a LIMIT clause, " LIMIT n OFFSET m", or "" for nil.
func (n Normal) Limit(l *Limit) (string, error) {
	if l == nil {
		return "", nil
	}
	p := n.text()
	p.normLimit(l)
	return p.done()
}

// Clauses returns the *Error that wraps ErrUnprintable for the first
// clause of s the normal form does not print (WITH, DISTINCT ON,
// PREWHERE, GROUP BY modifiers, WINDOW, QUALIFY, LIMIT BY), nil when
// there is none. Its expressions are not looked at.
func (n Normal) Clauses(s *Select) error {
	p := n.printer()
	p.checkSelect(s)
	_, err := p.done()
	return err
}

// unprintable records the first construct the normal form does not print.
func (p *printer) unprintable(n Node, format string, args ...any) {
	if p.err != nil {
		return
	}
	off := 0
	if !isNil(n) {
		off = n.Span().Start
	}
	p.err = errorAt(p.norm.Src, off, ErrUnprintable, format, args...)
}

// normIdent writes a name quoted for the engine; lower-case in the
// canonical form.
func (p *printer) normIdent(s string) {
	if p.norm.Canonical {
		s = strings.ToLower(s)
	}
	p.ws(p.norm.Engine.QuoteIdent(s))
}

// normal prints n in the normal form: the nodes whose normal spelling
// differs from the generated text of format are written here, the others
// by format, whose children come back here through print.
func (p *printer) normal(n Node) {
	if e, ok := n.(Expr); ok && p.norm.Hook != nil {
		text, ok, err := p.norm.Hook(e)
		if err != nil {
			p.err = err
			return
		}
		if ok {
			p.ws(text)
			return
		}
	}
	switch v := n.(type) {
	case *ExistsExpr:
		// The subquery is no operand of its own: the hook sees the
		// EXISTS, then what the subquery holds.
		p.ws("EXISTS ")
		p.format(v.Subquery)
	case *ColName, *CaseExpr, *When, *Subquery, *ValTuple, *ExtractExpr, *Over, *Frame, *FrameBound, *ParenTableExpr:
		p.format(n)
	case *Literal:
		p.normLiteral(v)
	case *ParenExpr:
		if p.norm.Canonical {
			p.print(v.Expr)
			return
		}
		p.format(n)
	case *AndExpr, *OrExpr, *XorExpr, *NotExpr, *ComparisonExpr, *RangeCond, *IsExpr,
		*BinaryExpr, *UnaryExpr, *IntervalExpr, *CollateExpr:
		p.normOperator(n)
	case *FuncExpr:
		p.normFunc(v)
	case *ConvertExpr:
		p.normCast(v)
	case *WindowSpec:
		if !v.Name.IsEmpty() {
			p.unprintable(v, "a named window")
			return
		}
		p.format(n)
	case *Order:
		if v.Nulls != "" || v.Fill != "" {
			p.unprintable(v, "ORDER BY ... %s", strings.TrimSpace(v.Nulls+" "+v.Fill))
			return
		}
		p.print(v.Expr)
		p.ws(" ")
		p.ws(Direction(v))
	case *Select:
		p.normSelect(v)
	case *ParenSelect:
		if v.With != nil || v.LimitBy != nil {
			p.unprintable(v, "the statement %s", nodeName(v))
			return
		}
		p.ws("(")
		p.print(v.Select)
		p.ws(")")
		p.normOrderBy(v.OrderBy)
		p.normLimit(v.Limit)
	case *Union:
		if v.With != nil || v.LimitBy != nil {
			p.unprintable(v, "the statement %s", nodeName(v))
			return
		}
		p.print(v.Left)
		p.spaced(v.Type)
		p.print(v.Right)
		p.normOrderBy(v.OrderBy)
		p.normLimit(v.Limit)
	case *TableName:
		p.tableName(*v)
	case *AliasedTableExpr:
		p.normTable(v)
	case *JoinTableExpr:
		p.normJoin(v)
	case *Placeholder:
		p.unprintable(v, "a variable here")
	case *StarExpr:
		p.unprintable(v, "a * here")
	case SelectStatement:
		p.unprintable(v, "the statement %s", nodeName(v))
	case TableExpr:
		p.unprintable(v, "the table expression %s", nodeName(v))
	default:
		p.unprintable(n, "the expression %s", nodeName(n))
	}
}

// spaced writes s with a space on each side.
func (p *printer) spaced(s string) {
	p.b.WriteByte(' ')
	p.b.WriteString(s)
	p.b.WriteByte(' ')
}

// normLiteral prints a literal: strings and numbers as written, NULL,
// TRUE and FALSE in capitals.
func (p *printer) normLiteral(v *Literal) {
	switch v.Kind {
	case NullVal, BoolVal:
		p.ws(strings.ToUpper(v.Text))
	case TypedStrVal:
		p.unprintable(v, "the typed literal %s", v.Text)
	default:
		p.ws(v.Text)
	}
}

// Operator levels of the normal form, loosest first. An operand is
// parenthesized when its own level is not tighter than its parent's: safe
// in every engine, and free of parentheses where precedence is the same
// everywhere (a comparison under AND, arithmetic under a comparison).
const (
	levelNone = iota
	levelLogical
	levelCompare
	levelArith
)

func normLevel(e Node) int {
	switch e.(type) {
	case *AndExpr, *OrExpr, *NotExpr, *XorExpr:
		return levelLogical
	case *ComparisonExpr, *RangeCond, *IsExpr:
		return levelCompare
	case *BinaryExpr, *CollateExpr, *UnaryExpr:
		return levelArith
	}
	return levelNone
}

// operand prints e where an operand of an operator of level parent stands.
func (p *printer) operand(parent int, e Expr) {
	if l := normLevel(e); l != levelNone && l <= parent {
		p.ws("(")
		p.print(e)
		p.ws(")")
		return
	}
	p.print(e)
}

// normComparisons are the comparison operators of the normal form, and
// their spelling.
var normComparisons = map[string]string{
	"=": "=", "<": "<", ">": ">", "<=": "<=", ">=": ">=", "!=": "<>", "<>": "<>", "<=>": "<=>",
	"IN": "IN", "NOT IN": "NOT IN", "LIKE": "LIKE", "NOT LIKE": "NOT LIKE", "ILIKE": "ILIKE", "NOT ILIKE": "NOT ILIKE",
	"REGEXP": "REGEXP", "NOT REGEXP": "NOT REGEXP", "RLIKE": "REGEXP", "NOT RLIKE": "NOT REGEXP",
}

// normBinary are the arithmetic, string and JSON operators of the normal
// form; the others (PostgreSQL's JSON and array operators, AT TIME ZONE,
// &&) are refused.
var normBinary = map[string]bool{
	"+": true, "-": true, "*": true, "/": true, "%": true, "DIV": true, "MOD": true,
	"&": true, "|": true, "^": true, "<<": true, ">>": true, "->": true, "->>": true, "||": true,
}

// normOperator prints an operator expression, parenthesizing its operands
// by level.
func (p *printer) normOperator(n Node) {
	switch e := n.(type) {
	case *AndExpr:
		// Chains of AND need no parentheses.
		p.andOperand(e.Left)
		p.ws(" AND ")
		p.andOperand(e.Right)
	case *OrExpr:
		p.operand(levelLogical, e.Left)
		p.ws(" OR ")
		p.operand(levelLogical, e.Right)
	case *XorExpr:
		p.operand(levelLogical, e.Left)
		p.ws(" XOR ")
		p.operand(levelLogical, e.Right)
	case *NotExpr:
		p.ws("NOT ")
		p.operand(levelLogical, e.Expr)
	case *ComparisonExpr:
		p.normComparison(e)
	case *RangeCond:
		p.operand(levelCompare, e.Left)
		p.spaced(e.Operator)
		p.operand(levelCompare, e.From)
		p.ws(" AND ")
		p.operand(levelCompare, e.To)
	case *IsExpr:
		switch e.Operator {
		case "IS NULL", "IS NOT NULL", "IS TRUE", "IS NOT TRUE", "IS FALSE", "IS NOT FALSE":
		default:
			p.unprintable(e, "the operator %s", e.Operator)
			return
		}
		p.operand(levelCompare, e.Expr)
		p.ws(" ")
		p.ws(e.Operator)
	case *BinaryExpr:
		switch {
		case e.Operator == "DIV" && !p.norm.Engine.Lexical().IntDiv:
			p.unprintable(e, "the operator DIV")
			return
		case !normBinary[e.Operator]:
			p.unprintable(e, "the operator %s", e.Operator)
			return
		}
		op := e.Operator
		if op == "MOD" {
			op = "%"
		}
		p.operand(levelArith, e.Left)
		p.spaced(op)
		p.operand(levelArith, e.Right)
	case *UnaryExpr:
		switch e.Operator {
		case "+", "-", "~":
			p.ws(e.Operator)
			p.operand(levelArith, e.Expr)
		default:
			p.unprintable(e, "the unary operator %q", e.Operator)
		}
	case *IntervalExpr:
		if e.Unit == "" {
			p.unprintable(e, "an interval written as one string")
			return
		}
		p.ws("INTERVAL ")
		p.operand(levelArith, e.Expr)
		p.ws(" ")
		p.ws(strings.ToUpper(e.Unit))
	case *CollateExpr:
		p.operand(levelArith, e.Expr)
		p.ws(" COLLATE ")
		p.ws(e.Collation)
	}
}

// andOperand prints an operand of AND: a chain of AND needs no
// parentheses.
func (p *printer) andOperand(e Expr) {
	if _, ok := e.(*AndExpr); ok {
		p.print(e)
		return
	}
	p.operand(levelLogical, e)
}

func (p *printer) normComparison(e *ComparisonExpr) {
	op, ok := normComparisons[e.Operator]
	switch {
	case !ok:
		p.unprintable(e, "the operator %s", e.Operator)
		return
	case op == "<=>" && !p.norm.Engine.Lexical().NullSafeEqual:
		p.unprintable(e, "the operator <=>")
		return
	}
	if a, ok := e.Right.(*AnyExpr); ok {
		p.unprintable(e, "the operator %s %s", e.Operator, a.Quantifier)
		return
	}
	p.operand(levelCompare, e.Left)
	p.spaced(op)
	p.operand(levelCompare, e.Right)
	if e.Escape != nil {
		p.ws(" ESCAPE ")
		p.operand(levelCompare, e.Escape)
	}
}

// normCast prints a cast: x::T, CAST(x AS T), CAST(x, 'T'), the type
// and the word AS as written (lower-case in the canonical form), and
// MySQL's CONVERT(x, T) as CAST(x AS T).
func (p *printer) normCast(e *ConvertExpr) {
	typ, as := e.Type, e.As
	if as == "" {
		as = "AS"
	}
	if p.norm.Canonical {
		typ, as = strings.ToLower(typ), strings.ToLower(as)
	}
	switch e.Form {
	case "::":
		p.print(e.Expr)
		p.ws("::")
		p.ws(typ)
	case "CAST":
		p.ws("CAST(")
		p.print(e.Expr)
		p.spaced(as)
		p.ws(typ)
		p.ws(")")
	case "CAST,":
		p.ws("CAST(")
		p.print(e.Expr)
		p.ws(", ")
		p.ws(typ)
		p.ws(")")
	case "CONVERT":
		p.ws("CAST(")
		p.print(e.Expr)
		p.ws(" AS " + strings.ToUpper(e.Type) + ")")
	case "CONVERT USING":
		p.unprintable(e, "a character set in CAST")
	default:
		p.unprintable(e, "the expression %s", e.Form)
	}
}

func (p *printer) normFunc(e *FuncExpr) {
	switch {
	case e.HasParams:
		p.unprintable(e, "a parametric aggregate")
	case e.OrderBy != nil || e.Separator != nil:
		p.unprintable(e, "ORDER BY in a call")
	case e.WithinGroup != nil:
		p.unprintable(e, "WITHIN GROUP")
	case e.Filter != nil:
		p.unprintable(e, "FILTER")
	case e.Over != nil && e.Over.Spec == nil:
		p.unprintable(e, "a named window")
	case e.NoParens:
		// CURRENT_DATE and the like: a value of the build's instant in
		// the stored table, of the run's inline.
		p.unprintable(e, "the expression %s", strings.ToUpper(e.Name.Name))
	}
	if p.err != nil {
		return
	}
	if !e.Qualifier.IsEmpty() {
		p.normIdent(e.Qualifier.Name)
		p.ws(".")
	}
	name := e.Name.Name
	if p.norm.Canonical {
		name = strings.ToLower(name)
	}
	extract := strings.EqualFold(e.Name.Name, "extract") && len(e.Exprs) == 1
	for i, kw := range e.Keywords {
		if kw != "" && !(i == 0 && extract) {
			p.keywordCall(e, name)
			return
		}
	}
	p.ws(name)
	p.ws("(")
	if e.Distinct {
		p.ws("DISTINCT ")
	}
	for i, arg := range e.Exprs {
		if i > 0 {
			p.ws(", ")
		}
		if i < len(e.Keywords) && e.Keywords[i] != "" {
			p.ws(e.Keywords[i])
			p.ws(" ")
		}
		if s, ok := arg.(*StarExpr); ok {
			if !s.TableName.IsEmpty() {
				p.unprintable(s, "a qualified * in a function call")
			}
			p.ws("*")
			continue
		}
		p.print(arg)
	}
	p.ws(")")
	if e.Over != nil {
		p.ws(" ")
		p.print(e.Over)
	}
}

// keywordCall prints SUBSTRING(s FROM a FOR b) as substr(s, a, b); other
// calls with keyword arguments (TRIM, POSITION) are refused.
func (p *printer) keywordCall(e *FuncExpr, name string) {
	n := strings.ToLower(e.Name.Name)
	if n != "substring" && n != "substr" {
		p.unprintable(e, "the call %s with keywords", name)
		return
	}
	p.ws("substr(")
	p.exprs(e.Exprs)
	p.ws(")")
}

// checkSelect refuses the clauses of a SELECT the normal form does not
// print.
func (p *printer) checkSelect(s *Select) {
	switch {
	case s.With != nil:
		p.unprintable(s.With, "WITH")
	case s.Distinct != "" && s.Distinct != "DISTINCT":
		p.unprintable(s, "the option %s", s.Distinct)
	case s.DistinctOn != nil:
		p.unprintable(s, "DISTINCT ON")
	case s.PreWhere != nil:
		p.unprintable(s.PreWhere, "PREWHERE")
	case s.GroupByModifier != "":
		p.unprintable(s, "GROUP BY %s", s.GroupByModifier)
	case s.Window != nil:
		p.unprintable(s, "WINDOW")
	case s.Qualify != nil:
		p.unprintable(s.Qualify, "QUALIFY")
	case s.LimitBy != nil:
		p.unprintable(s.LimitBy, "LIMIT BY")
	}
	for _, g := range s.GroupBy {
		if ge, ok := g.(*GroupingExpr); ok {
			p.unprintable(ge, "GROUP BY %s", ge.Type)
		}
	}
}

func (p *printer) normSelect(s *Select) {
	p.checkSelect(s)
	p.ws("SELECT ")
	if s.Distinct != "" {
		p.ws("DISTINCT ")
	}
	for i, se := range s.SelectExprs {
		if i > 0 {
			p.ws(", ")
		}
		switch se := se.(type) {
		case *StarExpr:
			if se.Except != nil || se.Replace != nil {
				p.unprintable(se, "* EXCEPT and REPLACE")
			}
			p.format(se)
		case *AliasedExpr:
			p.print(se.Expr)
			if !se.As.IsEmpty() {
				p.ws(" AS ")
				p.normIdent(se.As.Name)
			}
		default:
			p.unprintable(se, "the select item %s", nodeName(se))
		}
	}
	p.normFrom(s.From)
	if s.Where != nil {
		p.ws(" WHERE ")
		p.print(s.Where)
	}
	for i, e := range s.GroupBy {
		if i == 0 {
			p.ws(" GROUP BY ")
		} else {
			p.ws(", ")
		}
		p.print(e)
	}
	if s.Having != nil {
		p.ws(" HAVING ")
		p.print(s.Having)
	}
	p.normOrderBy(s.OrderBy)
	p.normLimit(s.Limit)
}

func (p *printer) normFrom(from []TableExpr) {
	if len(from) == 0 {
		return
	}
	if len(from) == 1 {
		if t, ok := from[0].(*AliasedTableExpr); ok {
			if n, ok := t.Expr.(*TableName); ok && len(n.Parts) == 1 && strings.EqualFold(n.Name().Name, "dual") && t.As.IsEmpty() {
				return // MySQL's spelling of a SELECT without FROM
			}
		}
	}
	p.ws(" FROM ")
	for i, t := range from {
		if i > 0 {
			p.ws(", ")
		}
		p.print(t)
	}
}

func (p *printer) normOrderBy(os []*Order) {
	if len(os) > 0 {
		p.ws(" ORDER BY ")
		p.orders(os)
	}
}

func (p *printer) normLimit(l *Limit) {
	if l == nil {
		return
	}
	if l.Rowcount != nil {
		p.ws(" LIMIT ")
		p.print(l.Rowcount)
	}
	if l.Offset != nil {
		p.ws(" OFFSET ")
		p.print(l.Offset)
	}
}

// normJoins is the spelling of each join of the normal form.
var normJoins = map[string]string{
	"JOIN": "JOIN", "INNER JOIN": "JOIN", "CROSS JOIN": "JOIN",
	"LEFT JOIN": "LEFT JOIN", "LEFT OUTER JOIN": "LEFT JOIN",
	"RIGHT JOIN": "RIGHT JOIN", "RIGHT OUTER JOIN": "RIGHT JOIN",
	"NATURAL JOIN": "NATURAL JOIN", "NATURAL LEFT JOIN": "NATURAL LEFT JOIN", "NATURAL LEFT OUTER JOIN": "NATURAL LEFT JOIN",
	"NATURAL RIGHT JOIN": "NATURAL RIGHT JOIN", "NATURAL RIGHT OUTER JOIN": "NATURAL RIGHT JOIN",
}

func (p *printer) normTable(t *AliasedTableExpr) {
	switch {
	case len(t.Suffixes) > 0:
		p.unprintable(t, "partitions and index hints")
		return
	case t.Lateral || t.Only || t.WithOrdinality || t.Columns != nil:
		p.unprintable(t, "the table %s", nodeName(t))
		return
	}
	switch x := t.Expr.(type) {
	case *TableName, *Subquery:
		p.format(x) // a table, not an operand the hook could print
	default:
		p.unprintable(x, "the table %s", nodeName(x))
	}
	if !t.As.IsEmpty() {
		p.ws(" AS ")
		p.normIdent(t.As.Name)
	}
}

func (p *printer) normJoin(t *JoinTableExpr) {
	join, ok := normJoins[t.Join]
	if !ok {
		p.unprintable(t, "%s", t.Join)
		return
	}
	if join == "JOIN" && t.On == nil && len(t.Using) == 0 {
		// An inner join without a condition is a cross join: PostgreSQL
		// and ClickHouse refuse JOIN without ON, and every engine reads
		// CROSS JOIN alike.
		join = "CROSS JOIN"
	}
	p.print(t.LeftExpr)
	p.spaced(join)
	p.print(t.RightExpr)
	if t.On != nil {
		p.ws(" ON ")
		p.print(t.On)
	}
	if len(t.Using) > 0 {
		p.ws(" USING ")
		p.idents(t.Using)
	}
}

// Direction is an ORDER BY term's direction, ASC when none is written.
func Direction(o *Order) string {
	if o.Direction == "" {
		return "ASC"
	}
	return o.Direction
}

// nodeName names a node type for messages: *IndexExpr is "IndexExpr".
func nodeName(n any) string { return NodeWords(n) }

// NodeWords names the construct a node stands for in a user's words, for
// messages: *IndexExpr is "index expression", *AliasedTableExpr "aliased
// table expression", never the Go type's name.
func NodeWords(n any) string {
	s := fmt.Sprintf("%T", n)
	s = s[strings.LastIndexByte(s, '.')+1:]
	var b strings.Builder
	for i, r := range s {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	words := strings.Fields(strings.ToLower(b.String()))
	for i, w := range words {
		switch w {
		case "expr":
			words[i] = "expression"
		case "stmt":
			words[i] = "statement"
		}
	}
	return strings.Join(words, " ")
}

// NormalJoins returns the spelling of each join the normal form prints,
// by the spelling the tree holds ("LEFT OUTER JOIN": "LEFT JOIN"); a join
// that is not there is one it refuses. The map is the caller's.
func NormalJoins() map[string]string {
	m := make(map[string]string, len(normJoins))
	for k, v := range normJoins {
		m[k] = v
	}
	return m
}
