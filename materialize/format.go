package materialize

import (
	"fmt"
	"strings"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/tree"
)

// printer writes the parts of a query that a plan's statements are built
// from as generated text for one dialect: every name quoted for it, every
// keyword and operator in one spelling, every literal and cast type byte
// for byte as the user wrote it (see normalize). The statements a plan
// runs are assembled from these parts and the generated columns of the
// stored table.
type printer struct {
	d engine.Engine
	// canon prints the canonical form used to compare expressions:
	// lower-case identifiers and function names, no redundant parentheses.
	canon bool
	// hook, when set, may print an expression in place of the printer.
	hook func(e tree.Expr) (text string, ok bool, err error)
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
func (p *printer) exprString(e tree.Expr) (string, error) {
	q := &printer{d: p.d, canon: p.canon, hook: p.hook}
	q.expr(e)
	return q.b.String(), q.err
}

// canonical returns the canonical text of e, for comparing expressions.
func canonical(e tree.Expr) string {
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

func level(e tree.Expr) int {
	switch e.(type) {
	case *tree.AndExpr, *tree.OrExpr, *tree.NotExpr, *tree.XorExpr:
		return levelLogical
	case *tree.ComparisonExpr, *tree.RangeCond, *tree.IsExpr:
		return levelCompare
	case *tree.BinaryExpr, *tree.CollateExpr, *tree.UnaryExpr:
		return levelArith
	}
	return levelNone
}

func (p *printer) operand(parent int, e tree.Expr) {
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
func (p *printer) expr(e tree.Expr) {
	if p.err != nil || p.hooked(e) {
		return
	}
	switch e.(type) {
	case *tree.ColName, *tree.Literal, *tree.ParenExpr:
		p.primary(e)
	case *tree.AndExpr, *tree.OrExpr, *tree.NotExpr, *tree.XorExpr,
		*tree.ComparisonExpr, *tree.RangeCond, *tree.IsExpr,
		*tree.BinaryExpr, *tree.UnaryExpr, *tree.IntervalExpr, *tree.CollateExpr:
		p.operator(e)
	default:
		p.construct(e)
	}
}

// hooked prints e through the hook and reports whether the hook took it,
// or failed.
func (p *printer) hooked(e tree.Expr) bool {
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
func (p *printer) primary(e tree.Expr) {
	switch e := e.(type) {
	case *tree.ColName:
		if !e.Qualifier.IsEmpty() {
			p.tableName(e.Qualifier)
			p.w(".")
		}
		p.ident(e.Name.Name)
	case *tree.Literal:
		p.literal(e)
	case *tree.ParenExpr:
		if p.canon {
			p.expr(e.Expr)
			return
		}
		p.w("(")
		p.expr(e.Expr)
		p.w(")")
	}
}

// literal prints a literal: strings and numbers as written, NULL, TRUE and
// FALSE in capitals.
func (p *printer) literal(v *tree.Literal) {
	switch v.Kind {
	case tree.NullVal, tree.BoolVal:
		p.w(strings.ToUpper(v.Text))
	case tree.TypedStrVal:
		p.fail("the typed literal %s", v.Text)
	default:
		p.w(v.Text)
	}
}

// operator prints an operator expression, parenthesizing operands by level.
func (p *printer) operator(e tree.Expr) {
	switch e := e.(type) {
	case *tree.AndExpr:
		p.andOperand(e.Left)
		p.w(" AND ")
		p.andOperand(e.Right)
	case *tree.OrExpr:
		p.operand(levelLogical, e.Left)
		p.w(" OR ")
		p.operand(levelLogical, e.Right)
	case *tree.XorExpr:
		p.operand(levelLogical, e.Left)
		p.w(" XOR ")
		p.operand(levelLogical, e.Right)
	case *tree.NotExpr:
		p.w("NOT ")
		p.operand(levelLogical, e.Expr)
	case *tree.ComparisonExpr:
		p.comparison(e)
	case *tree.RangeCond:
		p.operand(levelCompare, e.Left)
		p.w(" " + e.Operator + " ")
		p.operand(levelCompare, e.From)
		p.w(" AND ")
		p.operand(levelCompare, e.To)
	case *tree.IsExpr:
		switch e.Operator {
		case "IS NULL", "IS NOT NULL", "IS TRUE", "IS NOT TRUE", "IS FALSE", "IS NOT FALSE":
		default:
			p.fail("the operator %s", e.Operator)
			return
		}
		p.operand(levelCompare, e.Expr)
		p.w(" " + e.Operator)
	case *tree.BinaryExpr:
		p.binary(e)
	case *tree.UnaryExpr:
		p.unary(e)
	case *tree.IntervalExpr:
		if e.Unit == "" {
			p.fail("an interval written as one string")
			return
		}
		p.w("INTERVAL ")
		p.operand(levelArith, e.Expr)
		p.w(" " + strings.ToUpper(e.Unit))
	case *tree.CollateExpr:
		p.operand(levelArith, e.Expr)
		p.w(" COLLATE " + e.Collation)
	}
}

// binaryOps are the arithmetic, string and JSON operators the printer
// writes; the others (PostgreSQL's JSON and array operators, AT TIME ZONE,
// &&) are refused.
var binaryOps = map[string]bool{
	"+": true, "-": true, "*": true, "/": true, "%": true, "DIV": true, "MOD": true,
	"&": true, "|": true, "^": true, "<<": true, ">>": true, "->": true, "->>": true, "||": true,
}

func (p *printer) binary(e *tree.BinaryExpr) {
	if e.Operator == "DIV" && !p.d.Lexical().IntDiv {
		p.fail("the operator DIV")
		return
	}
	if !binaryOps[e.Operator] {
		p.fail("the operator %s", e.Operator)
		return
	}
	op := e.Operator
	if op == "MOD" {
		op = "%"
	}
	p.operand(levelArith, e.Left)
	p.w(" " + op + " ")
	p.operand(levelArith, e.Right)
}

func (p *printer) unary(e *tree.UnaryExpr) {
	switch e.Operator {
	case "+", "-", "~":
		p.w(e.Operator)
		p.operand(levelArith, e.Expr)
	default:
		p.fail("the unary operator %q", e.Operator)
	}
}

// construct prints a function call, CAST, CASE, a subquery or a tuple;
// any other expression is unsupported.
func (p *printer) construct(e tree.Expr) {
	switch e := e.(type) {
	case *tree.FuncExpr:
		p.funcExpr(e)
	case *tree.ConvertExpr:
		p.cast(e)
	case *tree.CaseExpr:
		p.caseExpr(e)
	case *tree.ExistsExpr:
		p.w("EXISTS ")
		p.subquery(e.Subquery)
	case *tree.Subquery:
		p.subquery(e)
	case *tree.ValTuple:
		p.w("(")
		for i, x := range e.Exprs {
			if i > 0 {
				p.w(", ")
			}
			p.expr(x)
		}
		p.w(")")
	case *tree.Placeholder:
		p.fail("a variable here")
	case *tree.StarExpr:
		p.fail("a * here")
	default:
		p.fail("the expression %s", nodeName(e))
	}
}

// cast prints a CAST, its type from the source as written (see
// normalize): x::double precision, CAST(x AS Nullable(String)),
// CAST(x, 'String').
func (p *printer) cast(e *tree.ConvertExpr) {
	switch e.Form {
	case "::":
		p.expr(e.Expr)
		p.w(p.typeText(e.Type))
	case "CAST", "CAST,":
		p.w("CAST(")
		p.expr(e.Expr)
		if !strings.HasPrefix(e.Type, ",") {
			p.w(" ")
		}
		p.w(p.typeText(e.Type))
		p.w(")")
	case "CONVERT":
		p.w("CAST(")
		p.expr(e.Expr)
		p.w(" AS ")
		p.w(strings.ToUpper(e.Type))
		p.w(")")
	case "CONVERT USING":
		p.fail("a character set in CAST")
	default:
		p.fail("the expression %s", e.Form)
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

func (p *printer) caseExpr(e *tree.CaseExpr) {
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
func (p *printer) andOperand(e tree.Expr) {
	if _, ok := e.(*tree.AndExpr); ok {
		p.expr(e)
		return
	}
	p.operand(levelLogical, e)
}

// comparisonOps are the comparison operators the printer writes, and
// their spelling.
var comparisonOps = map[string]string{
	"=": "=", "<": "<", ">": ">", "<=": "<=", ">=": ">=", "!=": "<>", "<>": "<>", "<=>": "<=>",
	"IN": "IN", "NOT IN": "NOT IN", "LIKE": "LIKE", "NOT LIKE": "NOT LIKE", "ILIKE": "ILIKE", "NOT ILIKE": "NOT ILIKE",
	"REGEXP": "REGEXP", "NOT REGEXP": "NOT REGEXP", "RLIKE": "REGEXP", "NOT RLIKE": "NOT REGEXP",
}

func (p *printer) comparison(e *tree.ComparisonExpr) {
	op, ok := comparisonOps[e.Operator]
	switch {
	case !ok:
		p.fail("the operator %s", e.Operator)
		return
	case op == "<=>" && !p.d.Lexical().NullSafeEqual:
		p.fail("the operator <=>")
		return
	}
	if _, ok := e.Right.(*tree.AnyExpr); ok {
		p.fail("the operator %s %s", e.Operator, e.Right.(*tree.AnyExpr).Quantifier)
		return
	}
	p.operand(levelCompare, e.Left)
	p.w(" " + op + " ")
	p.operand(levelCompare, e.Right)
	if e.Escape != nil {
		p.w(" ESCAPE ")
		p.operand(levelCompare, e.Escape)
	}
}

func (p *printer) funcExpr(e *tree.FuncExpr) {
	switch {
	case e.HasParams:
		p.fail("a parametric aggregate")
	case e.OrderBy != nil || e.Separator != nil:
		p.fail("ORDER BY in a call")
	case e.WithinGroup != nil:
		p.fail("WITHIN GROUP")
	case e.Filter != nil:
		p.fail("FILTER")
	case e.Over != nil && e.Over.Spec == nil:
		p.fail("a named window")
	}
	if p.err != nil {
		return
	}
	if !e.Qualifier.IsEmpty() {
		p.ident(e.Qualifier.Name)
		p.w(".")
	}
	name := e.Name.Name
	if p.canon {
		name = strings.ToLower(name)
	}
	if e.NoParens {
		// CURRENT_DATE and the like: a value of the build's instant in
		// the stored table, of the run's inline.
		p.fail("the expression %s", strings.ToUpper(e.Name.Name))
		return
	}
	keywords := false
	for i, kw := range e.Keywords {
		keywords = keywords || kw != "" && !(i == 0 && isExtract(e))
	}
	if keywords {
		p.keywordCall(e, name)
		return
	}
	p.w(name + "(")
	if e.Distinct {
		p.w("DISTINCT ")
	}
	for i, arg := range e.Exprs {
		if i > 0 {
			p.w(", ")
		}
		if i < len(e.Keywords) && e.Keywords[i] != "" {
			p.w(e.Keywords[i] + " ")
		}
		if s, ok := arg.(*tree.StarExpr); ok {
			if !s.TableName.IsEmpty() {
				p.fail("a qualified * in a function call")
			}
			p.w("*")
			continue
		}
		p.expr(arg)
	}
	p.w(")")
	if e.Over != nil {
		p.over(e.Over.Spec)
	}
}

// over prints a window: OVER ([PARTITION BY ...] [ORDER BY ...] [frame]).
func (p *printer) over(s *tree.WindowSpec) {
	if !s.Name.IsEmpty() {
		p.fail("a named window")
		return
	}
	p.w(" OVER (")
	sep := ""
	for i, e := range s.PartitionBy {
		if i == 0 {
			p.w("PARTITION BY ")
		} else {
			p.w(", ")
		}
		p.expr(e)
		sep = " "
	}
	for i, o := range s.OrderBy {
		if i == 0 {
			p.w(sep + "ORDER BY ")
		} else {
			p.w(", ")
		}
		if o.Nulls != "" || o.Fill != "" {
			p.fail("ORDER BY ... %s", strings.TrimSpace(o.Nulls+" "+o.Fill))
		}
		p.expr(o.Expr)
		p.w(" " + direction(o))
		sep = " "
	}
	if f := s.Frame; f != nil {
		p.w(sep + f.Unit + " ")
		if f.End != nil {
			p.w("BETWEEN ")
			p.frameBound(f.Start)
			p.w(" AND ")
			p.frameBound(f.End)
		} else {
			p.frameBound(f.Start)
		}
		if f.Exclude != "" {
			p.w(" " + f.Exclude)
		}
	}
	p.w(")")
}

func (p *printer) frameBound(b *tree.FrameBound) {
	if b.Expr != nil {
		p.expr(b.Expr)
		p.w(" ")
	}
	p.w(b.Type)
}

// isExtract reports whether e is extract(unit FROM x) as normalize puts
// it: the unit and FROM are its first keyword.
func isExtract(e *tree.FuncExpr) bool {
	return strings.EqualFold(e.Name.Name, "extract") && len(e.Exprs) == 1
}

// keywordCall prints SUBSTRING(s FROM a FOR b) as substr(s, a, b); other
// calls with keyword arguments (TRIM, POSITION) are refused.
func (p *printer) keywordCall(e *tree.FuncExpr, name string) {
	n := strings.ToLower(e.Name.Name)
	if n != "substring" && n != "substr" {
		p.fail("the call %s with keywords", name)
		return
	}
	p.w("substr(")
	for i, arg := range e.Exprs {
		if i > 0 {
			p.w(", ")
		}
		p.expr(arg)
	}
	p.w(")")
}

func (p *printer) subquery(s *tree.Subquery) {
	p.w("(")
	p.selectStatement(s.Select)
	p.w(")")
}

func (p *printer) tableName(t tree.TableName) {
	for i, part := range t.Parts {
		if i > 0 {
			p.w(".")
		}
		p.ident(part.Name)
	}
}

func (p *printer) selectStatement(s tree.SelectStatement) {
	switch s := s.(type) {
	case *tree.Select:
		p.selectQuery(s)
	case *tree.ParenSelect:
		if s.With != nil || s.LimitBy != nil {
			p.fail("the statement %s", nodeName(s))
			return
		}
		p.w("(")
		p.selectStatement(s.Select)
		p.w(")")
		p.orderBy(s.OrderBy)
		p.limit(s.Limit)
	case *tree.Union:
		if s.With != nil || s.LimitBy != nil {
			p.fail("the statement %s", nodeName(s))
			return
		}
		p.selectStatement(s.Left)
		p.w(" " + s.Type + " ")
		p.selectStatement(s.Right)
		p.orderBy(s.OrderBy)
		p.limit(s.Limit)
	default:
		p.fail("the statement %s", nodeName(s))
	}
}

// selectQuery prints a whole SELECT; only subqueries and derived tables
// are printed this way, the outer query is assembled by the rewrite.
func (p *printer) selectQuery(s *tree.Select) {
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
		p.expr(s.Where)
	}
	p.groupBy(s.GroupBy)
	if s.Having != nil {
		p.w(" HAVING ")
		p.expr(s.Having)
	}
	p.orderBy(s.OrderBy)
	p.limit(s.Limit)
}

// checkSelectOptions refuses the clauses of a SELECT the rewrite does not
// carry over.
func (p *printer) checkSelectOptions(s *tree.Select) {
	switch {
	case s.With != nil:
		p.fail("WITH")
	case s.Distinct != "" && s.Distinct != "DISTINCT":
		p.fail("the option %s", s.Distinct)
	case s.DistinctOn != nil:
		p.fail("DISTINCT ON")
	case s.PreWhere != nil:
		p.fail("PREWHERE")
	case s.GroupByModifier != "":
		p.fail("GROUP BY %s", s.GroupByModifier)
	case s.Window != nil:
		p.fail("WINDOW")
	case s.Qualify != nil:
		p.fail("QUALIFY")
	case s.LimitBy != nil:
		p.fail("LIMIT BY")
	}
	for _, g := range s.GroupBy {
		if _, ok := g.(*tree.GroupingExpr); ok {
			p.fail("GROUP BY %s", g.(*tree.GroupingExpr).Type)
		}
	}
}

func (p *printer) selectExpr(se tree.SelectExpr) {
	switch se := se.(type) {
	case *tree.StarExpr:
		if se.Except != nil || se.Replace != nil {
			p.fail("* EXCEPT and REPLACE")
		}
		if !se.TableName.IsEmpty() {
			p.tableName(se.TableName)
			p.w(".")
		}
		p.w("*")
	case *tree.AliasedExpr:
		p.expr(se.Expr)
		if !se.As.IsEmpty() {
			p.w(" AS ")
			p.ident(se.As.Name)
		}
	default:
		p.fail("the select item %s", nodeName(se))
	}
}

func (p *printer) from(from []tree.TableExpr) {
	if len(from) == 0 {
		return
	}
	if len(from) == 1 {
		if t, ok := from[0].(*tree.AliasedTableExpr); ok {
			if n, ok := t.Expr.(*tree.TableName); ok && len(n.Parts) == 1 && strings.EqualFold(n.Name().Name, "dual") && t.As.IsEmpty() {
				return // MySQL's spelling of a SELECT without FROM
			}
		}
	}
	p.w(" FROM ")
	p.tableExprs(from)
}

func (p *printer) tableExprs(ts []tree.TableExpr) {
	for i, t := range ts {
		if i > 0 {
			p.w(", ")
		}
		p.tableExpr(t)
	}
}

// joinWord is the spelling of each join the printer writes.
var joinWord = map[string]string{
	"JOIN": "JOIN", "INNER JOIN": "JOIN", "CROSS JOIN": "JOIN",
	"LEFT JOIN": "LEFT JOIN", "LEFT OUTER JOIN": "LEFT JOIN",
	"RIGHT JOIN": "RIGHT JOIN", "RIGHT OUTER JOIN": "RIGHT JOIN",
	"NATURAL JOIN": "NATURAL JOIN", "NATURAL LEFT JOIN": "NATURAL LEFT JOIN", "NATURAL LEFT OUTER JOIN": "NATURAL LEFT JOIN",
	"NATURAL RIGHT JOIN": "NATURAL RIGHT JOIN", "NATURAL RIGHT OUTER JOIN": "NATURAL RIGHT JOIN",
}

func (p *printer) tableExpr(t tree.TableExpr) {
	switch t := t.(type) {
	case *tree.AliasedTableExpr:
		switch {
		case len(t.Suffixes) > 0:
			p.fail("partitions and index hints")
			return
		case t.Lateral || t.Only || t.WithOrdinality || t.Columns != nil:
			p.fail("the table %s", nodeName(t))
			return
		}
		switch x := t.Expr.(type) {
		case *tree.TableName:
			p.tableName(*x)
		case *tree.Subquery:
			p.subquery(x)
		default:
			p.fail("the table %s", nodeName(x))
		}
		if !t.As.IsEmpty() {
			p.w(" AS ")
			p.ident(t.As.Name)
		}
	case *tree.ParenTableExpr:
		p.w("(")
		p.tableExprs(t.Exprs)
		p.w(")")
	case *tree.JoinTableExpr:
		join, ok := joinWord[t.Join]
		if !ok {
			p.fail("%s", t.Join)
			return
		}
		p.tableExpr(t.LeftExpr)
		p.w(" " + join + " ")
		p.tableExpr(t.RightExpr)
		if t.On != nil {
			p.w(" ON ")
			p.expr(t.On)
		}
		if len(t.Using) > 0 {
			p.w(" USING (")
			for i, c := range t.Using {
				if i > 0 {
					p.w(", ")
				}
				p.ident(c.Name)
			}
			p.w(")")
		}
	default:
		p.fail("the table expression %s", nodeName(t))
	}
}

func (p *printer) groupBy(g []tree.Expr) {
	for i, e := range g {
		if i == 0 {
			p.w(" GROUP BY ")
		} else {
			p.w(", ")
		}
		p.expr(e)
	}
}

func (p *printer) orderBy(o []*tree.Order) {
	for i, ord := range o {
		if i == 0 {
			p.w(" ORDER BY ")
		} else {
			p.w(", ")
		}
		if ord.Nulls != "" || ord.Fill != "" {
			p.fail("ORDER BY ... %s", strings.TrimSpace(ord.Nulls+" "+ord.Fill))
		}
		p.expr(ord.Expr)
		p.w(" " + direction(ord))
	}
}

// direction is an ORDER BY term's direction, ASC when none is written.
func direction(o *tree.Order) string {
	if o.Direction == "" {
		return "ASC"
	}
	return o.Direction
}

func (p *printer) limit(l *tree.Limit) {
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

// nodeName names a node type for messages: *tree.IndexExpr is "IndexExpr".
func nodeName(n any) string {
	s := fmt.Sprintf("%T", n)
	return s[strings.LastIndexByte(s, '.')+1:]
}
