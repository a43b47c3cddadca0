// Package access decides what the SQL of a saved endpoint may read, and
// rewrites it so that it sees only its own project's rows. It does no I/O:
// it reads query text and returns query text.
//
// A host describes what each project may read with a Policy (Static gives
// the same Rules to every project, or some projects their own): the tables,
// optionally the columns of each, and optionally a tenant column per table.
// Check refuses a query that reads anything else; Confine does what Check
// does and returns the query rewritten so that the engine itself enforces
// the columns and the tenant. Run only what Confine returns.
//
// # One reading
//
// Check reads a query once: first its text, token by token (package
// sql/sqltoken), refusing what engines would tokenize differently; then its
// grammar, with package sql/tree's parser, the library's one reader of
// SQL, into a syntax tree; then it walks that tree for every table,
// function and table function the query names. CheckQuery returns the
// checked Query with its tree, and Query.Confine prints that same tree, so
// that a save checks and confines a query with one parse.
//
// # What Check refuses
//
// The query must be exactly one SELECT (or WITH ... SELECT, or a
// parenthesised query such as (SELECT 1) UNION (SELECT 2), in the syntax of
// SQLite, PostgreSQL, MySQL or ClickHouse), with {variables.<code_name>}
// placeholders standing for values. ClickHouse's column transformers
// (* EXCEPT (a, b), * REPLACE (expr AS a)) and subscripts (a['k'], b[1])
// are read as expressions: what they hold is checked as any expression is. Check reads every place a table can be
// named: FROM and JOIN lists (comma joins, parenthesised joins, LATERAL,
// ClickHouse's ANY/ASOF/GLOBAL/ARRAY joins), derived tables, subqueries
// anywhere (IN, EXISTS, scalar, ARRAY(...)), the arms of UNION, INTERSECT
// and EXCEPT, and the bodies of WITH. It refuses, with an *Error that names
// the table or function:
//
//   - a table the Rules do not list (ReasonTable);
//   - the library's own tables, every name starting with endpointkit_
//     (ReasonProtected), and the engines' catalogs: sqlite_*, pragma_*,
//     dbstat, pg_*, and anything in information_schema, pg_catalog, mysql,
//     performance_schema, sys or system (ReasonCatalog), whatever the Rules
//     say, and casts to PostgreSQL's reg* types ('pg_authid'::regclass,
//     10::regrole), which look names up in the catalog (ReasonCatalog);
//   - a function that is not on the allowlist of common SQL and analytics
//     functions of the four engines (with ClickHouse's combinators: countIf,
//     uniqExactIf), kept per engine, each name a function its engine has
//     (the tests call every one there), and including the functions the
//     library generates itself, extended by Rules.Functions
//     (ReasonFunction); functions that read
//     files, reach the network, read tables or settings by name, change the
//     session or ignore interruption (pg_read_file, lo_import, dblink,
//     load_extension, readfile, LOAD_FILE, file, url, dictGet, sleep,
//     pg_sleep, benchmark, randomblob, ...) cannot be allowed at all;
//   - a table function in FROM not on its own, shorter allowlist (json_each,
//     json_tree, unnest, json(b)_array_elements, json(b)_each, numbers,
//     ...; not generate_series, which the SQLite build lacks), extended by
//     Rules.TableFunctions
//     (ReasonTableFunction); read_csv, file(), url(), s3(), remote(),
//     mysql(), postgresql(), pragma_table_info() and the like cannot be;
//   - anything but one SELECT (ReasonStatement): a second statement after
//     ';', a statement that is not a SELECT, SELECT ... INTO, INTO OUTFILE,
//     FOR UPDATE/SHARE, LOCK IN SHARE MODE, TABLE <name>, a WITH body that
//     writes (PostgreSQL's data-modifying CTEs), ClickHouse's SETTINGS and
//     FORMAT;
//   - text the engines could read differently (ReasonAmbiguous): a quoted
//     string or identifier that would end elsewhere if backslashes escaped
//     (or did not), MySQL's /*! */ version comments and /*+ */ hints, nested
//     block comments, "--" not followed by a space, a carriage return inside
//     a "--" comment, '#', '$' (dollar quotes, heredocs), '@' before a name,
//     braces that are not a placeholder, characters outside ASCII outside
//     quotes (quote such identifiers), a subscript '[...]' that SQLite,
//     reading a quoted name up to the first ']', would end elsewhere (a ']'
//     inside a string, a comment), numbers that
//     run into letters, invalid UTF-8 (CheckFor and ConfineFor, told the
//     engine, read a string literal as that engine does where no setting
//     changes it: on SQLite 'C:\' is a whole literal);
//   - text package sql/tree cannot read (ReasonUnsupported), with the
//     tree's words and position: syntax no engine runs, unbalanced
//     parentheses, a placeholder where a name belongs, a call where a type
//     belongs, and the few forms the tree does not read yet; and
//     "x IN table" or "x IN (table)", which read a table on SQLite and
//     ClickHouse. Nothing the tree did not read is let through.
//
// # Names
//
// Table names are compared part by part, ignoring the case of ASCII
// letters only (an engine that folds more, such as MySQL's
// lower_case_table_names folding the Kelvin sign to k, cannot turn a
// refused name into a protected one, since only listed names pass, and
// under AnyTable a name holding a character whose case maps to an ASCII
// letter is refused, ReasonAmbiguous). A
// schema-qualified name matches only a rule with the same parts:
// main.events, public.events and db.events are not "events"; list them to
// allow them. Quoted and unquoted names are the same name to Check.
//
// A name defined by WITH is a table of the statement within its scope: the
// query after the WITH clause and the bodies of later WITH queries (and,
// under WITH RECURSIVE, the recursive arms of its own body: the arms after
// the first of a UNION [ALL]; elsewhere in its body ClickHouse reads the
// table of that name, which is checked as a table). A mention matches it
// only when spelled exactly as defined; one that matches only when case
// is ignored is refused, since engines differ on case. WITH may not define the name of a
// listed table, of a tenant column or of a protected table: which of the
// two a later mention meant would depend on the engine (ClickHouse copies
// WITH into every subquery).
//
// # What Confine guarantees
//
// Confine rewrites every reference to a table that has a TenantColumn or
// Columns into a derived table, keeping its alias or taking its name as
// the alias:
//
//	FROM events AS e JOIN events f ON ...
//	FROM (SELECT * FROM events WHERE events.project_id = {variables.__endpointkit_tenant}) AS e
//	     JOIN (SELECT * FROM events WHERE events.project_id = {variables.__endpointkit_tenant}) AS f ON ...
//
// The tenant value is a placeholder the caller binds like any other value;
// it never enters the SQL text. Since each reference is rewritten where it
// stands (in joins, subqueries, WITH bodies, set operations), every row the
// query reads from such a table has the tenant's value in the tenant
// column, and only the listed columns of the table exist for the rest of
// the query: a reference to another column is an error of the engine
// ("no such column"), never a read. Every table reference is also spelled
// as the Rules spell it (EVENTS becomes events), so that a case-sensitive
// engine (ClickHouse, MySQL on Linux, PostgreSQL with quotes) reads the
// listed table.
//
// Confine's output is printed from the tree Check walked by package
// sql/tree's printer, the one place that adds the tenant's condition to a
// table reference, and which refuses to print a reference to a scoped
// table without it: Check's walker decides what may run, the tree prints
// it. Nothing is printed from the user's text but what the tree read.
//
// The output is valid where the input was: the derived table always has an
// alias (MySQL requires one), the alias keeps the query's quoting, and
// suffixes that belong to the table (ClickHouse's FINAL and SAMPLE,
// SQLite's INDEXED BY, MySQL's index hints and PARTITION, PostgreSQL's
// ONLY) move inside. The package's tests run the rewritten SQL on SQLite
// and compare it with the original run on a database that holds only the
// project's rows.
//
// Known limits: a column written with the table's schema
// (public.events.event) no longer resolves once events is a derived table;
// write events.event or use an alias. SQLite's rowid and ClickHouse's
// virtual columns (_part, ...) are not visible through the derived table.
// A NATURAL JOIN on a table with a column list joins on the listed
// columns only.
//
// # What the host must still do
//
// The check bounds what the text of a query can name; it does not replace
// the database's own permissions. Give the executor a database user that
// can read only the analytics tables, run queries in a read-only
// transaction (or SQLite's query_only), keep the connection's character set
// UTF-8 (MySQL's GBK-style multi-byte sets make a backslash out of part of a
// character), keep functions the database defines under allowed names
// harmless, and bound each run's time and rows: an allowed query can still
// be slow.
package access
