package materialize

import (
	"fmt"
	"strings"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/xwb1989/sqlparser"
)

// printer writes parsed SQL back as text for one dialect. It replaces the
// parser's own String, which prints MySQL (backquotes, "limit 5, 10",
// backslash escapes), and never uses the parser's literal encoder.
type printer struct {
	d engine.Engine
	// canon prints the canonical form used to compare expressions:
	// lower-case identifiers and function names, no redundant parentheses.
	canon bool
	// hook, when set, may print an expression in place of the printer.
	hook func(e sqlparser.Expr) (text string, ok bool, err error)
	b    strings.Builder
	err  error
}

// unsupportedError is a construct the printer cannot write faithfully.
type unsupportedError struct{ what string }

func (e *unsupportedError) Error() string { return e.what + " is not supported" }

func (p *printer) fail(format string, args ...any) {
	if p.err == nil {
		p.err = &unsupportedError{fmt.Sprintf(format, args...)}
	}
}

func (p *printer) w(s string) { p.b.WriteString(s) }

func (p *printer) ident(s string) {
	if p.canon {
		s = strings.ToLower(s)
	}
	p.w(p.d.QuoteIdent(s))
}

// exprString prints e alone with the settings of p.
func (p *printer) exprString(e sqlparser.Expr) (string, error) {
	q := &printer{d: p.d, canon: p.canon, hook: p.hook}
	q.expr(e)
	return q.b.String(), q.err
}

// canonical returns the canonical text of e, for comparing expressions.
func canonical(e sqlparser.Expr) string {
	q := &printer{d: engine.SQLite, canon: true}
	q.expr(e)
	if q.err != nil {
		return "\x00" + q.err.Error()
	}
	return q.b.String()
}

// Operator levels, loosest first. An operand is parenthesized when its own
// level is not tighter than its parent's: safe in every dialect, and free of
// parentheses where precedence is the same everywhere (a comparison under
// AND, arithmetic under a comparison).
const (
	levelNone = iota
	levelLogical
	levelCompare
	levelArith
)

func level(e sqlparser.Expr) int {
	switch e.(type) {
	case *sqlparser.AndExpr, *sqlparser.OrExpr, *sqlparser.NotExpr:
		return levelLogical
	case *sqlparser.ComparisonExpr, *sqlparser.RangeCond, *sqlparser.IsExpr:
		return levelCompare
	case *sqlparser.BinaryExpr, *sqlparser.CollateExpr, *sqlparser.UnaryExpr:
		return levelArith
	}
	return levelNone
}

func (p *printer) operand(parent int, e sqlparser.Expr) {
	if l := level(e); l != levelNone && l <= parent {
		p.w("(")
		p.expr(e)
		p.w(")")
		return
	}
	p.expr(e)
}

// expr prints e. Expressions come in three families, each printed by its
// own method: primaries (names, literals, parentheses), operators (whose
// operands may need parentheses) and constructs (calls, CAST, CASE,
// subqueries, tuples).
func (p *printer) expr(e sqlparser.Expr) {
	if p.err != nil || p.hooked(e) {
		return
	}
	switch e.(type) {
	case *sqlparser.ColName, *sqlparser.SQLVal, *sqlparser.NullVal, sqlparser.BoolVal, *sqlparser.ParenExpr:
		p.primary(e)
	case *sqlparser.AndExpr, *sqlparser.OrExpr, *sqlparser.NotExpr,
		*sqlparser.ComparisonExpr, *sqlparser.RangeCond, *sqlparser.IsExpr,
		*sqlparser.BinaryExpr, *sqlparser.UnaryExpr, *sqlparser.IntervalExpr, *sqlparser.CollateExpr:
		p.operator(e)
	default:
		p.construct(e)
	}
}

// hooked prints e through the hook and reports whether the hook took it,
// or failed.
func (p *printer) hooked(e sqlparser.Expr) bool {
	if p.hook == nil {
		return false
	}
	text, ok, err := p.hook(e)
	if err != nil {
		p.err = err
		return true
	}
	if ok {
		p.w(text)
	}
	return ok
}

// primary prints a column name, a literal or a parenthesized expression.
func (p *printer) primary(e sqlparser.Expr) {
	switch e := e.(type) {
	case *sqlparser.ColName:
		if !e.Qualifier.IsEmpty() {
			p.tableName(e.Qualifier)
			p.w(".")
		}
		p.ident(e.Name.String())
	case *sqlparser.SQLVal:
		p.value(e)
	case *sqlparser.NullVal:
		p.w("NULL")
	case sqlparser.BoolVal:
		if e {
			p.w("TRUE")
		} else {
			p.w("FALSE")
		}
	case *sqlparser.ParenExpr:
		if p.canon {
			p.expr(e.Expr)
			return
		}
		p.w("(")
		p.expr(e.Expr)
		p.w(")")
	}
}

// operator prints an operator expression, parenthesizing operands by level.
func (p *printer) operator(e sqlparser.Expr) {
	switch e := e.(type) {
	case *sqlparser.AndExpr:
		p.andOperand(e.Left)
		p.w(" AND ")
		p.andOperand(e.Right)
	case *sqlparser.OrExpr:
		p.operand(levelLogical, e.Left)
		p.w(" OR ")
		p.operand(levelLogical, e.Right)
	case *sqlparser.NotExpr:
		p.w("NOT ")
		p.operand(levelLogical, e.Expr)
	case *sqlparser.ComparisonExpr:
		p.comparison(e)
	case *sqlparser.RangeCond:
		p.operand(levelCompare, e.Left)
		p.w(" " + strings.ToUpper(e.Operator) + " ")
		p.operand(levelCompare, e.From)
		p.w(" AND ")
		p.operand(levelCompare, e.To)
	case *sqlparser.IsExpr:
		p.operand(levelCompare, e.Expr)
		p.w(" " + strings.ToUpper(e.Operator))
	case *sqlparser.BinaryExpr:
		p.binary(e)
	case *sqlparser.UnaryExpr:
		p.unary(e)
	case *sqlparser.IntervalExpr:
		p.w("INTERVAL ")
		p.operand(levelArith, e.Expr)
		p.w(" " + strings.ToUpper(e.Unit))
	case *sqlparser.CollateExpr:
		p.operand(levelArith, e.Expr)
		p.w(" COLLATE " + e.Charset)
	}
}

func (p *printer) binary(e *sqlparser.BinaryExpr) {
	if e.Operator == sqlparser.IntDivStr && !p.d.Lexical().IntDiv {
		p.fail("the operator DIV")
		return
	}
	p.operand(levelArith, e.Left)
	p.w(" " + strings.ToUpper(e.Operator) + " ")
	p.operand(levelArith, e.Right)
}

func (p *printer) unary(e *sqlparser.UnaryExpr) {
	switch e.Operator {
	case sqlparser.UPlusStr, sqlparser.UMinusStr, sqlparser.TildaStr:
		p.w(e.Operator)
		p.operand(levelArith, e.Expr)
	default:
		p.fail("the unary operator %q", e.Operator)
	}
}

// construct prints a function call, SUBSTR, CAST, CASE, a subquery or a
// tuple; any other expression is unsupported.
func (p *printer) construct(e sqlparser.Expr) {
	switch e := e.(type) {
	case *sqlparser.FuncExpr:
		p.funcExpr(e)
	case *sqlparser.SubstrExpr:
		p.substr(e)
	case *sqlparser.ConvertExpr:
		p.cast(e)
	case *sqlparser.CaseExpr:
		p.caseExpr(e)
	case *sqlparser.ExistsExpr:
		p.w("EXISTS ")
		p.subquery(e.Subquery)
	case *sqlparser.Subquery:
		p.subquery(e)
	case sqlparser.ValTuple:
		p.w("(")
		for i, x := range e {
			if i > 0 {
				p.w(", ")
			}
			p.expr(x)
		}
		p.w(")")
	default:
		p.fail("the expression %s", nodeName(e))
	}
}

// cast prints a CAST. A cast read through a stand-in prints its type
// from the source, as written: x::double precision, CAST(x AS Nullable(String)),
// CAST(x, 'String').
func (p *printer) cast(e *sqlparser.ConvertExpr) {
	switch t := e.Type; {
	case t != nil && t.Operator == rawColonCast:
		p.expr(e.Expr)
		p.w(p.typeText(t.Type))
	case t != nil && t.Operator == rawCast:
		p.w("CAST(")
		p.expr(e.Expr)
		if !strings.HasPrefix(t.Type, ",") {
			p.w(" ")
		}
		p.w(p.typeText(t.Type))
		p.w(")")
	default:
		p.w("CAST(")
		p.expr(e.Expr)
		p.w(" AS ")
		p.convertType(e.Type)
		p.w(")")
	}
}

// typeText is a cast type's source text; lower-case in the canonical form,
// where type names compare without case.
func (p *printer) typeText(s string) string {
	if p.canon {
		return strings.ToLower(s)
	}
	return s
}

func (p *printer) substr(e *sqlparser.SubstrExpr) {
	p.w("substr(")
	p.expr(e.Name)
	p.w(", ")
	p.expr(e.From)
	if e.To != nil {
		p.w(", ")
		p.expr(e.To)
	}
	p.w(")")
}

func (p *printer) caseExpr(e *sqlparser.CaseExpr) {
	p.w("CASE ")
	if e.Expr != nil {
		p.expr(e.Expr)
		p.w(" ")
	}
	for _, when := range e.Whens {
		p.w("WHEN ")
		p.expr(when.Cond)
		p.w(" THEN ")
		p.expr(when.Val)
		p.w(" ")
	}
	if e.Else != nil {
		p.w("ELSE ")
		p.expr(e.Else)
		p.w(" ")
	}
	p.w("END")
}

// andOperand prints an AND operand: chains of AND need no parentheses.
func (p *printer) andOperand(e sqlparser.Expr) {
	if _, ok := e.(*sqlparser.AndExpr); ok {
		p.expr(e)
		return
	}
	p.operand(levelLogical, e)
}

func (p *printer) value(v *sqlparser.SQLVal) {
	switch v.Type {
	case sqlparser.StrVal:
		p.w(string(p.d.AppendString(nil, string(v.Val))))
	case sqlparser.IntVal, sqlparser.FloatVal, sqlparser.HexNum:
		p.w(string(v.Val))
	case sqlparser.HexVal:
		p.w("X'" + string(v.Val) + "'")
	case srcString, srcKeyword:
		p.w(string(v.Val)) // as written: see neutral.go
	case sqlparser.ValArg:
		p.fail("a variable here")
	default:
		p.fail("the literal %s", string(v.Val))
	}
}

func (p *printer) comparison(e *sqlparser.ComparisonExpr) {
	op := strings.ToUpper(e.Operator)
	switch e.Operator {
	case sqlparser.NotEqualStr:
		op = "<>"
	case sqlparser.NullSafeEqualStr:
		if !p.d.Lexical().NullSafeEqual {
			p.fail("the operator <=>")
			return
		}
	}
	p.operand(levelCompare, e.Left)
	p.w(" " + op + " ")
	p.operand(levelCompare, e.Right)
	if e.Escape != nil {
		p.w(" ESCAPE ")
		p.operand(levelCompare, e.Escape)
	}
}

func (p *printer) funcExpr(e *sqlparser.FuncExpr) {
	if !e.Qualifier.IsEmpty() {
		p.ident(e.Qualifier.String())
		p.w(".")
	}
	name := e.Name.String()
	if p.canon {
		name = strings.ToLower(name)
	}
	p.w(name + "(")
	if e.Distinct {
		p.w("DISTINCT ")
	}
	for i, arg := range e.Exprs {
		if i > 0 && !keywordArg(e.Exprs[i-1]) {
			p.w(", ")
		}
		switch a := arg.(type) {
		case *sqlparser.StarExpr:
			if !a.TableName.IsEmpty() {
				p.fail("a qualified * in a function call")
			}
			p.w("*")
		case *sqlparser.AliasedExpr:
			if !a.As.IsEmpty() {
				p.fail("an alias in a function argument")
			}
			p.expr(a.Expr)
			if keywordArg(a) {
				p.w(" ")
			}
		default:
			p.fail("the argument %s", nodeName(arg))
		}
	}
	p.w(")")
}

// keywordArg reports whether a call's argument is a keyword part, as
// "minute FROM" of extract(minute FROM x), printed with a space after it.
func keywordArg(se sqlparser.SelectExpr) bool {
	ae, ok := se.(*sqlparser.AliasedExpr)
	if !ok {
		return false
	}
	v, ok := ae.Expr.(*sqlparser.SQLVal)
	return ok && v.Type == srcKeyword
}

func (p *printer) convertType(t *sqlparser.ConvertType) {
	if t.Charset != "" {
		p.fail("a character set in CAST")
		return
	}
	p.w(strings.ToUpper(t.Type))
	if t.Length != nil {
		p.w("(" + string(t.Length.Val))
		if t.Scale != nil {
			p.w(", " + string(t.Scale.Val))
		}
		p.w(")")
	}
}

func (p *printer) subquery(s *sqlparser.Subquery) {
	p.w("(")
	p.selectStatement(s.Select)
	p.w(")")
}

func (p *printer) tableName(t sqlparser.TableName) {
	if !t.Qualifier.IsEmpty() {
		p.ident(t.Qualifier.String())
		p.w(".")
	}
	p.ident(t.Name.String())
}

func (p *printer) selectStatement(s sqlparser.SelectStatement) {
	switch s := s.(type) {
	case *sqlparser.Select:
		p.selectQuery(s)
	case *sqlparser.ParenSelect:
		p.w("(")
		p.selectStatement(s.Select)
		p.w(")")
	case *sqlparser.Union:
		if s.Lock != "" {
			p.fail("a locking clause")
		}
		p.selectStatement(s.Left)
		p.w(" " + strings.ToUpper(s.Type) + " ")
		p.selectStatement(s.Right)
		p.orderBy(s.OrderBy)
		p.limit(s.Limit)
	default:
		p.fail("the statement %s", nodeName(s))
	}
}

// selectQuery prints a whole SELECT; only subqueries and derived tables
// are printed this way, the outer query is assembled by the rewrite.
func (p *printer) selectQuery(s *sqlparser.Select) {
	p.checkSelectOptions(s)
	p.w("SELECT ")
	if s.Distinct != "" {
		p.w("DISTINCT ")
	}
	for i, se := range s.SelectExprs {
		if i > 0 {
			p.w(", ")
		}
		p.selectExpr(se)
	}
	p.from(s.From)
	if s.Where != nil {
		p.w(" WHERE ")
		p.expr(s.Where.Expr)
	}
	p.groupBy(s.GroupBy)
	if s.Having != nil {
		p.w(" HAVING ")
		p.expr(s.Having.Expr)
	}
	p.orderBy(s.OrderBy)
	p.limit(s.Limit)
}

func (p *printer) checkSelectOptions(s *sqlparser.Select) {
	switch {
	case s.Cache != "":
		p.fail("the option %s", strings.TrimSpace(s.Cache))
	case s.Hints != "":
		p.fail("the hint %s", strings.TrimSpace(s.Hints))
	case s.Lock != "":
		p.fail("a locking clause")
	case s.Distinct != "" && s.Distinct != sqlparser.DistinctStr:
		p.fail("the option %s", strings.TrimSpace(s.Distinct))
	}
}

func (p *printer) selectExpr(se sqlparser.SelectExpr) {
	switch se := se.(type) {
	case *sqlparser.StarExpr:
		if !se.TableName.IsEmpty() {
			p.tableName(se.TableName)
			p.w(".")
		}
		p.w("*")
	case *sqlparser.AliasedExpr:
		p.expr(se.Expr)
		if !se.As.IsEmpty() {
			p.w(" AS ")
			p.ident(se.As.String())
		}
	default:
		p.fail("the select item %s", nodeName(se))
	}
}

func (p *printer) from(from sqlparser.TableExprs) {
	if len(from) == 0 {
		return
	}
	if len(from) == 1 {
		if t, ok := from[0].(*sqlparser.AliasedTableExpr); ok {
			if n, ok := t.Expr.(sqlparser.TableName); ok && n.Name.String() == "dual" && n.Qualifier.IsEmpty() {
				return // the parser's spelling of a SELECT without FROM
			}
		}
	}
	p.w(" FROM ")
	p.tableExprs(from)
}

func (p *printer) tableExprs(ts sqlparser.TableExprs) {
	for i, t := range ts {
		if i > 0 {
			p.w(", ")
		}
		p.tableExpr(t)
	}
}

func (p *printer) tableExpr(t sqlparser.TableExpr) {
	switch t := t.(type) {
	case *sqlparser.AliasedTableExpr:
		if len(t.Partitions) > 0 || t.Hints != nil {
			p.fail("partitions and index hints")
			return
		}
		switch x := t.Expr.(type) {
		case sqlparser.TableName:
			p.tableName(x)
		case *sqlparser.Subquery:
			p.subquery(x)
		default:
			p.fail("the table %s", nodeName(x))
		}
		if !t.As.IsEmpty() {
			p.w(" AS ")
			p.ident(t.As.String())
		}
	case *sqlparser.ParenTableExpr:
		p.w("(")
		p.tableExprs(t.Exprs)
		p.w(")")
	case *sqlparser.JoinTableExpr:
		if t.Join == sqlparser.StraightJoinStr {
			p.fail("STRAIGHT_JOIN")
			return
		}
		p.tableExpr(t.LeftExpr)
		p.w(" " + strings.ToUpper(t.Join) + " ")
		p.tableExpr(t.RightExpr)
		if t.Condition.On != nil {
			p.w(" ON ")
			p.expr(t.Condition.On)
		}
		if len(t.Condition.Using) > 0 {
			p.w(" USING (")
			for i, c := range t.Condition.Using {
				if i > 0 {
					p.w(", ")
				}
				p.ident(c.String())
			}
			p.w(")")
		}
	default:
		p.fail("the table expression %s", nodeName(t))
	}
}

func (p *printer) groupBy(g sqlparser.GroupBy) {
	for i, e := range g {
		if i == 0 {
			p.w(" GROUP BY ")
		} else {
			p.w(", ")
		}
		p.expr(e)
	}
}

func (p *printer) orderBy(o sqlparser.OrderBy) {
	for i, ord := range o {
		if i == 0 {
			p.w(" ORDER BY ")
		} else {
			p.w(", ")
		}
		p.expr(ord.Expr)
		p.w(" " + strings.ToUpper(ord.Direction))
	}
}

func (p *printer) limit(l *sqlparser.Limit) {
	if l == nil {
		return
	}
	if l.Rowcount != nil {
		p.w(" LIMIT ")
		p.expr(l.Rowcount)
	}
	if l.Offset != nil {
		p.w(" OFFSET ")
		p.expr(l.Offset)
	}
}

// nodeName names a node type for messages: *sqlparser.MatchExpr is "MatchExpr".
func nodeName(n any) string {
	s := fmt.Sprintf("%T", n)
	return s[strings.LastIndexByte(s, '.')+1:]
}
