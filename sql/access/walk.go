package access

import (
	"strings"
	"unicode/utf8"

	"github.com/endpointkit/endpointkit/sql/tree"
)

// The checker walks the tree package sql/tree read, the library's one
// reading of a query's grammar: every table a FROM list names, every
// function called and every table function read is checked against the
// rules; names that WITH defines are scoped as the engines scope them,
// and what engines would read differently is refused (a WITH name that
// shadows a table of the rules, a name that matches a WITH query only
// when case is ignored, IN followed by a bare name, which ClickHouse and
// SQLite read as a table).

// cte is one name defined by WITH.
type cte struct {
	name   string
	quoted bool
}

// checker walks one tree.
type checker struct {
	src    string
	rules  *ruleset
	frames [][]cte // WITH scopes, innermost last
	// entered is the node whose children the walk is about to visit
	// without checking the node itself again (see enter).
	entered tree.Node
	// types are the arguments of convert(x, type) that are types with
	// parameters (DECIMAL(10, 2)), not calls.
	types []tree.Node
	visit func(tree.Node) (bool, error)
}

// walkTree checks the statement of t.
func walkTree(t *tree.Tree, rs *ruleset) *Error {
	c := &checker{src: t.Src, rules: rs}
	c.visit = c.node
	if err := c.walk(t.Stmt); err != nil {
		return err
	}
	return nil
}

func (c *checker) walk(n tree.Node) *Error {
	if err := tree.Walk(c.visit, n); err != nil {
		return err.(*Error)
	}
	return nil
}

// enter walks the children of n, which the visitor already checked.
func (c *checker) enter(n tree.Node) *Error {
	c.entered = n
	return c.walk(n)
}

// node checks n and tells the walk whether to visit its children.
func (c *checker) node(n tree.Node) (bool, error) {
	if n == c.entered {
		c.entered = nil
		return true, nil
	}
	for i, t := range c.types {
		if n == t {
			c.types = append(c.types[:i], c.types[i+1:]...)
			return false, nil
		}
	}
	var err *Error
	switch v := n.(type) {
	case *tree.Select:
		if v.With == nil {
			return true, nil
		}
		err = c.scoped(v, v.With)
	case *tree.Union:
		if v.With == nil {
			return true, nil
		}
		err = c.scoped(v, v.With)
	case *tree.ParenSelect:
		if v.With == nil {
			return true, nil
		}
		err = c.scoped(v, v.With)
	case *tree.With:
		// Read by scoped, with the query it belongs to.
		return false, nil
	case *tree.AliasedTableExpr:
		err = c.tableExpr(v)
	case *tree.FuncExpr:
		if err = c.call(v); err == nil {
			return true, nil
		}
	case *tree.ColName:
		err = c.column(v)
		return false, errOrNil(err)
	case *tree.ComparisonExpr:
		if err = c.in(v); err == nil {
			return true, nil
		}
	case *tree.StarExpr:
		if err = c.star(v); err == nil {
			return true, nil
		}
	case *tree.ConvertExpr:
		if err = c.castType(v); err == nil {
			return true, nil
		}
	default:
		return true, nil
	}
	return false, errOrNil(err)
}

// errOrNil returns err as an error, nil when it is a nil *Error.
func errOrNil(err *Error) error {
	if err == nil {
		return nil
	}
	return err
}

// scoped walks query n, whose WITH clause is w: the names w defines are in
// scope for the rest of n, and only there.
func (c *checker) scoped(n tree.Node, w *tree.With) *Error {
	mark := len(c.frames)
	c.frames = append(c.frames, nil)
	fi := len(c.frames) - 1
	for _, d := range w.CTEs {
		if err := c.define(d.Name, fi, d.Subquery != nil); err != nil {
			return err
		}
		if d.Subquery == nil {
			// ClickHouse's WITH expression AS name: a value, not a table.
			if err := c.walk(d.Expr); err != nil {
				return err
			}
			continue
		}
		def := cte{name: d.Name.Name, quoted: d.Name.Quote != 0}
		if w.Recursive {
			if err := c.recursiveBody(d.Subquery, fi, def); err != nil {
				return err
			}
		} else if err := c.walk(d.Subquery); err != nil {
			return err
		}
		c.frames[fi] = append(c.frames[fi], def)
	}
	err := c.enter(n)
	c.frames = c.frames[:mark]
	return err
}

// recursiveBody walks q, the body of the WITH RECURSIVE query def, whose
// WITH frame is fi. The query's name means the query itself only in the
// recursive arms of its body: each arm after the first of the UNION [ALL]
// chain the body is, an arm that is not itself a set operation. Anywhere
// else (a body that is no UNION, its first arm, an INTERSECT or EXCEPT,
// the ORDER BY or LIMIT of the whole UNION) ClickHouse reads the table of
// that name, and the other engines refuse the query, so there the name is
// checked as a table's.
func (c *checker) recursiveBody(q *tree.Subquery, fi int, def cte) *Error {
	plain, arms := tree.RecursiveArms(q)
	for _, n := range plain {
		if err := c.walk(n); err != nil {
			return err
		}
	}
	if len(arms) == 0 {
		return nil
	}
	n := len(c.frames[fi])
	c.frames[fi] = append(c.frames[fi], def)
	defer func() { c.frames[fi] = c.frames[fi][:n] }()
	for _, a := range arms {
		if err := c.walk(a); err != nil {
			return err
		}
	}
	return nil
}

// define checks a name that WITH defines: it may not be the name of a
// protected table, of a table the rules list, or of a tenant column, since
// which of the two a later mention means would then depend on the engine's
// scoping (ClickHouse copies WITH into every subquery). It also refuses a
// name defined twice in one WITH. table tells a WITH query's name (in
// frame fi) from ClickHouse's WITH expression AS name.
func (c *checker) define(id tree.Ident, fi int, table bool) *Error {
	name := id.Name
	if name == "" {
		return errorAt(c.src, id.At, ReasonUnsupported, "empty name")
	}
	if reason, _ := protectedTable([]string{name}); reason != "" {
		e := errorAt(c.src, id.At, reason, "WITH may not define %q: it is the name of a table that can never be read", echo(name))
		e.Table = echo(name)
		return e
	}
	if c.rules.shadowable[asciiLower(name)] {
		e := errorAt(c.src, id.At, ReasonAmbiguous, "WITH may not define %q: it is the name of a table or tenant column of the rules; rename it", echo(name))
		e.Table = echo(name)
		return e
	}
	if table {
		for _, d := range c.frames[fi] {
			if asciiEqualFold(d.name, name) {
				return errorAt(c.src, id.At, ReasonAmbiguous, "WITH defines %q twice", echo(name))
			}
		}
	}
	return nil
}

// cteLookup reports whether the one-part name id refers to a WITH query in
// scope. A name that matches one only when case is ignored is refused:
// PostgreSQL folds unquoted names, ClickHouse does not, so it could mean
// the WITH query on one engine and a table on another.
func (c *checker) cteLookup(id tree.Ident) (bool, *Error) {
	for fi := len(c.frames) - 1; fi >= 0; fi-- {
		f := c.frames[fi]
		for ci := len(f) - 1; ci >= 0; ci-- {
			d := f[ci]
			if !asciiEqualFold(d.name, id.Name) {
				continue
			}
			if d.name == id.Name && (d.quoted == (id.Quote != 0) || !hasUpper(d.name)) {
				return true, nil
			}
			e := errorAt(c.src, id.At, ReasonAmbiguous, "%q could mean the WITH query %q or a table, depending on the engine's rules for case and quotes; write it exactly as WITH defines it", echo(id.Name), echo(d.name))
			e.Table = echo(id.Name)
			return false, e
		}
	}
	return false, nil
}

// tableExpr checks one item of a FROM list: a table, a table function or
// a derived table.
func (c *checker) tableExpr(a *tree.AliasedTableExpr) *Error {
	switch x := a.Expr.(type) {
	case *tree.TableName:
		if err := c.table(x); err != nil {
			return err
		}
		return nil
	case *tree.FuncExpr:
		if err := c.tableFunction(x); err != nil {
			return err
		}
		return c.enter(x)
	}
	return c.enter(a)
}

// table resolves a table's name: a WITH query in scope, or a table the
// rules allow.
func (c *checker) table(tn *tree.TableName) *Error {
	first := tn.Parts[0]
	dotted := dottedName(tn.Parts)
	fail := func(reason Reason, format string, args ...any) *Error {
		e := errorAt(c.src, first.At, reason, format, args...)
		e.Table = echo(dotted)
		return e
	}
	if len(tn.Parts) > 3 {
		return fail(ReasonUnsupported, "table name %q has more than three parts", echo(dotted))
	}
	if len(tn.Parts) == 1 {
		isCTE, err := c.cteLookup(first)
		if err != nil || isCTE {
			return err
		}
	}
	parts := make([]string, len(tn.Parts))
	for i, p := range tn.Parts {
		if p.Name == "" {
			return fail(ReasonUnsupported, "empty name")
		}
		parts[i] = p.Name
	}
	if reason, why := protectedTable(parts); reason != "" {
		return fail(reason, "the query reads table %q: %s", echo(dotted), why)
	}
	if c.rules.tables[asciiLower(dotted)] != nil {
		return nil
	}
	if !c.rules.anyTable {
		return fail(ReasonTable, "the query reads table %q, which endpoints of this project may not read", echo(dotted))
	}
	// Any table may be read, but not one that may be a scoped table of the
	// rules under another schema or database (main.events, public.events,
	// db.events for events; sessions for analytics.sessions), nor one that
	// is a protected, catalog or listed table to an engine that folds more
	// than ASCII.
	last := parts[len(parts)-1]
	if name, ok := c.rules.scopedLast[asciiLower(last)]; ok {
		return fail(ReasonAmbiguous, "table %q may be the table %q of the rules under another schema or database, which would be read without its project's scope; write it as %q", echo(dotted), name, name)
	}
	if cut := pgTruncated(last); cut != last {
		if name, ok := c.rules.scopedLast[asciiLower(cut)]; ok {
			return fail(ReasonAmbiguous, "table %q is longer than 63 bytes: PostgreSQL cuts a name to its first 63 bytes and would read the table %q of the rules without its project's scope; write it as %q", echo(dotted), name, name)
		}
	}
	for _, p := range parts {
		if r, ok := foldsToASCII(p); ok {
			return fail(ReasonAmbiguous, "table name %q holds %q, which MySQL's lower_case_table_names reads as an ASCII letter; write the name in ASCII", echo(dotted), string(r))
		}
	}
	return nil
}

// pgTruncated returns name as PostgreSQL reads it: at most its first 63
// bytes (NAMEDATALEN - 1), cut where a character starts.
func pgTruncated(name string) string {
	const max = 63
	if len(name) <= max {
		return name
	}
	n := max
	for n > 0 && !utf8.RuneStart(name[n]) {
		n--
	}
	return name[:n]
}

// dottedName joins the parts of a name with dots, without quotes.
func dottedName(parts []tree.Ident) string {
	if len(parts) == 1 {
		return parts[0].Name
	}
	names := make([]string, len(parts))
	for i, p := range parts {
		names[i] = p.Name
	}
	return strings.Join(names, ".")
}

// tableFunction checks name(args) in a FROM list.
func (c *checker) tableFunction(f *tree.FuncExpr) *Error {
	dotted := f.Name.Name
	if !f.Qualifier.IsEmpty() {
		dotted = f.Qualifier.Name + "." + dotted
	}
	at := f.Span().Start
	fail := func(format string, args ...any) *Error {
		e := errorAt(c.src, at, ReasonTableFunction, format, args...)
		e.Function = echo(dotted)
		return e
	}
	if !f.Qualifier.IsEmpty() {
		return fail("the query reads from table function %q: schema-qualified table functions are not allowed", echo(dotted))
	}
	if !c.rules.tableFunctionAllowed(f.Name.Name) {
		return fail("the query reads from table function %q, which is not allowed", echo(dotted))
	}
	return nil
}

// call checks a function call in an expression.
func (c *checker) call(f *tree.FuncExpr) *Error {
	name := f.Name.Name
	at := f.Span().Start
	fail := func(reason Reason, fn string, format string, args ...any) *Error {
		e := errorAt(c.src, at, reason, format, args...)
		e.Function = echo(fn)
		return e
	}
	if !f.Qualifier.IsEmpty() {
		dotted := f.Qualifier.Name + "." + name
		return fail(ReasonFunction, dotted, "the query calls %q: schema-qualified functions are not allowed", echo(dotted))
	}
	if f.Name.Quote == 0 {
		l := asciiLower(name)
		if f.NoParens {
			if sessionWords[l] {
				return fail(ReasonFunction, name, "the query reads %q (the session's identity), which is not allowed", name)
			}
			return nil
		}
		switch {
		case l == "in":
			return fail(ReasonUnsupported, name, "the function form %q(x, t) is not allowed: ClickHouse reads a table named as its second argument; write x IN (...)", name)
		case keywordCalls[l] || castFunctions[l] || keywordArgFunctions[l]:
			return nil
		case l == "convert":
			return c.convert(f)
		}
	}
	if !c.rules.functionAllowed(name) {
		return fail(ReasonFunction, name, "the query calls function %q, which is not allowed", echo(name))
	}
	return nil
}

// convert checks convert(x, type) as a function of values (MySQL's
// CONVERT reads a type there, PostgreSQL's convert a name): a type with
// parameters (DECIMAL(10, 2)) is no call.
func (c *checker) convert(f *tree.FuncExpr) *Error {
	if len(f.Exprs) != 2 {
		return nil
	}
	t, ok := f.Exprs[1].(*tree.FuncExpr)
	if !ok || t.Name.Quote != 0 || !t.Qualifier.IsEmpty() || !paramTypes[asciiLower(t.Name.Name)] {
		return nil
	}
	for _, x := range t.Exprs {
		switch x.(type) {
		case *tree.Literal, *tree.ColName:
		default:
			return nil
		}
	}
	// A type, not a call: the walk passes over it.
	c.types = append(c.types, t)
	return nil
}

// regTypes are PostgreSQL's object identifier types: a cast to or from one
// looks a name up in the catalog ('pg_authid'::regclass reads pg_class,
// 10::regrole::text answers a role's name).
var regTypes = setOf("regclass", "regcollation", "regconfig", "regdictionary", "regnamespace",
	"regoper", "regoperator", "regproc", "regprocedure", "regrole", "regtype")

// castType refuses a cast to one of regTypes, however the type is written
// (quoted, schema-qualified, an array of it).
func (c *checker) castType(v *tree.ConvertExpr) *Error {
	if v.Form == "CONVERT USING" {
		return nil
	}
	name := asciiLower(v.Type)
	if i := strings.IndexAny(name, "(["); i >= 0 {
		name = name[:i]
	}
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	name = strings.Trim(name, " \t\n\r\"`'")
	if !regTypes[name] {
		return nil
	}
	return errorAt(c.src, v.Span().Start, ReasonCatalog,
		"the query casts to %q, which reads the system catalog (PostgreSQL's reg* types look names up in it); cast to text or a number instead", echo(v.Type))
}

// column checks a column's name: a statement's keyword or the session's
// identity written where a column stands.
func (c *checker) column(n *tree.ColName) *Error {
	if !n.Qualifier.IsEmpty() || n.Name.Quote != 0 {
		return nil
	}
	w := asciiLower(n.Name.Name)
	switch {
	case w == "settings" || w == "format":
		return errorAt(c.src, n.Name.At, ReasonStatement, "%s is not allowed: a query may not change the engine's settings or output", strings.ToUpper(w))
	case sessionWords[w]:
		e := errorAt(c.src, n.Name.At, ReasonFunction, "the query reads %q (the session's identity), which is not allowed", n.Name.Name)
		e.Function = echo(n.Name.Name)
		return e
	case statementWords[w]:
		return errorAt(c.src, n.Name.At, ReasonStatement, "%s is not allowed: a query may only read (quote a column with this name)", strings.ToUpper(w))
	}
	return nil
}

// in checks what IN takes: a parenthesised list or query, or a
// placeholder. A bare name (IN t) reads table t on SQLite and ClickHouse,
// and so does a name alone in parentheses on ClickHouse (IN (t)).
func (c *checker) in(n *tree.ComparisonExpr) *Error {
	if !strings.HasSuffix(n.Operator, "IN") {
		return nil
	}
	switch r := n.Right.(type) {
	case *tree.Subquery, *tree.Placeholder:
		return nil
	case *tree.ValTuple:
		if len(r.Exprs) != 1 {
			return nil
		}
		x := r.Exprs[0]
		for {
			p, ok := x.(*tree.ParenExpr)
			if !ok {
				break
			}
			x = p.Expr
		}
		if col, ok := x.(*tree.ColName); ok {
			name := colDotted(col)
			e := errorAt(c.src, col.Span().Start, ReasonUnsupported, "IN (%s) reads table %q on ClickHouse; write IN (SELECT ...) or a list of values", echo(name), echo(name))
			e.Table = echo(name)
			return e
		}
		return nil
	case *tree.ColName:
		name := colDotted(r)
		e := errorAt(c.src, r.Span().Start, ReasonUnsupported, "IN must be followed by a parenthesised list or subquery: IN %q reads a table on SQLite and ClickHouse", echo(name))
		e.Table = echo(name)
		return e
	case *tree.Literal:
		if r.Kind == tree.StrVal {
			// SQLite reads a string where a name belongs as the name.
			name := strings.ReplaceAll(r.Text[1:len(r.Text)-1], "''", "'")
			e := errorAt(c.src, r.Span().Start, ReasonUnsupported, "IN must be followed by a parenthesised list or subquery: IN %q reads a table on SQLite and ClickHouse", echo(name))
			e.Table = echo(name)
			return e
		}
	}
	sp := n.Right.Span()
	return errorAt(c.src, sp.Start, ReasonUnsupported, "IN must be followed by a parenthesised list or subquery, found %q", echo(c.src[sp.Start:sp.End]))
}

// colDotted returns a column's name with its qualifier, without quotes.
func colDotted(col *tree.ColName) string {
	if col.Qualifier.IsEmpty() {
		return col.Name.Name
	}
	return dottedName(col.Qualifier.Parts) + "." + col.Name.Name
}

// star checks ClickHouse's * EXCEPT (names): names only, as ClickHouse
// reads them (anything else there is a set operation on other engines).
func (c *checker) star(s *tree.StarExpr) *Error {
	for _, x := range s.Except {
		if col, ok := x.(*tree.ColName); !ok || !col.Qualifier.IsEmpty() {
			return errorAt(c.src, x.Span().Start, ReasonUnsupported, "* EXCEPT (...) may hold column names only")
		}
	}
	return nil
}

// statementWords start statements that are not a SELECT; written where a
// column stands they are refused, whatever the engine would make of them.
var statementWords = setOf("insert", "update", "delete", "merge", "upsert", "create", "drop",
	"alter", "attach", "detach", "pragma", "vacuum", "copy", "grant", "revoke", "call",
	"exec", "execute", "truncate", "rename", "kill", "lock", "unlock", "handler", "prepare",
	"deallocate", "listen", "notify", "reindex", "optimize", "returning", "load", "install",
	"uninstall", "shutdown", "set")

// sessionWords are keywords that read the session's identity without
// parentheses (PostgreSQL and the SQL standard).
var sessionWords = setOf("current_user", "session_user", "current_role", "current_catalog",
	"current_schema", "system_user")

// keywordCalls are words that may stand before '(' without being a
// function: the parenthesis belongs to the keyword's syntax.
var keywordCalls = setOf("exists", "any", "all", "some", "array", "row", "values", "as",
	"and", "or", "not", "on", "using", "when", "then", "else", "case", "between", "like",
	"ilike", "rlike", "is", "over", "filter", "group", "distinct", "where", "having", "by",
	"interval", "partition", "rows", "range", "groups", "preceding", "following", "cube",
	"rollup", "sets", "escape", "global", "limit", "offset", "xor", "zone", "both", "leading",
	"trailing", "nulls", "first", "last", "only", "fetch", "next", "qualify", "prewhere",
	"window", "order", "return")

// castFunctions read "expr AS type".
var castFunctions = setOf("cast", "try_cast", "safe_cast")

// keywordArgFunctions read FROM, FOR or IN among their arguments.
var keywordArgFunctions = setOf("extract", "substring", "trim", "overlay", "position")

// paramTypes are type names that take parameters: DECIMAL(10, 2),
// VARCHAR(20), Nullable(String), DateTime64(3, 'UTC').
var paramTypes = setOf("decimal", "numeric", "dec", "varchar", "char", "character", "nchar",
	"nvarchar", "varbinary", "binary", "bit", "varbit", "float", "double", "real", "time",
	"timestamp", "datetime", "datetime64", "interval", "nullable", "lowcardinality", "array",
	"tuple", "map", "fixedstring", "decimal32", "decimal64", "decimal128", "decimal256",
	"enum", "enum8", "enum16", "int", "integer", "bigint", "smallint", "tinyint",
	"mediumint", "unsigned", "signed", "varying", "bpchar", "datetime2", "nested",
	"aggregatefunction", "simpleaggregatefunction", "object", "json", "variant", "dynamic")
