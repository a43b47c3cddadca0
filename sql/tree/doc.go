// Package tree reads one SELECT statement of SQLite, PostgreSQL,
// MySQL/MariaDB or ClickHouse into one syntax tree with positions, and
// prints it back: byte for byte where nobody changed it, as generated text
// in the engine's dialect where a caller did, and with every reference to
// a tenant-scoped table confined to the tenant's rows.
//
// # Reading
//
// Parse reads the tokens of package sql/sqltoken as the engine's
// engine.Lexical reads them (comments are kept out of the tree and in the
// printed text). The tree covers what analysts write:
//
//   - WITH [RECURSIVE] chains with column lists and [NOT] MATERIALIZED,
//     ClickHouse's WITH expression AS name; UNION, INTERSECT, EXCEPT and
//     MINUS with ALL or DISTINCT; parenthesised queries;
//   - SELECT [DISTINCT [ON (...)] | ALL], items with aliases, *, t.*,
//     ClickHouse's * EXCEPT (...) and * REPLACE (... AS x);
//   - FROM with comma joins and every join operator (INNER, LEFT, RIGHT,
//     FULL [OUTER], CROSS, NATURAL, STRAIGHT_JOIN, ClickHouse's GLOBAL,
//     ANY, ALL, ASOF, SEMI, ANTI and ARRAY JOIN), ON and USING, LATERAL,
//     derived tables, table functions [WITH ORDINALITY], aliases with
//     column lists, and the suffixes a table's name may carry (FINAL,
//     SAMPLE, INDEXED BY, NOT INDEXED, index hints, PARTITION);
//   - PREWHERE, WHERE, GROUP BY with ROLLUP, CUBE, GROUPING SETS and WITH
//     ROLLUP/CUBE/TOTALS, HAVING, WINDOW, QUALIFY, ORDER BY with ASC/DESC,
//     NULLS FIRST/LAST and WITH FILL, LIMIT [OFFSET], MySQL's LIMIT m, n,
//     ClickHouse's LIMIT n BY, OFFSET ... FETCH FIRST ... ROWS ONLY;
//   - expressions with each engine's precedence: literals kept as written,
//     {variables.x} placeholders, bind markers, qualified columns, calls
//     with DISTINCT, ORDER BY, SEPARATOR, WITHIN GROUP, FILTER and OVER,
//     ClickHouse's parametric calls (quantile(0.9)(x)) and lambdas, CAST
//     and :: (the type kept as written), CONVERT, CASE, [NOT] BETWEEN,
//     [GLOBAL] [NOT] IN (a list, a query or a placeholder), IS [NOT]
//     NULL/TRUE/FALSE/DISTINCT FROM, LIKE, ILIKE, GLOB, REGEXP, RLIKE,
//     SIMILAR TO, EXISTS, scalar subqueries, ANY/ALL/SOME, INTERVAL in
//     each engine's forms, EXTRACT, ->, ->>, ||, arithmetic, comparison,
//     AND/OR/XOR/NOT, arrays, subscripts, tuples and COLLATE.
//
// VALUES lists stand as queries and derived tables, and PostgreSQL's
// SELECT FROM t (no columns) is read.
//
// It refuses, with an *Error that says what and where: anything but one
// SELECT (other statements, a second statement), TABLESAMPLE, FETCH ... WITH TIES, an alias after a
// parenthesised join, ClickHouse's tuple access t.1 and * APPLY/STRICT,
// and nesting deeper than MaxDepth (ErrTooDeep). The tree reads; it does
// not judge what a query may read: package sql/access checks tables and
// functions, and refuses text that engines would read differently.
//
// # Nodes
//
// The node names follow github.com/xwb1989/sqlparser's where they fit
// (Select, Union, AliasedExpr, StarExpr, AliasedTableExpr, JoinTableExpr,
// ComparisonExpr, RangeCond, IsExpr, ColName, FuncExpr, Subquery,
// ConvertExpr, ...). Every node knows its Span in the text. Walk visits
// the nodes in the order of the text; Rewrite replaces them.
//
// # Printing
//
// Print writes an unchanged tree back as it was written. A node that
// Rewrite put in place of another, or that MarkChanged marks, is printed
// as generated text in the engine's dialect (new names quoted with
// engine.Engine.QuoteIdent) where the node it replaces stood, and the
// text around it is copied. Tree.Bind records which tables of the tenant
// scope a query reads; a Printer with a Scope then writes every reference
// to a scoped table as
//
//	(SELECT * FROM events WHERE events.project_id = {variables.<tenant>}) AS e
//
// exactly as access.Confine does, and a Printer without one refuses to
// print it (ErrUnscoped).
package tree
