package materialize

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/tree"
	"github.com/endpointkit/endpointkit/variable"
)

// Options say how to analyse and rewrite a query.
type Options struct {
	// Engine runs the query and holds the stored table.
	Engine engine.Engine
	// Types are the variables' types by code name. Date variables compared
	// with >=, >, <, <= in an aggregating query are stored by bucket; every
	// other variable is stored as the column's own value.
	Types map[string]variable.Type
	// Buckets override the bucket (default engine.Day) of Date range variables, by
	// code name.
	Buckets map[string]engine.Bucket
	// TailColumn, when set, turns the live tail on: it names the column
	// (name or qualifier.name) holding each source row's time. The stored
	// table then keeps the rows up to its build instant only, and every
	// read adds the newer rows from the source (see Plan.Tail).
	TailColumn string
	// ExactColumns are the columns, each "table.column" as the query
	// names the table (any case), whose values are integers or decimals,
	// never floating point (an INTEGER column of a STRICT SQLite table, a
	// numeric or bigint column elsewhere). A sum or avg whose stored
	// parts a read adds up again materializes only over values known
	// exact (see exactsum.go); the analysis knows no column's type of
	// itself.
	ExactColumns []string
	// ColumnTypes are the declared types of tables' columns, as the
	// engine's catalog names them ("double precision", "FLOAT8", "DOUBLE",
	// "Nullable(Float64)", "REAL", "numeric", "BIGINT", ...): by table,
	// named as Table.Name names it (any case), then by column (any case).
	// A table listed is typed: a column it does not list is not its own.
	// A sum or avg whose stored parts a read adds up again, of a column
	// of a floating-point type (a float or double anywhere; a REAL,
	// FLOAT, DOUBLE, NUMERIC or DECIMAL column on SQLite, which keeps a
	// value with a fraction as a REAL), is refused (CodeAggregate) with a
	// rewrite in the engine's exact type; one of an integer or decimal
	// column materializes, StrictSums or not. Analysis.Untyped names the
	// tables whose types would decide a verdict.
	ColumnTypes map[string]map[string]string
	// StrictSums takes the safe side for a sum or avg, whose stored parts
	// a read adds up again, of a value of a type the analysis does not
	// know (a table's column that neither ExactColumns nor ColumnTypes
	// types, a function it does not know): refused, as it could be
	// floating point. Unset, only values known floating point are
	// refused (0.1 on SQLite, CAST(x AS REAL), sqrt(x), a column
	// ColumnTypes says is a double, ...), and a column of a type not
	// known is taken for the integer or decimal it usually is.
	StrictSums bool
}

// Table is a table a query reads, as the query names it.
type Table struct {
	// Name is its name, the parts unquoted and joined by ".": the key of
	// Options.ColumnTypes.
	Name string
	// Text is the name as the query writes it, quotes included, to read
	// the same table in another statement.
	Text string
}

var tailColumnRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$`)

// IsColumnName reports whether name can be Options.TailColumn: a column
// name, or qualifier.name, of letters, digits and underscores.
func IsColumnName(name string) bool { return tailColumnRE.MatchString(name) }

// Variable is the verdict on one variable of a query.
type Variable struct {
	// Name is the code name.
	Name string
	// Column is the compared column as the query spells it (canonical,
	// lower-case); empty when the variable is not materializable.
	Column string
	// Operators are the operators of its uses, written column OP value (a
	// use written value OP column is mirrored).
	Operators []string
	// Kind says how the stored table answers the variable: KindKey,
	// KindList or KindRange; empty when the variable is not materializable.
	Kind Kind
	// Bucket is the time bucket the stored table keeps for this variable;
	// empty when it keeps the column's own values.
	Bucket engine.Bucket
	// Reason is nil when every use of the variable is materializable. It is
	// also nil, with Column empty, when the query could not be analysed as
	// far as its variables (Analysis.Reasons says why).
	Reason *Reason
}

// Kind is how a stored table answers a variable.
type Kind string

// The kinds of materialized variables.
const (
	// KindKey: compared with = to a column or row expression, stored as a
	// key column of the table.
	KindKey Kind = "key"
	// KindList: a multi-valued list, expr IN {variables.x}; the key column
	// is compared with the list bound.
	KindList Kind = "list"
	// KindRange: compared with >=, >, <, <=; a Date in an aggregating query
	// is stored by Bucket, and a range off its boundaries reads the partial
	// buckets from the source.
	KindRange Kind = "range"
	// KindMatch: compared with !=, NOT IN (a multi-valued list), LIKE, NOT
	// LIKE, ILIKE or NOT ILIKE; stored as a key column of the table, which
	// the read compares with the bound value by the same operator.
	KindMatch Kind = "match"
	// KindRead: used only in the SELECT list or HAVING of an aggregating
	// query, outside its aggregates; the stored table does not keep it,
	// and the read binds its value where the query has it (see
	// atread.go).
	KindRead Kind = "read"
)

// Analysis is the verdict on a query: per variable, and for the query.
type Analysis struct {
	// Variables in order of first use.
	Variables []Variable
	// Reasons lists every reason the query cannot be materialized, the
	// variables' first; empty when it can.
	Reasons []Reason
	// Plan is the rewrite; nil unless the query can be materialized.
	Plan *Plan
	// Untyped are the tables whose columns' declared types would decide
	// the verdict of a materializable query: a sum, total or avg whose
	// stored parts a read adds up again sums a column of theirs that
	// neither Options.ColumnTypes nor ExactColumns types, and was taken
	// for exact (without StrictSums). A host that reads the columns'
	// types from the engine's catalog passes them in Options.ColumnTypes
	// and analyses the query again, so that a sum of a floating-point
	// column is refused. Empty otherwise.
	Untyped []Table
}

// Materializable reports whether the query can be materialized.
func (a *Analysis) Materializable() bool { return a.Plan != nil }

// Reason returns the first reason as text, for
// "Cannot materialize endpoint. Reason: <reason>"; empty when materializable.
func (a *Analysis) Reason() string {
	if len(a.Reasons) == 0 {
		return ""
	}
	return a.Reasons[0].String()
}

// use is one occurrence of a variable that is a materializable comparison.
type use struct {
	op     string // expr op value; "in" for expr IN list
	expr   tree.Expr
	canon  string
	reason *Reason
	// line and column are where the variable's placeholder is.
	line, column int
	// group, when not 0, is the OR of variables the use is a branch of.
	group int
	// shift is the constant interval the variable is moved by before it
	// is compared; nil when it is compared as itself.
	shift *dateShift
	// escape is the ESCAPE string of a [NOT] [I]LIKE, which the read
	// writes after the pattern; nil for none.
	escape tree.Expr
}

// Analyze decides whether query, an endpoint's SQL template with
// {variables.x} placeholders, can be materialized, and if so rewrites it
// (Analysis.Plan). A query that cannot be materialized is not an error: the
// Analysis says why. The error is for unusable opts only.
func Analyze(query string, opts Options) (*Analysis, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	a := &Analysis{}
	phs, err := placeholder.ScanFor(opts.Engine.Lexical(), query)
	if err != nil {
		return a.refuse(CodeUnparsable, "the query cannot be read: %v", err)
	}
	order := a.addVariables(phs)
	lx := lex(query, opts.Engine)
	if lx.trap != "" {
		return a.refuse(CodeUnparsable, "the SQL parser cannot read this query faithfully: %s", lx.trap)
	}
	p, err := parse(query, lx, opts.Engine, phs)
	inlined, withWhy := false, ""
	if err == nil {
		inlined, withWhy = inlineWithWhy(p.stmt)
	}
	why, off := lx.unsupported(inlined)
	if withWhy != "" && strings.HasPrefix(why, "a query that starts with WITH") {
		why = withWhy
	}
	var window *Reason
	// inside: some window function is not in the outer SELECT list; it
	// materializes when a read computes it (see windowsInside).
	inside := false
	if why == windowReason && err == nil {
		// Windows of the outer SELECT list over partitions that hold the
		// variables' keys materialize (see windowsRefusal); others are refused
		// for the window, here, or by build.
		if other, _ := lx.unsupportedBut(inlined, true); other == "" {
			switch {
			case outerWindowsOnly(p.stmt):
				window = &Reason{Code: CodeUnsupportedQuery, Message: why}
				window.Line, window.Column = lineCol(query, off)
				why = ""
			case windowInSubquery(p.stmt):
				inside, why = true, ""
			}
		}
	}
	if why != "" && (err != nil || !unaryTilde(p, why)) {
		// SQL the engine runs, in a shape materialization does not
		// take: say which and where.
		a.refuse(CodeUnsupportedQuery, "%s", why)
		r := &a.Reasons[len(a.Reasons)-1]
		r.Line, r.Column = lineCol(query, off)
		return a, nil
	}
	if err != nil {
		if word := lx.statementWord(); word != "" {
			return a.refuse(CodeUnsupportedQuery, "only a single SELECT can be materialized, not a %s statement", strings.ToUpper(word))
		}
		return a.refuse(CodeUnparsable, "the SQL parser cannot read this query: %v", err)
	}
	if why, off := unsupportedCall(p.stmt); why != "" {
		a.refuse(CodeUnsupportedQuery, "%s", why)
		r := &a.Reasons[len(a.Reasons)-1]
		r.Line, r.Column = lineCol(query, off)
		return a, nil
	}
	sel, ok := p.stmt.(*tree.Select)
	if !ok || sel.With != nil {
		a.refuse(CodeUnsupportedQuery, "only a single SELECT can be materialized, not %s", statementKind(p.stmt))
		if off := lx.topWord("union", false); off >= 0 {
			r := &a.Reasons[len(a.Reasons)-1]
			r.Line, r.Column = lineCol(query, off)
		}
		return a, nil
	}
	// Windows in a subquery with no variable beneath it are over rows no
	// value selects: the table computes them as a run would. Judged
	// before the variables' conditions are lifted out of subqueries.
	var fixed map[*tree.FuncExpr]bool
	if inside {
		fixed = fixedWindows(sel)
	}
	liftDerived(sel)
	// Where the variables stay in the one subquery, the plan is the
	// subquery's, and the outer query is computed over its read (see
	// nested.go), windows of its SELECT list too; through a chain of
	// such subqueries, the innermost's, each outer one computed in turn.
	var outers []*tree.Select
	for {
		inner, ok := nestedInner(sel)
		if !ok {
			break
		}
		outers = append(outers, sel)
		sel, window = inner, nil
	}
	if window != nil || inside && len(outers) > 0 {
		// Windows over the groups of an aggregating query are computed
		// over the read of its groups (see windowgroups.go); in a
		// subquery, over the read of its rows too.
		if outer, inner, ok := windowsOverGroups(sel); ok {
			outers = append(outers, outer)
			sel, window = inner, nil
		} else if window != nil {
			// Windows of the outer SELECT list: see windowsRefusal below.
		} else if outer, inner, ok := windowsOverRows(sel); ok {
			outers = append(outers, outer)
			sel = inner
		}
	}
	if inside {
		if r := windowsInside(query, sel, fixed, opts); r != nil {
			a.Reasons = append(a.Reasons, *r)
			return a, nil
		}
	}
	uses, reason := a.usesOf(sel, p, phs, order)
	if reason == nil && window != nil && windowsRefusal(sel, a.judged(uses), uses, opts) != "" {
		// Windows the table cannot compute when it is built (over a
		// range, with a live tail) are computed at read over the rows
		// the stored table answers exactly (see windowsOverRows).
		if outer, inner, ok := windowsOverRows(sel); ok {
			outers = append(outers, outer)
			sel, window = inner, nil
			uses, reason = a.usesOf(sel, p, phs, order)
		}
	}
	if reason != nil {
		a.Reasons = append(a.Reasons, *reason)
		return a, nil
	}
	if !a.judge(uses) {
		return a, nil
	}
	if strings.Contains(query, "\x00") {
		return a.refuse(CodeUnparsable, "the query holds a NUL character")
	}
	// The variables computed at read are not the stored table's; build
	// sees the others, and their buckets are set back on a.Variables.
	kept, idx := storedUses(uses)
	vars := make([]Variable, len(idx))
	for j, i := range idx {
		vars[j] = a.Variables[i]
	}
	plan, untyped, reason := build(sel, lx, vars, kept, opts, window, len(outers) > 0)
	for j, i := range idx {
		a.Variables[i].Bucket = vars[j].Bucket
	}
	for i := len(outers) - 1; i >= 0 && reason == nil; i-- {
		reason = plan.around(outers[i], lx, i == 0, opts, &untyped)
	}
	if reason != nil {
		a.Reasons = append(a.Reasons, *reason)
		for i := range a.Variables {
			a.Variables[i].Bucket = ""
		}
		return a, nil
	}
	a.Plan, a.Untyped = plan, untyped
	return a, nil
}

// outerWindowsOnly reports whether every window function of stmt, a
// single SELECT, is in its SELECT list, outside subqueries, and names no
// window of a WINDOW clause.
func outerWindowsOnly(stmt tree.SelectStatement) bool {
	sel, ok := stmt.(*tree.Select)
	if !ok || sel.Window != nil {
		return false
	}
	outer := map[*tree.FuncExpr]bool{}
	_ = tree.Walk(func(n tree.Node) (bool, error) {
		if _, ok := n.(*tree.Subquery); ok {
			return false, nil
		}
		if f, ok := n.(*tree.FuncExpr); ok && f.Over != nil && f.Over.Spec != nil {
			outer[f] = true
		}
		return true, nil
	}, selectNodes(sel.SelectExprs)...)
	all := true
	_ = tree.Walk(func(n tree.Node) (bool, error) {
		if f, ok := n.(*tree.FuncExpr); ok && f.Over != nil && !outer[f] {
			all = false
		}
		return all, nil
	}, sel)
	return all && len(outer) > 0
}

// unsupportedCall names the first call of the query in a form
// materialization does not take, and its offset: an ordered-set aggregate
// (WITHIN GROUP) or a parametric one (ClickHouse's quantile(0.9)(x)),
// whose value over many stored rows follows from no parts of them.
func unsupportedCall(stmt tree.SelectStatement) (string, int) {
	why, off := "", 0
	_ = tree.Walk(func(n tree.Node) (bool, error) {
		f, ok := n.(*tree.FuncExpr)
		switch {
		case !ok:
			return true, nil
		case f.WithinGroup != nil:
			why = "ordered-set aggregates (" + f.Name.Name + "(...) WITHIN GROUP) cannot be materialized: their value over many stored rows follows from no parts of them"
		case f.HasParams:
			why = "parametric aggregates (" + f.Name.Name + "(...)(...)) cannot be materialized: their value over many stored rows follows from no parts of them"
		default:
			return true, nil
		}
		off = f.Span().Start
		return false, tree.ErrStop
	}, stmt)
	return why, off
}

// unaryTilde reports whether why, a construct lex found, is the operator
// ~ and every ~ of the query is the unary bitwise NOT, which the printer
// writes.
func unaryTilde(p *parsed, why string) bool {
	if !strings.Contains(why, "operator ~") {
		return false
	}
	ok := true
	_ = tree.Walk(func(n tree.Node) (bool, error) {
		switch x := n.(type) {
		case *tree.BinaryExpr:
			ok = ok && x.Operator != "~"
		case *tree.ComparisonExpr:
			ok = ok && !strings.Contains(x.Operator, "~")
		}
		return ok, nil
	}, p.stmt)
	return ok
}

// refuse adds a reason for the whole query and returns a for Analyze.
func (a *Analysis) refuse(code Code, format string, args ...any) (*Analysis, error) {
	a.Reasons = append(a.Reasons, Reason{Code: code, Message: fmt.Sprintf(format, args...)})
	return a, nil
}

// addVariables adds the variables of phs in order of first use, and
// returns each one's index by code name.
func (a *Analysis) addVariables(phs []placeholder.Placeholder) map[string]int {
	order := map[string]int{}
	for _, ph := range phs {
		if _, ok := order[ph.Name]; !ok {
			order[ph.Name] = len(a.Variables)
			a.Variables = append(a.Variables, Variable{Name: ph.Name})
		}
	}
	return order
}

// usesOf returns the uses of each variable in sel, in the order of
// a.Variables. Every placeholder must be seen by the parser exactly once,
// as its own node: anything else is a reason the query cannot be read
// faithfully.
func (a *Analysis) usesOf(sel *tree.Select, p *parsed, phs []placeholder.Placeholder, order map[string]int) ([][]use, *Reason) {
	uses := make([][]use, len(a.Variables))
	seen := make([]bool, len(phs))
	for _, b := range classify(sel) {
		i, ok := p.index[b.ph.Span().Start]
		if !ok || seen[i] {
			return nil, &Reason{Code: CodeUnparsable, Message: "the query holds a bind marker of its own"}
		}
		seen[i] = true
		b.use.line, b.use.column = phs[i].Line, phs[i].Column
		v := order[p.names[i]]
		uses[v] = append(uses[v], b.use)
	}
	for i, ok := range seen {
		if !ok {
			// The placeholder is in what the parser takes for a comment
			// or a string, and the engine may not.
			return nil, &Reason{Code: CodeUnparsable, Message: fmt.Sprintf(
				"the SQL parser does not see the placeholder at line %d, column %d as part of the query", phs[i].Line, phs[i].Column)}
		}
	}
	return uses, nil
}

// judged returns a copy of a's variables, each judged by its uses, for a
// decision that needs their verdicts before judge sets them.
func (a *Analysis) judged(uses [][]use) []Variable {
	out := make([]Variable, len(a.Variables))
	for i, v := range a.Variables {
		v.judge(uses[i])
		out[i] = v
	}
	return out
}

// judge sets each variable's verdict from its uses, adds the reasons of
// those that cannot be materialized, and reports whether all can.
func (a *Analysis) judge(uses [][]use) bool {
	for i := range a.Variables {
		a.Variables[i].judge(uses[i])
		if r := a.Variables[i].Reason; r != nil {
			a.Reasons = append(a.Reasons, *r)
		}
	}
	return len(a.Reasons) == 0
}

func (o Options) check() error {
	if o.Engine == nil {
		return fmt.Errorf("%w: no engine", ErrInvalidOptions)
	}
	if o.TailColumn != "" && !IsColumnName(o.TailColumn) {
		return fmt.Errorf("%w: tail column %q is not a column name (name or qualifier.name)", ErrInvalidOptions, o.TailColumn)
	}
	for name, b := range o.Buckets {
		if !b.Valid() {
			return fmt.Errorf("%w: bucket %q of variable '%s' (want minute, hour, day, week or month)", ErrInvalidOptions, b, name)
		}
	}
	return nil
}

// judge sets the verdict of v from its uses.
func (v *Variable) judge(uses []use) {
	for _, u := range uses {
		if u.reason != nil {
			r := *u.reason
			r.Variable = v.Name
			r.Line, r.Column = u.line, u.column
			v.Reason = &r
			return
		}
	}
	all := uses
	uses = nil
	if kept, _ := storedUses([][]use{all}); len(kept) > 0 {
		uses = kept[0]
	}
	if len(all) > 0 && len(uses) == 0 {
		v.Kind = KindRead
		return
	}
	for _, u := range uses {
		if u.canon != uses[0].canon {
			v.Reason = &Reason{Code: CodeDifferentColumns, Variable: v.Name, Line: u.line, Column: u.column,
				Message: fmt.Sprintf("is compared to two different columns or expressions (%s and %s); the stored table keeps one", uses[0].canon, u.canon)}
			return
		}
	}
	if len(uses) > 0 {
		v.Column = uses[0].canon
	}
	for _, u := range uses {
		v.Operators = append(v.Operators, u.op)
	}
	switch {
	case len(uses) == 0:
	case v.ranged() && v.several():
		u := uses[slices.IndexFunc(uses, func(u use) bool { return !rangeOp(u.op) && u.op != "=" })]
		v.Reason = &Reason{Code: CodeUnsupportedOperator, Variable: v.Name, Line: u.line, Column: u.column,
			Message: fmt.Sprintf("is compared with a range and with %s; the stored table keeps a range's column by bucket, where %s cannot be read; use one variable for each", strings.ToUpper(u.op), strings.ToUpper(u.op))}
		v.Column, v.Operators = "", nil
	case v.ranged():
		v.Kind = KindRange
	case slices.Contains(v.Operators, "in"):
		v.Kind = KindList
	case v.several():
		v.Kind = KindMatch
	default:
		v.Kind = KindKey
	}
}

// ranged reports whether v is compared with a range operator.
func (v *Variable) ranged() bool { return slices.ContainsFunc(v.Operators, rangeOp) }

// several reports whether v selects several stored keys without a range:
// it is compared with IN, NOT IN, !=, [NOT] LIKE or [NOT] ILIKE, so that
// one group of the query can span several stored rows.
func (v *Variable) several() bool {
	return slices.ContainsFunc(v.Operators, func(op string) bool { return op != "=" && !rangeOp(op) })
}

// rangeOp reports whether op, as Variable.Operators names it, compares
// by range: >=, >, <, <=.
func rangeOp(op string) bool { return op == ">=" || op == ">" || op == "<" || op == "<=" }

// bind is one placeholder found by classify, with its verdict.
type bind struct {
	ph *tree.Placeholder
	use
}

// classify finds every placeholder of sel and judges its place.
func classify(sel *tree.Select) []bind {
	var out []bind
	outside := func(where string, nodes ...tree.Node) {
		for _, f := range findBinds(nodes...) {
			place, hint := where, ""
			if where == "FROM" {
				place = "a subquery in FROM"
				hint = "; compare it in the outer WHERE with a column the subquery selects (and groups by), or make the subquery the outer query's only FROM item, with no variable, table or subquery outside it, to materialize at the subquery's grain"
				switch {
				case f.inJoinCondition():
					place, hint = "a JOIN condition", "; move the condition to the WHERE (for an inner join it means the same)"
				case f.has(func(n tree.Node) bool { _, ok := n.(*tree.Union); return ok }):
					place = "a UNION in FROM"
					hint = "; compare it in the WHERE of every branch, by one operator, with the column each branch selects at one position (and groups by), or in the outer WHERE"
				case f.onNullSide():
					place = "a subquery on the side of an outer join that gets NULLs"
					hint = ": the join keeps the other side's rows whatever it matches there, so the condition cannot move to the outer WHERE; compare it with a column of the side the join keeps"
				}
			}
			out = append(out, bind{f.ph, use{reason: &Reason{Code: CodeNotInWhere,
				Message: fmt.Sprintf("is used in %s; only the outer WHERE can be materialized%s", place, hint)}}})
		}
	}
	out = append(out, atReadBinds(sel)...)
	outside("FROM", tableNodes(sel.From)...)
	outside("GROUP BY", exprNodes(sel.GroupBy)...)
	outside("ORDER BY", orderNodes(sel.OrderBy)...)
	if sel.Limit != nil {
		outside("LIMIT", sel.Limit)
	}
	if sel.Where != nil {
		for _, term := range andTerms(sel.Where) {
			if bs, ok := betweenUses(term); ok {
				out = append(out, bs...)
				continue
			}
			if bs, ok := orUses(term, len(out)+1); ok {
				out = append(out, bs...)
				continue
			}
			for _, f := range findBinds(term) {
				out = append(out, bind{f.ph, judgeUse(term, f)})
			}
		}
	}
	return out
}

// The nodes of a clause's list, for Walk and findBinds.
func selectNodes(xs []tree.SelectExpr) []tree.Node { return nodesOf(xs) }
func tableNodes(xs []tree.TableExpr) []tree.Node   { return nodesOf(xs) }
func exprNodes(xs []tree.Expr) []tree.Node         { return nodesOf(xs) }
func orderNodes(xs []*tree.Order) []tree.Node      { return nodesOf(xs) }

func nodesOf[T tree.Node](xs []T) []tree.Node {
	out := make([]tree.Node, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

var rangeOps = map[string]string{"=": "=", "<": ">", ">": "<", "<=": ">=", ">=": "<="}

// operatorName is a comparison's operator as reasons name it.
func operatorName(op string) string {
	switch op {
	case "<>":
		return "!="
	case "RLIKE":
		return "REGEXP"
	case "NOT RLIKE":
		return "NOT REGEXP"
	}
	return op
}

// judgeUse judges one placeholder found inside a top-level WHERE term.
func judgeUse(term tree.Expr, f found) use {
	bad := func(code Code, format string, args ...any) use {
		return use{reason: &Reason{Code: code, Message: fmt.Sprintf(format, args...)}}
	}
	if f.has(func(n tree.Node) bool { _, ok := n.(*tree.OrExpr); return ok }) {
		msg := "is used under OR; only conditions AND-ed at the top of WHERE can be materialized"
		if c, ok := f.path[len(f.path)-1].(*tree.ComparisonExpr); ok && c.Operator == "=" {
			other := c.Left
			if placeholderOf(unparen(other)) == f.ph {
				other = c.Right
			}
			if col, ok := unparen(other).(*tree.ColName); ok {
				msg += fmt.Sprintf("; for alternatives of one column, write `%s IN {variables.list}` with a multi-valued list variable", colText(col))
			}
		}
		return bad(CodeUnderOr, "%s", msg)
	}
	if f.has(func(n tree.Node) bool { _, ok := n.(*tree.Subquery); return ok }) {
		kind := "a subquery"
		switch {
		case f.has(func(n tree.Node) bool { _, ok := n.(*tree.ExistsExpr); return ok }):
			kind = "an EXISTS subquery"
		case f.has(func(n tree.Node) bool {
			c, ok := n.(*tree.ComparisonExpr)
			return ok && strings.HasSuffix(c.Operator, "IN")
		}):
			kind = "an IN (SELECT ...) subquery"
		}
		return bad(CodeNotInWhere, "is used in %s of the WHERE; only the outer WHERE can be materialized: the stored table keeps the outer rows, not which of them the subquery matches for a value not known yet; "+
			"join the subquery's rows instead (JOIN (SELECT DISTINCT key, column FROM t) s ON s.key = e.key) and compare the variable with s.column in the outer WHERE", kind)
	}
	switch t := unparen(term).(type) {
	case *tree.ComparisonExpr:
		if t.Operator == "IN" || t.Operator == "NOT IN" {
			return judgeIn(t, f)
		}
		if op, ok := matchOps[t.Operator]; ok {
			return judgeMatch(t, op, f)
		}
		mirrored, ok := rangeOps[t.Operator]
		if !ok {
			return bad(CodeUnsupportedOperator, "is used with the operator %s; only %s can be materialized", operatorName(t.Operator), materializedOps)
		}
		left, right := unparen(t.Left), unparen(t.Right)
		if shift, r, ok := moved(right, f.ph); ok {
			return movedUse(t.Operator, left, shift, r)
		}
		if shift, r, ok := moved(left, f.ph); ok {
			return movedUse(mirrored, right, shift, r)
		}
		return bad(CodeInExpression, "is used inside an expression; compare it as itself with a column or an expression over the row (`lower(column) = {variables.x}`), or, a date, moved by a constant interval (`column >= {variables.x} - INTERVAL 7 DAY`)")
	case *tree.RangeCond:
		if t.Operator != "BETWEEN" {
			return bad(CodeUnsupportedOperator, "is used with NOT BETWEEN, which excludes a range; only =, >=, >, <, <=, IN and BETWEEN can be materialized")
		}
		return bad(CodeInExpression, "is used in BETWEEN other than as one of its ends compared with a column; write `column >= {variables.a} AND column <= {variables.b}`")
	case *tree.IsExpr:
		return bad(CodeUnsupportedOperator, "is used with the operator %s; only %s can be materialized", t.Operator, materializedOps)
	case *tree.NotExpr:
		return bad(CodeUnsupportedOperator, "is used under NOT; only %s can be materialized", materializedOps)
	}
	return bad(CodeInExpression, "is used inside an expression; it must be compared as itself to a column")
}

// colText is a column as a message writes it: its name, and its
// qualifier's, as the user wrote them.
func colText(c *tree.ColName) string {
	var parts []string
	for _, p := range c.Qualifier.Parts {
		parts = append(parts, identText(p))
	}
	return strings.Join(append(parts, identText(c.Name)), ".")
}

func identText(id tree.Ident) string {
	if id.Raw != "" {
		return id.Raw
	}
	return id.Name
}

// betweenUses returns the uses of the variables of term when it is
// column BETWEEN a AND b with each variable one end (as itself, or moved
// by an interval): read as column >= a AND column <= b. A constant end
// stays in the pre-compute query's WHERE (see constantHalf).
func betweenUses(term tree.Expr) ([]bind, bool) {
	t, ok := unparen(term).(*tree.RangeCond)
	if !ok || t.Operator != "BETWEEN" || len(findBinds(t.Left)) > 0 {
		return nil, false
	}
	var out []bind
	for _, end := range []struct {
		e  tree.Expr
		op string
	}{{t.From, ">="}, {t.To, "<="}} {
		fs := findBinds(end.e)
		if len(fs) == 0 {
			continue
		}
		if len(fs) > 1 {
			return nil, false
		}
		shift, r, ok := moved(end.e, fs[0].ph)
		if !ok {
			return nil, false
		}
		out = append(out, bind{fs[0].ph, movedUse(end.op, unparen(t.Left), shift, r)})
	}
	return out, len(out) > 0
}

// constantHalf returns the comparison a BETWEEN term of variables keeps
// in the pre-compute query: column >= a when only its upper end is a
// variable, column <= b when only its lower end; nil otherwise.
func constantHalf(term tree.Expr) tree.Expr {
	t, ok := unparen(term).(*tree.RangeCond)
	if !ok || t.Operator != "BETWEEN" {
		return nil
	}
	from, to := len(findBinds(t.From)) > 0, len(findBinds(t.To)) > 0
	switch {
	case !from && to:
		return &tree.ComparisonExpr{Operator: ">=", Left: t.Left, Right: t.From}
	case from && !to:
		return &tree.ComparisonExpr{Operator: "<=", Left: t.Left, Right: t.To}
	}
	return nil
}

// movedUse is the use of a variable, moved by shift (nil: as itself),
// compared by op with other; r is why the move cannot be read.
func movedUse(op string, other tree.Expr, shift *dateShift, r *Reason) use {
	if r != nil {
		return use{reason: r}
	}
	u := keyUse(op, other)
	u.shift = shift
	return u
}

// judgeIn judges a variable used in expr [NOT] IN list: materializable
// when the variable is the whole list, stored as the key expr like an
// equality.
func judgeIn(t *tree.ComparisonExpr, f found) use {
	list := t.Right
	if tuple, ok := list.(*tree.ValTuple); ok && len(tuple.Exprs) == 1 {
		list = unparen(tuple.Exprs[0])
	}
	if placeholderOf(list) != f.ph {
		return use{reason: &Reason{Code: CodeInExpression,
			Message: fmt.Sprintf("is one element of an %s list; it must be the whole list (expr %s {variables.x})", t.Operator, t.Operator)}}
	}
	return keyUse(strings.ToLower(t.Operator), unparen(t.Left))
}

// materializedOps names the operators a variable can be used with, for
// reasons.
const materializedOps = "=, !=, >=, >, <, <=, [NOT] IN, [NOT] LIKE and [NOT] ILIKE"

// matchOps are the operators, by the tree's spelling, that select stored
// keys one by one without a range: the read applies them to the stored
// key column as the query does to the source rows (see judgeMatch), with
// their names in Variable.Operators.
var matchOps = map[string]string{"!=": "!=", "<>": "!=", "LIKE": "like", "NOT LIKE": "not like", "ILIKE": "ilike", "NOT ILIKE": "not ilike"}

// judgeMatch judges a variable used with !=, [NOT] LIKE or [NOT] ILIKE
// (op, as Variable.Operators names it): materializable when the
// variable is the value compared as itself (the pattern, for LIKE) and
// the other side is a row expression, which is stored as a key. The read
// applies the same operator to the stored key: a stored key column has
// the type and collation of the expression it was built from (CREATE
// TABLE AS keeps them), so that it matches the same keys as the source
// rows do.
func judgeMatch(t *tree.ComparisonExpr, op string, f found) use {
	bad := func(format string, args ...any) use {
		return use{reason: &Reason{Code: CodeUnsupportedOperator, Message: fmt.Sprintf(format, args...)}}
	}
	word := strings.ToUpper(op)
	left, right := unparen(t.Left), unparen(t.Right)
	switch {
	case t.Escape != nil && !stringLiteral(t.Escape):
		return bad("is used in %s with an ESCAPE that is not a constant string, which cannot be materialized; write the escape character as a string literal (ESCAPE '!')", word)
	case placeholderOf(right) == f.ph:
		u := keyUse(op, left)
		u.escape = t.Escape // the read applies it to the stored key
		return u
	case op == "!=" && placeholderOf(left) == f.ph:
		return keyUse(op, right)
	case op != "!=" && placeholderOf(left) == f.ph:
		return bad("is the text matched by %s, not its pattern; only `column %s {variables.x}` can be materialized", word, word)
	}
	return bad("is used inside an expression with %s; compare it as itself with a column or an expression over the row (`column %s {variables.x}`)", word, word)
}

// stringLiteral reports whether e is a string literal.
func stringLiteral(e tree.Expr) bool {
	l, ok := unparen(e).(*tree.Literal)
	return ok && l.Kind == tree.StrVal
}

// keyUse is the use of a variable compared by op with other, which must be
// a deterministic expression over one row: it becomes a key of the stored
// table.
func keyUse(op string, other tree.Expr) use {
	if r := rowExprReason(other); r != nil {
		return use{reason: r}
	}
	return use{op: op, expr: other, canon: canonical(other)}
}

// andTerms splits e into its top-level AND terms, through parentheses.
func andTerms(e tree.Expr) []tree.Expr {
	switch x := e.(type) {
	case *tree.AndExpr:
		return append(andTerms(x.Left), andTerms(x.Right)...)
	case *tree.ParenExpr:
		if _, ok := unparen(x).(*tree.AndExpr); ok {
			return andTerms(unparen(x))
		}
	}
	return []tree.Expr{e}
}

func unparen(e tree.Expr) tree.Expr {
	for {
		p, ok := e.(*tree.ParenExpr)
		if !ok {
			return e
		}
		e = p.Expr
	}
}

// found is a placeholder with the nodes above it, outermost first.
type found struct {
	ph   *tree.Placeholder
	path []tree.Node
}

func (f found) has(pred func(tree.Node) bool) bool {
	for _, n := range f.path {
		if pred(n) {
			return true
		}
	}
	return false
}

// inJoinCondition reports whether the placeholder is in the ON condition
// of a join.
func (f found) inJoinCondition() bool {
	for i, n := range f.path {
		j, ok := n.(*tree.JoinTableExpr)
		if !ok || j.On == nil {
			continue
		}
		var next tree.Node = f.ph
		if i+1 < len(f.path) {
			next = f.path[i+1]
		}
		if next == tree.Node(j.On) {
			return true
		}
	}
	return false
}

// onNullSide reports whether the placeholder is in a table expression
// on the side of a LEFT or RIGHT join that the join fills with NULLs.
func (f found) onNullSide() bool {
	for i, n := range f.path {
		j, ok := n.(*tree.JoinTableExpr)
		if !ok || i+1 >= len(f.path) {
			continue
		}
		next := f.path[i+1]
		switch joinWord[j.Join] {
		case "LEFT JOIN", "NATURAL LEFT JOIN":
			if next == tree.Node(j.RightExpr) {
				return true
			}
		case "RIGHT JOIN", "NATURAL RIGHT JOIN":
			if next == tree.Node(j.LeftExpr) {
				return true
			}
		}
	}
	return false
}

// findBinds returns the placeholders under roots with their paths.
func findBinds(roots ...tree.Node) []found {
	var out []found
	var walk func(n tree.Node, path []tree.Node)
	walk = func(n tree.Node, path []tree.Node) {
		if ph, ok := n.(*tree.Placeholder); ok {
			out = append(out, found{ph, append([]tree.Node(nil), path...)})
			return
		}
		path = append(path, n)
		for _, c := range children(n) {
			walk(c, path)
		}
	}
	for _, r := range roots {
		if r != nil {
			walk(r, nil)
		}
	}
	return out
}

// children returns the direct children of n, through the tree's walker.
func children(n tree.Node) []tree.Node {
	var out []tree.Node
	root := true
	_ = tree.Walk(func(c tree.Node) (bool, error) {
		if root {
			root = false
			return true, nil
		}
		out = append(out, c)
		return false, nil
	}, n)
	return out
}

func statementKind(s tree.SelectStatement) string {
	switch x := s.(type) {
	case *tree.Union:
		return "a " + strings.Fields(x.Type)[0]
	case *tree.ParenSelect:
		return "a parenthesized SELECT"
	case *tree.Select:
		return "a query that starts with WITH"
	}
	return "a " + strings.ToUpper(nodeName(s)) + " statement"
}
