package tree

// Span is where a node was read in the query: the byte offset of its first
// character and the offset just past its last. A node built by a caller
// has the zero Span until Rewrite places it where the node it replaces
// was.
type Span struct {
	Start, End int
}

// Node is a node of the tree: a statement, a table expression, an
// expression or one of their parts.
type Node interface {
	// Span is where the node was read; the zero Span for a node a caller
	// built.
	Span() Span
	base() *node
	// each calls w on every child, in the order they stand in the text,
	// and stores what w returns in its place.
	each(w *walker)
}

// node is what every node holds: its span, and whether the printer must
// generate its text instead of copying the source.
type node struct {
	span Span
	gen  bool
}

// Span returns where the node was read.
func (n *node) Span() Span   { return n.span }
func (n *node) base() *node  { return n }
func (n *node) set(s, e int) { n.span = Span{s, e} }

// SelectStatement is a query: *Select, *Union, *ParenSelect or *Values.
type SelectStatement interface {
	Node
	iSelectStatement()
}

// Expr is an expression.
type Expr interface {
	Node
	iExpr()
}

// TableExpr is an item of a FROM list: *AliasedTableExpr, *JoinTableExpr
// or *ParenTableExpr.
type TableExpr interface {
	Node
	iTableExpr()
}

// SimpleTableExpr is what an AliasedTableExpr reads: a TableName, a
// *Subquery (a derived table) or a *FuncExpr (a table function).
type SimpleTableExpr interface {
	Node
	iSimpleTableExpr()
}

// SelectExpr is an item of a SELECT list: *StarExpr or *AliasedExpr.
type SelectExpr interface {
	Node
	iSelectExpr()
}

// Ident is a name: a column, a table, an alias, a function. Raw is the
// name as written (quotes included), "" for a name a caller built; Name
// is the name without quotes (doubled quotes made single).
type Ident struct {
	Name string
	Raw  string
	// Quote is the quote the name was written in ('"', '`' or '['), 0 when
	// unquoted.
	Quote byte
	// At is the byte offset of the name in the query (meaningful when Raw
	// is set).
	At int
}

// IsEmpty reports whether the name is absent.
func (i Ident) IsEmpty() bool { return i.Name == "" && i.Raw == "" }

// String returns the name without quotes.
func (i Ident) String() string { return i.Name }

// NewIdent returns a name a caller built; the printer quotes it when the
// engine needs it.
func NewIdent(name string) Ident { return Ident{Name: name} }

// Select is one SELECT with its clauses.
type Select struct {
	node
	// With is the WITH clause, when it is the first thing of this query.
	With *With
	// Distinct is "", "DISTINCT" or "ALL" as written (upper case).
	Distinct string
	// DistinctOn holds PostgreSQL's DISTINCT ON expressions.
	DistinctOn  []Expr
	SelectExprs []SelectExpr
	From        []TableExpr
	// PreWhere is ClickHouse's PREWHERE condition.
	PreWhere Expr
	Where    Expr
	GroupBy  []Expr
	// GroupByModifier is "WITH ROLLUP", "WITH CUBE" or "WITH TOTALS" after
	// GROUP BY, upper case, "" when absent.
	GroupByModifier string
	Having          Expr
	Window          []*NamedWindow
	// Qualify is the QUALIFY condition (ClickHouse).
	Qualify Expr
	OrderBy []*Order
	// LimitBy is ClickHouse's LIMIT n BY expressions.
	LimitBy *LimitBy
	Limit   *Limit
}

// Union is a set operation between two queries: UNION, INTERSECT, EXCEPT
// or MINUS, with ALL or DISTINCT.
type Union struct {
	node
	With *With
	// Type is the operation as written, upper case, one space between
	// words: "UNION", "UNION ALL", "EXCEPT DISTINCT".
	Type        string
	Left, Right SelectStatement
	OrderBy     []*Order
	LimitBy     *LimitBy
	Limit       *Limit
}

// ParenSelect is a query in parentheses where a query stands.
type ParenSelect struct {
	node
	With    *With
	Select  SelectStatement
	OrderBy []*Order
	LimitBy *LimitBy
	Limit   *Limit
}

// Values is a VALUES list: VALUES (1, 'a'), (2, 'b').
type Values struct {
	node
	Rows []*ValTuple
}

// With is a WITH clause.
type With struct {
	node
	Recursive bool
	CTEs      []*CommonTableExpr
}

// CommonTableExpr is one name a WITH clause defines: name [(columns)] AS
// [[NOT] MATERIALIZED] (query), or ClickHouse's expression AS name (then
// Expr is set and Subquery nil).
type CommonTableExpr struct {
	node
	Name    Ident
	Columns []Ident
	// Materialized is "", "MATERIALIZED" or "NOT MATERIALIZED".
	Materialized string
	Subquery     *Subquery
	Expr         Expr
}

// StarExpr is * or t.*, with ClickHouse's EXCEPT (...) and REPLACE (...).
type StarExpr struct {
	node
	TableName TableName
	Except    []Expr
	Replace   []*AliasedExpr
	// ExceptStrict and ReplaceStrict tell STRICT was written.
	ExceptStrict, ReplaceStrict bool
}

// AliasedExpr is an expression of a SELECT list with its optional alias.
type AliasedExpr struct {
	node
	Expr Expr
	As   Ident
	// HasAs tells whether the keyword AS was written.
	HasAs bool
}

// TableName is a table's name, its parts in order: [catalog.][schema.]name.
type TableName struct {
	node
	Parts []Ident
	// table is the rules' table Bind found the name to be, on the name of
	// a FROM item.
	table *Table
}

// Name returns the last part, the table's own name.
func (t TableName) Name() Ident {
	if len(t.Parts) == 0 {
		return Ident{}
	}
	return t.Parts[len(t.Parts)-1]
}

// Qualifier returns the part before the name (the schema or database),
// or the empty Ident.
func (t TableName) Qualifier() Ident {
	if len(t.Parts) < 2 {
		return Ident{}
	}
	return t.Parts[len(t.Parts)-2]
}

// IsEmpty reports whether the name is absent.
func (t TableName) IsEmpty() bool { return len(t.Parts) == 0 }

// AliasedTableExpr is one table, derived table or table function of a FROM
// list, with its alias and suffixes.
type AliasedTableExpr struct {
	node
	Lateral bool
	// Only is PostgreSQL's ONLY before a table's name.
	Only bool
	Expr SimpleTableExpr
	// WithOrdinality is PostgreSQL's WITH ORDINALITY after a table
	// function.
	WithOrdinality bool
	As             Ident
	HasAs          bool
	// Columns is the alias's column list: AS t(a, b).
	Columns []Ident
	// ColumnTypes are the types of a table function's column definition
	// list (PostgreSQL's AS t(a int, b text)), as written, one per column
	// ("" for a column without one); nil when no column has a type.
	ColumnTypes []string
	// AliasAt is the span of the alias and its column list (from AS, or
	// the name when AS is absent, to the last token), the zero Span when
	// absent.
	AliasAt Span
	// ColumnsAt is the span of the column list "(a, b)".
	ColumnsAt Span
	// Suffixes are what follows a table's name and belongs to it: FINAL,
	// SAMPLE, INDEXED BY, NOT INDEXED, index hints, PARTITION (...).
	Suffixes []Suffix
	// Table is what Bind found the name to be: the rules' table, or nil
	// (a WITH query, a table the rules do not list, or not bound).
	Table *Table
}

// Suffix is a clause that follows a table's name, kept as written.
type Suffix struct {
	Span Span
	// Text is the suffix as written.
	Text string
}

// JoinTableExpr is two FROM items joined.
type JoinTableExpr struct {
	node
	LeftExpr TableExpr
	// Join is the join operator, upper case, one space between words:
	// "JOIN", "LEFT OUTER JOIN", "GLOBAL ANY LEFT JOIN", "ARRAY JOIN",
	// "STRAIGHT_JOIN".
	Join      string
	RightExpr TableExpr
	On        Expr
	Using     []Ident
}

// ArrayJoinExpr is what ClickHouse's ARRAY JOIN joins: expressions with
// aliases.
type ArrayJoinExpr struct {
	node
	Exprs []*AliasedExpr
}

// ParenTableExpr is FROM items in parentheses: (a JOIN b ON ...).
type ParenTableExpr struct {
	node
	Exprs []TableExpr
}

// Subquery is a query in parentheses where a value or a table stands.
type Subquery struct {
	node
	Select SelectStatement
}

// Order is one ORDER BY item.
type Order struct {
	node
	Expr Expr
	// Direction is "", "ASC" or "DESC".
	Direction string
	// Nulls is "", "NULLS FIRST" or "NULLS LAST".
	Nulls string
	// Fill is ClickHouse's WITH FILL clause as written, "" when absent.
	Fill string
	// FillFrom, FillTo and FillStep are the expressions of WITH FILL's
	// FROM, TO and STEP, nil when absent. ClickHouse evaluates them
	// (scalar subqueries included) before the query, so they are nodes
	// the walk visits, checked and confined as any expression is.
	FillFrom, FillTo, FillStep Expr
}

// Limit is LIMIT n [OFFSET m], MySQL's LIMIT m, n, an OFFSET alone, or
// OFFSET m ROWS FETCH FIRST n ROWS ONLY.
type Limit struct {
	node
	Offset, Rowcount Expr
	// Form is how it was written: "LIMIT" (LIMIT n [OFFSET m], or OFFSET
	// alone), "LIMIT," (MySQL's LIMIT m, n) or "FETCH".
	Form string
}

// LimitBy is ClickHouse's LIMIT n [OFFSET m] BY expressions.
type LimitBy struct {
	node
	Rowcount, Offset Expr
	Exprs            []Expr
}

// NamedWindow is one window of a WINDOW clause: name AS (spec).
type NamedWindow struct {
	node
	Name Ident
	Spec *WindowSpec
}

// Over is a function's OVER clause: OVER name or OVER (spec).
type Over struct {
	node
	Name Ident
	Spec *WindowSpec
}

// WindowSpec is a window: [base name] [PARTITION BY ...] [ORDER BY ...]
// [frame].
type WindowSpec struct {
	node
	Name        Ident
	PartitionBy []Expr
	OrderBy     []*Order
	Frame       *Frame
}

// Frame is a window frame: ROWS|RANGE|GROUPS start, or BETWEEN start AND
// end, with EXCLUDE kept as written.
type Frame struct {
	node
	// Unit is "ROWS", "RANGE" or "GROUPS".
	Unit       string
	Start, End *FrameBound
	// Exclude is the EXCLUDE clause as written, "" when absent.
	Exclude string
}

// FrameBound is one bound of a frame.
type FrameBound struct {
	node
	// Type is "UNBOUNDED PRECEDING", "UNBOUNDED FOLLOWING", "CURRENT ROW",
	// "PRECEDING" or "FOLLOWING" (the last two with Expr).
	Type string
	Expr Expr
}

// Literal is a literal kept as written: a string, a number, TRUE/FALSE,
// NULL, or a typed string (DATE '2024-01-01').
type Literal struct {
	node
	Kind LitKind
	// Text is the literal as written, quotes included.
	Text string
	// Type is the type word of a typed string, as written.
	Type string
}

// LitKind is what a Literal is.
type LitKind uint8

// The kinds of literals.
const (
	StrVal LitKind = iota + 1
	NumVal
	BoolVal
	NullVal
	TypedStrVal
)

// Placeholder is a {variables.name} placeholder.
type Placeholder struct {
	node
	// Name is the variable's code name.
	Name string
	// Text is the placeholder as written.
	Text string
}

// BindMarker is a driver's bind marker (?, $1, :name) as written.
type BindMarker struct {
	node
	Text string
}

// ColName is a column, qualified or not.
type ColName struct {
	node
	Qualifier TableName
	Name      Ident
}

// ComparisonExpr is a comparison of two values: =, <>, !=, <, <=, >, >=,
// <=>, IS DISTINCT FROM, IS NOT DISTINCT FROM, [NOT] IN, [NOT] LIKE,
// ILIKE, GLOB, REGEXP, RLIKE, SIMILAR TO, MATCH, ~ and the like, and
// SQLite's IS / IS NOT between two values.
type ComparisonExpr struct {
	node
	// Operator is upper case, one space between words.
	Operator    string
	Left, Right Expr
	// Escape is LIKE's ESCAPE character, when written.
	Escape Expr
}

// RangeCond is [NOT] BETWEEN [SYMMETRIC] from AND to.
type RangeCond struct {
	node
	// Operator is "BETWEEN", "NOT BETWEEN", with " SYMMETRIC" when written.
	Operator       string
	Left, From, To Expr
}

// IsExpr is IS [NOT] NULL, TRUE, FALSE or UNKNOWN, and SQLite's ISNULL,
// NOTNULL and NOT NULL.
type IsExpr struct {
	node
	// Operator is "IS NULL", "IS NOT NULL", "IS TRUE", ..., "ISNULL",
	// "NOTNULL" or "NOT NULL".
	Operator string
	Expr     Expr
}

// AndExpr is left AND right.
type AndExpr struct {
	node
	Left, Right Expr
}

// OrExpr is left OR right (or MySQL's ||).
type OrExpr struct {
	node
	Left, Right Expr
	// Operator is "OR" or "||" as written.
	Operator string
}

// XorExpr is MySQL's left XOR right.
type XorExpr struct {
	node
	Left, Right Expr
}

// NotExpr is NOT expr (or MySQL's !).
type NotExpr struct {
	node
	Expr Expr
}

// ParenExpr is an expression in parentheses.
type ParenExpr struct {
	node
	Expr Expr
}

// BinaryExpr is an arithmetic, string, bitwise or JSON operation: + - * /
// % DIV MOD || & | ^ << >> -> ->> #> #>> @> <@ AT TIME ZONE.
type BinaryExpr struct {
	node
	// Operator is as written (keywords upper case).
	Operator    string
	Left, Right Expr
}

// UnaryExpr is - + ~ or MySQL's BINARY before an expression.
type UnaryExpr struct {
	node
	Operator string
	Expr     Expr
}

// FuncExpr is a function call, with what may follow it.
type FuncExpr struct {
	node
	Qualifier Ident
	Name      Ident
	// NoParens marks a function written without parentheses
	// (CURRENT_DATE).
	NoParens bool
	Distinct bool
	// Params are ClickHouse's parameters of a parametric aggregate:
	// quantile(0.9)(x) has Params [0.9] and Exprs [x].
	Params    []Expr
	HasParams bool
	Exprs     []Expr
	// Keywords[i], when set, is the keyword that stands before Exprs[i]
	// instead of a comma: SUBSTRING(s FROM 2 FOR 3), TRIM(BOTH 'x' FROM s),
	// POSITION(a IN b).
	Keywords []string
	// OrderBy is an ORDER BY among the arguments: string_agg(x, ','
	// ORDER BY y).
	OrderBy []*Order
	// Separator is MySQL's GROUP_CONCAT SEPARATOR.
	Separator   Expr
	WithinGroup []*Order
	Filter      Expr
	Over        *Over
}

// Subquery and the other expressions.

// ExistsExpr is EXISTS (query).
type ExistsExpr struct {
	node
	Subquery *Subquery
}

// AnyExpr is ANY, SOME or ALL (query or array) on the right of a
// comparison.
type AnyExpr struct {
	node
	// Quantifier is "ANY", "SOME" or "ALL".
	Quantifier string
	Expr       Expr
}

// CaseExpr is CASE [expr] WHEN ... THEN ... [ELSE ...] END.
type CaseExpr struct {
	node
	Expr  Expr
	Whens []*When
	Else  Expr
}

// When is one WHEN cond THEN val of a CASE.
type When struct {
	node
	Cond, Val Expr
}

// ConvertExpr is a cast: CAST(x AS T), TRY_CAST, x::T, MySQL's
// CONVERT(x, T) and CONVERT(x USING charset).
type ConvertExpr struct {
	node
	Expr Expr
	// Type is the type as written.
	Type string
	// Form is "CAST", "TRY_CAST", "SAFE_CAST", "::", "CAST," (ClickHouse's
	// CAST(x, 'Type'), Type then the string as written), "CONVERT" or
	// "CONVERT USING" (Type is then the character set).
	Form string
	// As is the keyword AS of CAST(x AS T) as written ("as", "AS"), ""
	// in a node a caller built (AS is then printed).
	As string
}

// IntervalExpr is INTERVAL value [unit]: interval '90' day, interval '90
// days', INTERVAL 90 DAY.
type IntervalExpr struct {
	node
	Expr Expr
	// Unit is the unit as written ("day", "DAY", "YEAR TO MONTH"), "" when
	// the value holds it.
	Unit string
}

// ExtractExpr is EXTRACT(unit FROM expr).
type ExtractExpr struct {
	node
	// Unit is as written.
	Unit string
	Expr Expr
}

// CollateExpr is expr COLLATE collation.
type CollateExpr struct {
	node
	Expr Expr
	// Collation is as written.
	Collation string
}

// ArrayExpr is [a, b] or ARRAY[a, b].
type ArrayExpr struct {
	node
	// Keyword tells whether ARRAY was written.
	Keyword bool
	Exprs   []Expr
}

// IndexExpr is a subscript: a['k'], a[1], or ClickHouse's tuple element
// t.1 (Dot).
type IndexExpr struct {
	node
	Expr, Index Expr
	Dot         bool
}

// ValTuple is a list of values in parentheses: (a, b), and IN's list.
type ValTuple struct {
	node
	Exprs []Expr
}

// LambdaExpr is ClickHouse's lambda: x -> expr, (x, y) -> expr.
type LambdaExpr struct {
	node
	Params []Ident
	Body   Expr
}

// GroupingExpr is ROLLUP (...), CUBE (...) or GROUPING SETS (...) in GROUP
// BY.
type GroupingExpr struct {
	node
	// Type is "ROLLUP", "CUBE" or "GROUPING SETS".
	Type  string
	Exprs []Expr
}

func (*Select) iSelectStatement()      {}
func (*Union) iSelectStatement()       {}
func (*ParenSelect) iSelectStatement() {}
func (*Values) iSelectStatement()      {}

func (*AliasedTableExpr) iTableExpr() {}
func (*JoinTableExpr) iTableExpr()    {}
func (*ParenTableExpr) iTableExpr()   {}

func (*TableName) iSimpleTableExpr()     {}
func (*Subquery) iSimpleTableExpr()      {}
func (*FuncExpr) iSimpleTableExpr()      {}
func (*ArrayJoinExpr) iSimpleTableExpr() {}

func (*StarExpr) iSelectExpr()     {}
func (*StarExpr) iExpr()           {}
func (*ArrayJoinExpr) iTableExpr() {}
func (*AliasedExpr) iSelectExpr()  {}

func (*Literal) iExpr()        {}
func (*Placeholder) iExpr()    {}
func (*BindMarker) iExpr()     {}
func (*ColName) iExpr()        {}
func (*ComparisonExpr) iExpr() {}
func (*RangeCond) iExpr()      {}
func (*IsExpr) iExpr()         {}
func (*AndExpr) iExpr()        {}
func (*OrExpr) iExpr()         {}
func (*XorExpr) iExpr()        {}
func (*NotExpr) iExpr()        {}
func (*ParenExpr) iExpr()      {}
func (*BinaryExpr) iExpr()     {}
func (*UnaryExpr) iExpr()      {}
func (*FuncExpr) iExpr()       {}
func (*Subquery) iExpr()       {}
func (*ExistsExpr) iExpr()     {}
func (*AnyExpr) iExpr()        {}
func (*CaseExpr) iExpr()       {}
func (*ConvertExpr) iExpr()    {}
func (*IntervalExpr) iExpr()   {}
func (*ExtractExpr) iExpr()    {}
func (*CollateExpr) iExpr()    {}
func (*ArrayExpr) iExpr()      {}
func (*IndexExpr) iExpr()      {}
func (*ValTuple) iExpr()       {}
func (*LambdaExpr) iExpr()     {}
func (*GroupingExpr) iExpr()   {}
