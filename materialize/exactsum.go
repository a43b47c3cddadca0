package materialize

import (
	"slices"
	"strings"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/tree"
)

// Exact sums
//
// A read that combines several stored rows of one group adds up their
// stored sums again (sum of sums, the sums and counts of avg, the distinct
// values a DISTINCT sum keeps in the grain), in another order than the
// inline query adds up the rows. Integer and decimal addition does not
// depend on the order; floating-point addition does: the per-bucket sums
// of amount * 0.1 add up to 188.40000000000003 where the rows add up to
// 188.4. So a sum or avg whose argument may be floating point is refused
// where the read adds stored parts again; where each group of the query
// is one stored row (every variable compared with =, or each group inside
// one bucket, see onebucket.go, without a live tail) the stored sum is the
// group's own and passes through.
//
// The type of the argument is read from the tree, per engine: a number
// literal with a fraction or an exponent is a double on SQLite and
// ClickHouse, a numeric on PostgreSQL, a DECIMAL on MySQL (a DOUBLE with an
// exponent); a cast says its type; +, -, *, / and % are exact when both
// sides are (but / on ClickHouse, which divides in Float64). A table's
// column has the type Options.ColumnTypes declares for it, read from the
// engine's catalog by the host (the endpoint does, see Analysis.Untyped),
// with SQLite's affinities: a REAL, FLOAT or DOUBLE column is floating
// point, a NUMERIC or DECIMAL one too (SQLite keeps a value with a
// fraction as a REAL), a column with no declared type too (a view's
// expression keeps a number with a fraction as a REAL), and an INTEGER
// one is not known (a table that is not STRICT keeps 1.5 there as a
// REAL). A column neither ColumnTypes nor
// Options.ExactColumns types has a type the analysis does not know: with
// Options.StrictSums a sum of such a column, or of anything not known
// exact, is refused the same way (the safe side, with a rewrite that sums
// an exact type); without it, it is taken for the integer or decimal it
// usually is, and only values known floating point are refused.

// numType is what the analysis knows of a number expression's type.
type numType uint8

const (
	numUnknown numType = iota // a column, a function not listed, a string
	numExact                  // an integer or a decimal: addition in any order
	numFloat                  // floating point: addition depends on the order
	numNone                   // no such column (of a typed table)
)

// either is the type of an operation on values of types a and b.
func either(a, b numType) numType {
	switch {
	case a == numFloat || b == numFloat:
		return numFloat
	case a == numExact && b == numExact:
		return numExact
	}
	return numUnknown
}

// numTypeOf returns the type of e, an expression of the query's outer
// SELECT, on the builder's engine.
func (b *builder) numTypeOf(e tree.Expr) numType { return b.typeIn(b.sel, e, 0) }

// typeIn returns the type of e, an expression of sel (nil for none),
// depth derived tables down.
func (b *builder) typeIn(sel *tree.Select, e tree.Expr, depth int) numType {
	if depth > 16 {
		return numUnknown
	}
	t := func(e tree.Expr) numType { return b.typeIn(sel, e, depth) }
	switch x := e.(type) {
	case *tree.ColName:
		return b.columnType(sel, x, depth)
	case *tree.Literal:
		return b.literalType(x)
	case *tree.ParenExpr:
		return t(x.Expr)
	case *tree.UnaryExpr:
		if x.Operator == "~" {
			return numExact
		}
		return t(x.Expr)
	case *tree.BinaryExpr:
		return b.binaryType(x, t)
	case *tree.ConvertExpr:
		return b.castType(x)
	case *tree.CaseExpr:
		r := numExact // a missing ELSE is NULL, which adds nothing
		if x.Else != nil {
			r = t(x.Else)
		}
		for _, w := range x.Whens {
			r = either(r, t(w.Val))
		}
		return r
	case *tree.FuncExpr:
		if isAggregate(x) {
			return b.aggregateType(x, t)
		}
		return b.funcType(x, t)
	case *tree.ComparisonExpr, *tree.AndExpr, *tree.OrExpr, *tree.NotExpr, *tree.IsExpr,
		*tree.RangeCond, *tree.ExistsExpr, *tree.XorExpr:
		return numExact // a truth value: 0 or 1 where it sums
	}
	return numUnknown
}

// literalType is the type of a literal: a number literal by its form and
// the engine's reading of it.
func (b *builder) literalType(l *tree.Literal) numType {
	switch l.Kind {
	case tree.NullVal, tree.BoolVal:
		return numExact
	case tree.NumVal:
	default:
		return numUnknown
	}
	if b.d.FloatLiteral(l.Text) {
		return numFloat // 0.1 on SQLite and ClickHouse, 1e3 on MySQL
	}
	return numExact
}

// binaryType is the type of an arithmetic or bitwise operation.
func (b *builder) binaryType(x *tree.BinaryExpr, t func(tree.Expr) numType) numType {
	switch strings.ToLower(x.Operator) {
	case "+", "-", "*", "%", "mod", "div":
	case "/":
		if b.d.FloatDivision() {
			return numFloat // ClickHouse's / is Float64 division
		}
	case "&", "|", "^", "<<", ">>", "#":
		return numExact
	case "->", "->>":
		if b.d.FloatJSON() {
			b.noteFloat(floatJSON)
			return numFloat
		}
		return numUnknown
	default:
		return numUnknown // ||, ->, date arithmetic, ...
	}
	return either(t(x.Left), t(x.Right))
}

// castType is the type a cast converts to.
func (b *builder) castType(x *tree.ConvertExpr) numType {
	if x.Form == "CONVERT USING" {
		return numUnknown
	}
	return typeNamed(b.d, x.Type, false)
}

// typeNamed is the type of a value of the type name on engine d: a cast's
// target, or, column set, a table column's declared type as the engine's
// catalog names it.
func typeNamed(d engine.Engine, name string, column bool) numType {
	t := strings.ToLower(strings.Trim(name, "'\" "))
	for unwrapped := false; !unwrapped; {
		unwrapped = true
		for _, wrap := range []string{"nullable(", "lowcardinality("} {
			if strings.HasPrefix(t, wrap) && strings.HasSuffix(t, ")") {
				t, unwrapped = strings.TrimSpace(t[len(wrap):len(t)-1]), false
			}
		}
	}
	if i := strings.IndexByte(t, '('); i >= 0 {
		t = t[:i]
	}
	t = strings.TrimSpace(t)
	sqlite := d.ExactSumType() == ""
	if column && sqlite {
		// SQLite's affinity of a declared type: a name holding INT is
		// INTEGER, which keeps a value with a fraction as a REAL in a
		// table that is not STRICT; REAL, FLOA or DOUB is REAL. A column
		// with no declared type (a view's expression, json_extract of a
		// property) keeps each value as it comes, a number with a
		// fraction as a REAL: floating point, as far as a sum can tell.
		switch {
		case t == "":
			return numFloat
		case strings.Contains(t, "int"):
			return numUnknown
		case strings.Contains(t, "real"), strings.Contains(t, "floa"), strings.Contains(t, "doub"):
			return numFloat
		}
	}
	switch {
	case strings.HasPrefix(t, "float"), strings.HasPrefix(t, "double"), t == "real", t == "bfloat16":
		return numFloat
	case strings.HasPrefix(t, "decimal"), t == "numeric", t == "dec", t == "fixed", t == "money":
		if sqlite {
			// SQLite's NUMERIC affinity: a value with a fraction stays
			// a REAL.
			return numFloat
		}
		return numExact
	case t == "bool" || t == "boolean":
		if sqlite {
			return numUnknown // NUMERIC affinity
		}
		return numExact
	}
	for _, w := range strings.Fields(t) {
		switch {
		case w == "interval" || w == "point":
			return numUnknown
		case strings.HasPrefix(w, "int"), strings.HasPrefix(w, "uint"), strings.HasSuffix(w, "int"),
			strings.HasSuffix(w, "serial"), w == "signed", w == "unsigned":
			// int, bigint, smallint, int8, Int64, UInt32, SIGNED,
			// BIGINT UNSIGNED, serial, ...
			return numExact
		}
	}
	return numUnknown
}

// floatFuncs are scalar functions whose value is floating point on every
// engine the library runs, by lower-case name.
var floatFuncs = map[string]bool{
	"sqrt": true, "exp": true, "ln": true, "log": true, "log2": true, "log10": true, "pow": true,
	"power": true, "sin": true, "cos": true, "tan": true, "asin": true, "acos": true, "atan": true,
	"atan2": true, "pi": true, "radians": true, "degrees": true, "cbrt": true, "tofloat32": true,
	"tofloat64": true, "tofloat32orzero": true, "tofloat64orzero": true, "tofloat32ornull": true,
	"tofloat64ornull": true, "rand": true, "randcanonical": true, "jsonextractfloat": true,
	"visitparamextractfloat": true, "simplejsonextractfloat": true,
}

// jsonFuncs take a value out of JSON, a number with a fraction as a
// floating-point value where the engine's FloatJSON says so, by lower-case
// name.
var jsonFuncs = map[string]bool{
	"json_extract": true, "json_value": true, "json_unquote": true,
}

// floatJSON is what a refusal says of a sum of a value taken out of JSON.
const floatJSON = "a number taken out of JSON, which is floating point when it has a fraction"

// sameTypeFuncs are scalar functions whose value has the type of the
// arguments they pass through, by lower-case name (the arguments'
// indexes; nil for all).
var sameTypeFuncs = map[string][]int{
	"abs": {0}, "round": {0}, "floor": {0}, "ceil": {0}, "ceiling": {0}, "trunc": {0},
	"truncate": {0}, "sign": {0}, "coalesce": nil, "ifnull": nil, "nullif": {0}, "greatest": nil,
	"least": nil, "if": {1, 2}, "iif": {1, 2}, "isnull": nil, "nvl": nil,
}

// funcType is the type of a scalar function's value.
func (b *builder) funcType(f *tree.FuncExpr, t func(tree.Expr) numType) numType {
	name := lowered(f.Name)
	if floatFuncs[name] {
		return numFloat
	}
	if strings.HasPrefix(name, "toint") || strings.HasPrefix(name, "touint") || strings.HasPrefix(name, "todecimal") {
		return numExact // ClickHouse's toInt64(x), toDecimal64(x, 2), ...
	}
	switch name {
	case "jsonextractint", "jsonextractuint", "visitparamextractint", "visitparamextractuint",
		"simplejsonextractint", "simplejsonextractuint":
		return numExact
	}
	if jsonFuncs[name] && b.d.FloatJSON() {
		b.noteFloat(floatJSON)
		return numFloat
	}
	switch name {
	case "length", "char_length", "character_length", "octet_length", "instr", "strpos", "position", "sign_int":
		return numExact
	}
	idx, ok := sameTypeFuncs[name]
	if !ok || len(f.Exprs) == 0 {
		return numUnknown
	}
	r := numExact
	for i, a := range f.Exprs {
		if idx == nil || containsInt(idx, i) {
			r = either(r, t(a))
		}
	}
	return r
}

// tableColumnType is the type of column of the table tn, and whether the
// options type the table's columns: ExactColumns lists the column, or
// ColumnTypes lists the table (numNone then for a column it does not
// have).
func (b *builder) tableColumnType(tn *tree.TableName, column string) (numType, bool) {
	if tn == nil || len(tn.Parts) == 0 || len(b.opts.ExactColumns) == 0 && len(b.opts.ColumnTypes) == 0 {
		return numUnknown, false
	}
	table := tableOf(tn).Name
	for _, c := range b.opts.ExactColumns {
		if strings.EqualFold(c, table+"."+column) {
			return numExact, true
		}
	}
	for name, cols := range b.opts.ColumnTypes {
		if !strings.EqualFold(name, table) {
			continue
		}
		found, r := false, numNone
		for c, typ := range cols {
			if !strings.EqualFold(c, column) {
				continue
			}
			// Two columns whose names differ in case only: the
			// type of either.
			t := typeNamed(b.d, typ, true)
			if found && t != r {
				t = either(either(r, t), numUnknown)
			}
			found, r = true, t
			if t == numFloat {
				if strings.TrimSpace(typ) == "" {
					b.noteFloat(column + " of " + table + ", a column with no declared type, whose numbers with a fraction SQLite keeps as REAL")
				} else {
					b.noteFloat(column + " of " + table + ", a column of type " + typ)
				}
			}
		}
		return r, true
	}
	return numUnknown, false
}

// tableOf is tn as a Table.
func tableOf(tn *tree.TableName) Table {
	names, texts := make([]string, len(tn.Parts)), make([]string, len(tn.Parts))
	for i, p := range tn.Parts {
		names[i], texts[i] = p.Name, p.Raw
		if p.Raw == "" {
			texts[i] = p.Name
		}
	}
	return Table{Name: strings.Join(names, "."), Text: strings.Join(texts, ".")}
}

// aggregateType is the type of an aggregate's value (a derived table's
// column that a sum adds up again): a count is an integer, a sum, min or
// max has its argument's type, SQLite's total is a double, and an avg is
// a double on SQLite and ClickHouse, a decimal over exact values on
// PostgreSQL and MySQL.
func (b *builder) aggregateType(f *tree.FuncExpr, t func(tree.Expr) numType) numType {
	name := lowered(f.Name)
	switch {
	case countLike[name]:
		return numExact
	case name == "total":
		return numFloat
	case len(f.Exprs) != 1:
		return numUnknown
	}
	switch name {
	case "sum", "min", "max", "sumif", "minif", "maxif", "any", "anylast":
		return t(f.Exprs[0])
	case "avg":
		if !b.d.DecimalAggregates() {
			return numFloat
		}
		return t(f.Exprs[0])
	}
	return numUnknown
}

// columnType is the type of the column c of sel: a column of a derived
// table in sel's FROM (a subquery, or a WITH query put there) has the
// type of the expression the derived table selects under its name; a
// column of a table has a type the analysis does not know.
func (b *builder) columnType(sel *tree.Select, c *tree.ColName, depth int) numType {
	if sel == nil {
		return numUnknown
	}
	found, r := false, numUnknown
	var visit func(te tree.TableExpr) bool
	visit = func(te tree.TableExpr) bool {
		switch x := te.(type) {
		case *tree.JoinTableExpr:
			return visit(x.LeftExpr) && visit(x.RightExpr)
		case *tree.ParenTableExpr:
			for _, e := range x.Exprs {
				if !visit(e) {
					return false
				}
			}
			return true
		case *tree.AliasedTableExpr:
			name := x.As.Name
			sub, isSub := x.Expr.(*tree.Subquery)
			if tn, ok := x.Expr.(*tree.TableName); ok && name == "" && len(tn.Parts) > 0 {
				name = tn.Parts[len(tn.Parts)-1].Name
			}
			if !c.Qualifier.IsEmpty() && !strings.EqualFold(c.Qualifier.Parts[len(c.Qualifier.Parts)-1].Name, name) {
				return true
			}
			if !isSub {
				// A table's column: of its type when the options type
				// the table's columns. Unqualified, a column a typed
				// table has is that table's (another table's of that
				// name would make it ambiguous), and one it does not
				// have is another table's.
				tn, _ := x.Expr.(*tree.TableName)
				t, typed := b.tableColumnType(tn, c.Name.Name)
				switch {
				case typed && t == numNone:
					if !c.Qualifier.IsEmpty() {
						found, r = true, numUnknown
						return false
					}
					return true
				case typed:
					if found && r != t {
						return false
					}
					found, r = true, t
					return true
				}
				if tn != nil && len(tn.Parts) > 0 && b.sums != nil {
					b.sums.pending = append(b.sums.pending, tn)
				}
				if !c.Qualifier.IsEmpty() {
					found, r = true, numUnknown
					return false
				}
				return true
			}
			// A UNION's columns are named by its first branch, and
			// typed by every branch's expression at their position.
			branches, ok := unionBranches(sub.Select)
			if !ok || len(x.Columns) > 0 {
				return false
			}
			for i, se := range branches[0].SelectExprs {
				ae, ok := se.(*tree.AliasedExpr)
				if !ok {
					return false // a star: any column
				}
				out := ae.As.Name
				if out == "" {
					if cn, ok := ae.Expr.(*tree.ColName); ok {
						out = cn.Name.Name
					}
				}
				if !strings.EqualFold(out, c.Name.Name) {
					continue
				}
				if found {
					return false // ambiguous
				}
				found, r = true, numExact
				for _, br := range branches {
					if i >= len(br.SelectExprs) {
						return false
					}
					be, ok := br.SelectExprs[i].(*tree.AliasedExpr)
					if !ok {
						return false
					}
					r = either(r, b.typeIn(br, be.Expr, depth+1))
				}
			}
		}
		return true
	}
	for _, te := range sel.From {
		if !visit(te) {
			return numUnknown
		}
	}
	return r
}

func containsInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// readdsSums reports whether a read can add up several stored parts of
// one group of the query: a variable compared with a range or a list (or
// a group key that holds a variable) spreads a group over several stored
// rows, unless each group lies in one bucket and every other variable is
// compared with = (see oneBucketShape); a live tail adds the newer rows'
// parts to the stored ones.
func (b *builder) readdsSums(distinct bool) bool {
	if b.opts.TailColumn != "" {
		return true
	}
	if !b.multiRow() {
		return false
	}
	// In one bucket, a DISTINCT sum still adds up the distinct values
	// the grain keeps, over several stored rows.
	return distinct || !b.oneBucketShape
}

// checkExactSum refuses the sum or avg f (name) whose stored parts a read
// adds up again when its argument may be floating point.
func (b *builder) checkExactSum(f *tree.FuncExpr, name string) error {
	if len(f.Exprs) != 1 || !b.readdsSums(f.Distinct) {
		return nil
	}
	arg := f.Exprs[0]
	t := b.judgeSum(arg)
	if t == numExact || t == numUnknown && !b.opts.StrictSums {
		return nil
	}
	call, argText := b.sourceText(f), b.sourceText(arg)
	return failAt(f.Span().Start, CodeAggregate,
		"%s %s, and the read adds up the sums stored per bucket or row again, in another order than the query adds up its rows; floating-point addition in another order can change the last digits, and a materialized answer must equal the query's; %s",
		call, b.addsUp(t), b.exactRewrite(name, argText))
}

// judgeSum is the type of arg, a summed value, as numTypeOf gives it;
// when it is not known and taken for exact (no StrictSums), the tables
// whose untyped columns it sums are kept for Analysis.Untyped.
func (b *builder) judgeSum(arg tree.Expr) numType {
	if b.sums == nil {
		b.sums = &sumTypes{}
	}
	st := b.sums
	st.pending, st.floatColumn = st.pending[:0], ""
	t := b.numTypeOf(arg)
	if t != numUnknown || b.opts.StrictSums {
		return t
	}
	for _, tn := range st.pending {
		if p := tableOf(tn); !slices.Contains(st.untyped, p) {
			st.untyped = append(st.untyped, p)
		}
	}
	return t
}

// exactRewrite suggests an argument of an exact type for the engine.
func (b *builder) exactRewrite(name, arg string) string {
	if t := b.d.ExactSumType(); t != "" {
		return "add up an exact type instead: " + name + "(CAST(" + arg + " AS " + t + "))"
	}
	// SQLite has no decimal type: an integer, such as cents.
	return "add up an integer instead, such as cents: " + name + "(CAST(round((" + arg + ") * 100) AS INTEGER)) / 100.0"
}

// sourceText is n as the query writes it, or its printed form when the
// span does not fit the query's text.
func (b *builder) sourceText(n tree.Expr) string {
	sp := n.Span()
	if sp.Start >= 0 && sp.End > sp.Start && sp.End <= len(b.src) {
		return strings.Join(strings.Fields(b.src[sp.Start:sp.End]), " ")
	}
	s, _ := b.print(n)
	return s
}

// checkOuterSums refuses a sum, total or avg of outer, a query computed
// over the read of its subquery (see nested.go), whose argument may be
// floating point: the read answers the subquery's rows in another order
// than the inline query computes them, and the outer adds them up in
// that order. A window that orders its rows (OVER (ORDER BY ...)) adds
// them up in its own order.
func (b *builder) checkOuterSums(outer *tree.Select) error {
	var err error
	_ = tree.Walk(func(n tree.Node) (bool, error) {
		if _, ok := n.(*tree.Subquery); ok {
			return false, nil
		}
		f, ok := n.(*tree.FuncExpr)
		if !ok || len(f.Exprs) != 1 || !f.Qualifier.IsEmpty() {
			return true, nil
		}
		switch lowered(f.Name) {
		case "sum", "total", "avg":
		default:
			return true, nil
		}
		if f.Over != nil && (f.Over.Spec == nil || len(f.Over.Spec.OrderBy) > 0) {
			return true, nil
		}
		if t := b.judgeSum(f.Exprs[0]); t == numFloat || t == numUnknown && b.opts.StrictSums {
			err = failAt(f.Span().Start, CodeAggregate,
				"%s %s over the rows of its subquery, which the read answers from the stored table in another order than the query computes them; floating-point addition in another order can change the last digits, and a materialized answer must equal the query's; %s",
				b.sourceText(f), b.addsUp(t), b.exactRewrite(lowered(f.Name), b.sourceText(f.Exprs[0])))
			return false, tree.ErrStop
		}
		return true, nil
	}, outerNodes(outer)...)
	return err
}

// noteFloat keeps what makes the sum being judged floating point, for its
// refusal (see addsUp).
func (b *builder) noteFloat(what string) {
	if b.sums != nil {
		b.sums.floatColumn = what
	}
}

// addsUp says, in a refusal, what a sum of values of type t adds up: t is
// numFloat or numUnknown; a floating-point column the sum reads is named.
func (b *builder) addsUp(t numType) string {
	switch {
	case t == numUnknown:
		return "adds up values the analysis cannot tell are not floating point (a column's type is not known to it)"
	case b.sums != nil && b.sums.floatColumn != "":
		return "adds up floating-point values (" + b.sums.floatColumn + ")"
	}
	return "adds up floating-point values"
}
