package access

import (
	"errors"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// testRules is what the tests allow: the demo events table scoped by
// project, a users table with a column list, and a schema-qualified
// table.
func testRules() *Rules {
	return &Rules{Tables: []Table{
		{Name: "events", TenantColumn: "project_id"},
		{Name: "users", Columns: []string{"id", "name"}, TenantColumn: "project_id"},
		{Name: "analytics.sessions"},
	}}
}

// attack is a query that must be refused: why, and what it names.
type attack struct {
	name     string
	query    string
	reason   Reason
	table    string // the Table the error names, "" when none
	function string // the Function the error names, "" when none
}

// attacks are attempts to read what a query may not, across the catalogs
// and tricks of the four engines. Each is refused, naming the table or
// function when the refusal is about one.
var attacks = []attack{
	// The library's own tables, however they are written or reached.
	{"library table", `SELECT * FROM endpointkit_endpoints`, ReasonProtected, "endpointkit_endpoints", ""},
	{"library table upper case", `SELECT * FROM ENDPOINTKIT_VARIABLES`, ReasonProtected, "ENDPOINTKIT_VARIABLES", ""},
	{"library table mixed case", `SELECT 1 FROM events WHERE 1 = (SELECT count(*) FROM eNdPoInTkIt_EnDpOiNtS)`, ReasonProtected, "eNdPoInTkIt_EnDpOiNtS", ""},
	{"library table double quoted", `SELECT * FROM "endpointkit_endpoint_versions"`, ReasonProtected, "endpointkit_endpoint_versions", ""},
	{"library table backquoted", "SELECT * FROM `endpointkit_endpoints`", ReasonProtected, "endpointkit_endpoints", ""},
	{"library table qualified", `SELECT * FROM main.endpointkit_schema`, ReasonProtected, "main.endpointkit_schema", ""},
	{"library table quoted qualified", `SELECT * FROM "public"."endpointkit_variables"`, ReasonProtected, "public.endpointkit_variables", ""},
	{"materialized table", `SELECT * FROM endpointkit_mat_6f1c8a527d0e4b9a9c312e5f7a8b9c01_v1`, ReasonProtected, "endpointkit_mat_6f1c8a527d0e4b9a9c312e5f7a8b9c01_v1", ""},
	{"materialized table being built", `SELECT * FROM endpointkit_mat_6f1c8a527d0e4b9a9c312e5f7a8b9c01_v2_next`, ReasonProtected, "endpointkit_mat_6f1c8a527d0e4b9a9c312e5f7a8b9c01_v2_next", ""},
	{"library table with zero-width space", "SELECT * FROM \"endpointkit_endpoints\u200b\"", ReasonProtected, "endpointkit_endpoints\u200b", ""},
	{"union arm", `SELECT uuid FROM events UNION SELECT query_json FROM endpointkit_endpoints`, ReasonProtected, "endpointkit_endpoints", ""},
	{"intersect arm in parentheses", `SELECT uuid FROM events INTERSECT (SELECT id FROM endpointkit_variables)`, ReasonProtected, "endpointkit_variables", ""},
	{"join", `SELECT * FROM events e JOIN endpointkit_endpoints k ON 1 = 1`, ReasonProtected, "endpointkit_endpoints", ""},
	{"comma join", `SELECT * FROM events, endpointkit_endpoints`, ReasonProtected, "endpointkit_endpoints", ""},
	{"natural join", `SELECT * FROM events NATURAL LEFT OUTER JOIN endpointkit_variables`, ReasonProtected, "endpointkit_variables", ""},
	{"parenthesised join", `SELECT * FROM (events JOIN endpointkit_endpoints ON true)`, ReasonProtected, "endpointkit_endpoints", ""},
	{"table in many parentheses", `SELECT 1 FROM events WHERE EXISTS (SELECT * FROM (((endpointkit_endpoints))))`, ReasonProtected, "endpointkit_endpoints", ""},
	{"scalar subquery", `SELECT (SELECT query_json FROM endpointkit_endpoints LIMIT 1)`, ReasonProtected, "endpointkit_endpoints", ""},
	{"exists", `SELECT * FROM events WHERE EXISTS (SELECT 1 FROM endpointkit_endpoints)`, ReasonProtected, "endpointkit_endpoints", ""},
	{"in subquery", `SELECT * FROM events WHERE distinct_id IN (SELECT name FROM endpointkit_endpoints)`, ReasonProtected, "endpointkit_endpoints", ""},
	{"deeply nested subquery", `SELECT * FROM events WHERE event IN (SELECT event FROM events WHERE uuid IN (SELECT uuid FROM (SELECT * FROM endpointkit_endpoints) AS z))`, ReasonProtected, "endpointkit_endpoints", ""},
	{"derived table", `SELECT * FROM (SELECT * FROM endpointkit_endpoints) AS events`, ReasonProtected, "endpointkit_endpoints", ""},
	{"lateral", `SELECT * FROM events, LATERAL (SELECT * FROM endpointkit_endpoints) k`, ReasonProtected, "endpointkit_endpoints", ""},
	{"function argument subquery", `SELECT coalesce((SELECT query_json FROM endpointkit_endpoints), '')`, ReasonProtected, "endpointkit_endpoints", ""},
	{"quoted alias named like an allowed table", `SELECT * FROM events AS e WHERE e.uuid IN (SELECT x FROM "endpointkit_endpoints" AS "events")`, ReasonProtected, "endpointkit_endpoints", ""},
	{"CTE named like the library table", `WITH endpointkit_endpoints AS (SELECT 1) SELECT * FROM endpointkit_endpoints`, ReasonProtected, "endpointkit_endpoints", ""},
	{"CTE body reads the library table", `WITH x AS (SELECT * FROM endpointkit_variables) SELECT * FROM x`, ReasonProtected, "endpointkit_variables", ""},
	{"CTE inside a subquery", `SELECT * FROM events WHERE event IN (WITH k AS (SELECT * FROM endpointkit_endpoints) SELECT name FROM k)`, ReasonProtected, "endpointkit_endpoints", ""},
	{"CTE named like an allowed table", `WITH events AS (SELECT * FROM endpointkit_endpoints) SELECT * FROM events`, ReasonAmbiguous, "events", ""},
	{"CTE named like an allowed table, other case", `WITH EVENTS AS (SELECT 1 AS project_id) SELECT * FROM events`, ReasonAmbiguous, "EVENTS", ""},
	{"CTE name that only matches ignoring case", `WITH "Secrets" AS (SELECT 1) SELECT * FROM Secrets`, ReasonAmbiguous, "Secrets", ""},
	{"CTE used outside its scope", `SELECT * FROM (WITH secrets AS (SELECT 1) SELECT * FROM secrets) AS a, secrets`, ReasonTable, "secrets", ""},
	{"CTE used before it is defined", `WITH a AS (SELECT * FROM b), b AS (SELECT 1) SELECT * FROM a`, ReasonTable, "b", ""},
	{"recursive CTE reading a catalog", `WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < (SELECT count(*) FROM sqlite_master)) SELECT * FROM r`, ReasonCatalog, "sqlite_master", ""},
	{"WITH alias shadowing the tenant column", `WITH 7 AS project_id SELECT * FROM events`, ReasonAmbiguous, "project_id", ""},
	{"WITH subquery alias named like an allowed table", `WITH (SELECT 7) AS events SELECT 1`, ReasonAmbiguous, "events", ""},
	{"block comment does not hide a join", `SELECT * FROM events /* hidden */ , endpointkit_endpoints`, ReasonProtected, "endpointkit_endpoints", ""},
	{"line comment does not hide a join", "SELECT * FROM events -- note\n, endpointkit_endpoints", ReasonProtected, "endpointkit_endpoints", ""},
	{"a table that is not allowed", `SELECT * FROM secrets`, ReasonTable, "secrets", ""},
	{"schema-qualified allowed table", `SELECT * FROM main.events`, ReasonTable, "main.events", ""},
	{"other schema of an allowed table", `SELECT * FROM public.events`, ReasonTable, "public.events", ""},
	{"unqualified form of a qualified rule", `SELECT * FROM sessions`, ReasonTable, "sessions", ""},
	{"join with a table not allowed", `SELECT * FROM events e1 JOIN secrets s USING (id)`, ReasonTable, "secrets", ""},
	{"union with a table not allowed", `SELECT uuid FROM events WHERE event = 'x' UNION ALL SELECT token FROM secrets`, ReasonTable, "secrets", ""},
	{"unicode look-alike of sqlite_master", "SELECT * FROM \"\u0455qlite_master\"", ReasonTable, "\u0455qlite_master", ""},
	{"fullwidth look-alike", "SELECT * FROM \"\uff53\uff51\uff4c\uff49\uff54\uff45_master\"", ReasonTable, "\uff53\uff51\uff4c\uff49\uff54\uff45_master", ""},
	{"Kelvin sign for k", "SELECT * FROM \"endpoint\u212ait_endpoints\"", ReasonTable, "endpoint\u212ait_endpoints", ""},

	// SQLite.
	{"sqlite_master", `SELECT * FROM sqlite_master`, ReasonCatalog, "sqlite_master", ""},
	{"sqlite_schema", `SELECT name FROM sqlite_schema`, ReasonCatalog, "sqlite_schema", ""},
	{"sqlite_temp_master", `SELECT sql FROM sqlite_temp_master`, ReasonCatalog, "sqlite_temp_master", ""},
	{"sqlite_master qualified", `SELECT * FROM main.sqlite_master`, ReasonCatalog, "main.sqlite_master", ""},
	{"sqlite_master quoted upper case", `SELECT * FROM "SQLITE_MASTER"`, ReasonCatalog, "SQLITE_MASTER", ""},
	{"sqlite_master as a string", `SELECT * FROM 'sqlite_master'`, ReasonUnsupported, "sqlite_master", ""},
	{"sqlite_master after IN", `SELECT 1 WHERE 'events' IN sqlite_master`, ReasonUnsupported, "sqlite_master", ""},
	{"library table after IN", `SELECT * FROM events WHERE distinct_id IN endpointkit_variables`, ReasonUnsupported, "endpointkit_variables", ""},
	{"string table after IN", `SELECT 1 WHERE 1 IN 'sqlite_master'`, ReasonUnsupported, "sqlite_master", ""},
	{"sqlite_master in a natural join", `SELECT * FROM events NATURAL JOIN sqlite_master`, ReasonCatalog, "sqlite_master", ""},
	{"pragma table-valued function", `SELECT * FROM pragma_table_info('endpointkit_endpoints')`, ReasonTableFunction, "", "pragma_table_info"},
	{"pragma eponymous table", `SELECT * FROM pragma_database_list`, ReasonCatalog, "pragma_database_list", ""},
	{"pragma in a cross join", `SELECT * FROM events CROSS JOIN pragma_table_list()`, ReasonTableFunction, "", "pragma_table_list"},
	{"dbstat", `SELECT * FROM dbstat`, ReasonCatalog, "dbstat", ""},
	{"sqlite_dbpage", `SELECT data FROM sqlite_dbpage`, ReasonCatalog, "sqlite_dbpage", ""},
	{"load_extension", `SELECT load_extension('/tmp/evil.so')`, ReasonFunction, "", "load_extension"},
	{"readfile", `SELECT readfile('/etc/passwd')`, ReasonFunction, "", "readfile"},
	{"writefile", `SELECT writefile('/tmp/x', 'y')`, ReasonFunction, "", "writefile"},
	{"fsdir", `SELECT * FROM fsdir('/')`, ReasonTableFunction, "", "fsdir"},
	{"randomblob", `SELECT length(randomblob(1000000000))`, ReasonFunction, "", "randomblob"},
	{"sqlite_version", `SELECT sqlite_version()`, ReasonFunction, "", "sqlite_version"},
	{"[name] call", `SELECT [readfile]('/etc/passwd')`, ReasonAmbiguous, "", ""},
	{"[name] as an alias", `SELECT * FROM events [sqlite_master]`, ReasonUnsupported, "", ""},
	{"quote inside [ ]", `SELECT a[' ] , (SELECT sql FROM sqlite_master) , '] FROM events`, ReasonAmbiguous, "", ""},

	// PostgreSQL.
	{"pg_catalog.pg_authid", `SELECT * FROM pg_catalog.pg_authid`, ReasonCatalog, "pg_catalog.pg_authid", ""},
	{"pg_user unqualified", `SELECT usename, passwd FROM pg_user`, ReasonCatalog, "pg_user", ""},
	{"pg_shadow upper case", `SELECT * FROM PG_CATALOG.PG_SHADOW`, ReasonCatalog, "PG_CATALOG.PG_SHADOW", ""},
	{"pg_class quoted", `SELECT * FROM "pg_catalog"."pg_class"`, ReasonCatalog, "pg_catalog.pg_class", ""},
	{"pg_stat_activity in a join", `SELECT * FROM json_each('[1]') g, pg_stat_activity`, ReasonCatalog, "pg_stat_activity", ""},
	{"ONLY pg_class", `SELECT * FROM ONLY pg_catalog.pg_class`, ReasonCatalog, "pg_catalog.pg_class", ""},
	{"information_schema", `SELECT * FROM information_schema.tables`, ReasonCatalog, "information_schema.tables", ""},
	{"information_schema upper case", `SELECT * FROM INFORMATION_SCHEMA.COLUMNS`, ReasonCatalog, "INFORMATION_SCHEMA.COLUMNS", ""},
	{"catalog in ARRAY subquery", `SELECT * FROM events WHERE distinct_id = ANY(ARRAY(SELECT usename FROM pg_user))`, ReasonCatalog, "pg_user", ""},
	{"three-part catalog name", `SELECT * FROM db.pg_catalog.pg_proc`, ReasonCatalog, "db.pg_catalog.pg_proc", ""},
	{"pg_read_file", `SELECT pg_read_file('/etc/passwd')`, ReasonFunction, "", "pg_read_file"},
	{"pg_read_file quoted upper case", `SELECT "PG_READ_FILE"('/etc/passwd')`, ReasonFunction, "", "PG_READ_FILE"},
	{"pg_read_file qualified", `SELECT pg_catalog.pg_read_file('/etc/passwd')`, ReasonFunction, "", "pg_catalog.pg_read_file"},
	{"pg_read_file unicode-escaped name", `SELECT U&"\0070g_read_file"('/etc/passwd')`, ReasonFunction, "", `\0070g_read_file`},
	{"pg_ls_dir in FROM", `SELECT * FROM pg_ls_dir('.')`, ReasonTableFunction, "", "pg_ls_dir"},
	{"lo_import", `SELECT lo_import('/etc/passwd')`, ReasonFunction, "", "lo_import"},
	{"dblink", `SELECT * FROM dblink('host=db', 'SELECT 1') AS t(a int)`, ReasonTableFunction, "", "dblink"},
	{"pg_sleep", `SELECT pg_sleep(100)`, ReasonFunction, "", "pg_sleep"},
	{"query_to_xml", `SELECT query_to_xml('select * from endpointkit_endpoints', true, true, '')`, ReasonFunction, "", "query_to_xml"},
	{"current_setting", `SELECT current_setting('data_directory')`, ReasonFunction, "", "current_setting"},
	{"set_config", `SELECT set_config('statement_timeout', '0', false)`, ReasonFunction, "", "set_config"},
	{"current_user", `SELECT current_user`, ReasonFunction, "", "current_user"},
	{"function hidden in a cast", `SELECT CAST(pg_read_file('/etc/passwd') AS text)`, ReasonFunction, "", "pg_read_file"},
	{"function in a type's place", `SELECT x::pg_read_file('/etc/passwd') FROM events`, ReasonUnsupported, "", ""},
	{"function in CONVERT's type place", `SELECT convert(properties, pg_read_file('/etc/passwd')) FROM events`, ReasonFunction, "", "pg_read_file"},
	{"data-modifying CTE", `WITH d AS (DELETE FROM events RETURNING *) SELECT * FROM d`, ReasonStatement, "", ""},
	{"insert in a CTE", `WITH d AS (INSERT INTO events VALUES (1) RETURNING *) SELECT * FROM d`, ReasonStatement, "", ""},
	{"FOR UPDATE", `SELECT * FROM events FOR UPDATE`, ReasonStatement, "", ""},
	{"SELECT INTO", `SELECT * INTO copy_of_events FROM events`, ReasonStatement, "", ""},
	{"TABLE statement", `TABLE endpointkit_endpoints`, ReasonStatement, "", ""},
	{"TABLE in a union", `SELECT * FROM events UNION TABLE endpointkit_endpoints`, ReasonStatement, "", ""},
	{"dollar quotes", `SELECT $$ FROM endpointkit_endpoints $$`, ReasonAmbiguous, "", ""},
	{"E string with an escaped quote", `SELECT E'\'', (SELECT 1 FROM endpointkit_endpoints)`, ReasonAmbiguous, "", ""},
	{"nested block comment", `SELECT * FROM events /* /* */ , endpointkit_endpoints */`, ReasonAmbiguous, "", ""},
	{"carriage return in a line comment", "SELECT * FROM events -- x\r, endpointkit_endpoints", ReasonAmbiguous, "", ""},
	{"jsonb #> operator", `SELECT properties #>> '{a}' FROM events`, ReasonAmbiguous, "", ""},

	// MySQL.
	{"mysql.user", `SELECT * FROM mysql.user`, ReasonCatalog, "mysql.user", ""},
	{"mysql.user backquoted", "SELECT * FROM `mysql`.`user`", ReasonCatalog, "mysql.user", ""},
	{"performance_schema", `SELECT * FROM performance_schema.threads`, ReasonCatalog, "performance_schema.threads", ""},
	{"sys schema", `SELECT * FROM sys.session`, ReasonCatalog, "sys.session", ""},
	{"LOAD_FILE", `SELECT LOAD_FILE('/etc/passwd')`, ReasonFunction, "", "LOAD_FILE"},
	{"SLEEP", `SELECT SLEEP(10)`, ReasonFunction, "", "SLEEP"},
	{"BENCHMARK", `SELECT BENCHMARK(1000000000, MD5('x'))`, ReasonFunction, "", "BENCHMARK"},
	{"USER()", `SELECT USER()`, ReasonFunction, "", "USER"},
	{"JSON_TABLE", `SELECT * FROM JSON_TABLE('[1]', '$[*]' COLUMNS(a INT PATH '$')) AS j`, ReasonTableFunction, "", "JSON_TABLE"},
	{"INTO OUTFILE", `SELECT * FROM events INTO OUTFILE '/tmp/x'`, ReasonStatement, "", ""},
	{"LOCK IN SHARE MODE", `SELECT * FROM events LOCK IN SHARE MODE`, ReasonStatement, "", ""},
	{"system variable", `SELECT @@datadir`, ReasonAmbiguous, "", ""},
	{"user variable assignment", `SELECT @a := (SELECT 1)`, ReasonAmbiguous, "", ""},
	{"version comment", `SELECT * FROM events /*!50000 UNION SELECT * FROM mysql.user */`, ReasonAmbiguous, "", ""},
	{"version comment with a join", `SELECT * FROM events /*! , endpointkit_endpoints */`, ReasonAmbiguous, "", ""},
	{"optimizer hint", `SELECT /*+ SET_VAR(max_execution_time=0) */ * FROM events`, ReasonAmbiguous, "", ""},
	{"hash comment", "SELECT * FROM events # \n, endpointkit_endpoints", ReasonAmbiguous, "", ""},
	{"dash dash without a space", "SELECT 1--1\n, (SELECT 1 FROM endpointkit_endpoints)", ReasonAmbiguous, "", ""},
	{"backslash-escaped double quote", `SELECT * FROM events WHERE event = "a\" , (SELECT 1 FROM mysql.user) , \""`, ReasonAmbiguous, "", ""},
	{"backslash-escaped single quote", `SELECT 'a\' , (SELECT query_json FROM endpointkit_endpoints) , '' FROM events`, ReasonAmbiguous, "", ""},
	{"number running into a keyword", `SELECT 1from endpointkit_endpoints`, ReasonAmbiguous, "", ""},

	// ClickHouse.
	{"system.tables", `SELECT * FROM system.tables`, ReasonCatalog, "system.tables", ""},
	{"system.query_log", `SELECT query FROM system.query_log`, ReasonCatalog, "system.query_log", ""},
	{"system.users upper case", `SELECT * FROM SYSTEM.USERS`, ReasonCatalog, "SYSTEM.USERS", ""},
	{"system table in ANY LEFT JOIN", `SELECT * FROM events e ANY LEFT JOIN system.users u ON 1`, ReasonCatalog, "system.users", ""},
	{"system table after GLOBAL IN", `SELECT * FROM events AS e WHERE e.event GLOBAL IN system.users`, ReasonUnsupported, "system.users", ""},
	{"table in parentheses after IN", `SELECT * FROM events WHERE distinct_id IN (endpointkit_variables)`, ReasonUnsupported, "endpointkit_variables", ""},
	{"qualified table in parentheses after IN", `SELECT * FROM events WHERE distinct_id NOT IN ((system.users))`, ReasonUnsupported, "system.users", ""},
	{"function form of IN", `SELECT in(distinct_id, endpointkit_variables) FROM events`, ReasonUnsupported, "", "in"},
	{"function form of IN after AND", `SELECT 1 FROM events WHERE 1 AND in('x', system.users)`, ReasonUnsupported, "", "in"},
	{"ARRAY JOIN subquery", `SELECT * FROM events ARRAY JOIN (SELECT groupArray(query_json) FROM endpointkit_endpoints) AS q`, ReasonProtected, "endpointkit_endpoints", ""},
	{"file()", `SELECT * FROM file('/etc/passwd', 'LineAsString')`, ReasonTableFunction, "", "file"},
	{"file() as a function", `SELECT file('/etc/passwd')`, ReasonFunction, "", "file"},
	{"url()", `SELECT * FROM url('http://169.254.169.254/latest/meta-data/', 'CSV')`, ReasonTableFunction, "", "url"},
	{"s3()", `SELECT * FROM s3('https://bucket.s3.amazonaws.com/k.csv')`, ReasonTableFunction, "", "s3"},
	{"remote()", `SELECT * FROM remote('other:9000', default.secrets)`, ReasonTableFunction, "", "remote"},
	{"mysql()", `SELECT * FROM mysql('db:3306', 'app', 'users', 'u', 'p')`, ReasonTableFunction, "", "mysql"},
	{"postgresql()", `SELECT * FROM postgresql('db:5432', 'app', 'users', 'u', 'p')`, ReasonTableFunction, "", "postgresql"},
	{"merge()", `SELECT * FROM merge(currentDatabase(), '^endpointkit')`, ReasonTableFunction, "", "merge"},
	{"view()", `SELECT * FROM view(SELECT * FROM endpointkit_endpoints)`, ReasonTableFunction, "", "view"},
	{"read_csv", `SELECT * FROM read_csv('/etc/passwd')`, ReasonTableFunction, "", "read_csv"},
	{"dictGet", `SELECT dictGet('secrets', 'value', toUInt64(1))`, ReasonFunction, "", "dictGet"},
	{"joinGet", `SELECT joinGet('secrets', 'value', 1)`, ReasonFunction, "", "joinGet"},
	{"SETTINGS", `SELECT * FROM events SETTINGS max_execution_time = 0`, ReasonStatement, "", ""},
	// A subquery's own SETTINGS outranks the run's readonly = 1 on chDB 26.5:
	// SELECT getSetting('readonly') in it returns 0 there.
	{"SETTINGS in a subquery", `SELECT m FROM (SELECT count() AS m FROM events SETTINGS readonly = 0)`, ReasonStatement, "", ""},
	{"SETTINGS in a CTE", `WITH q AS (SELECT 1 AS m SETTINGS readonly = 0) SELECT m FROM q`, ReasonStatement, "", ""},
	{"FORMAT", `SELECT * FROM events FORMAT JSON`, ReasonStatement, "", ""},
	{"query parameter", `SELECT * FROM {db:Identifier}.events`, ReasonAmbiguous, "", ""},
	{"heredoc", `SELECT $x$ FROM endpointkit_endpoints $x$`, ReasonAmbiguous, "", ""},
	{"no-break space between words", "SELECT a\u00a0FROM\u00a0endpointkit_endpoints", ReasonAmbiguous, "", ""},
	{"unicode quotation marks", "SELECT * FROM \u201cendpointkit_endpoints\u201d", ReasonAmbiguous, "", ""},

	// Statements and structure.
	{"stacked statement", `SELECT * FROM events WHERE project_id = 1; DROP TABLE events`, ReasonStatement, "", ""},
	{"stacked select", `SELECT * FROM events; SELECT * FROM endpointkit_endpoints`, ReasonStatement, "", ""},
	{"stacked after comments", "SELECT 1; -- done\n/* more */ SELECT 2", ReasonStatement, "", ""},
	{"not a select", `DELETE FROM events`, ReasonStatement, "", ""},
	{"pragma statement", `PRAGMA table_info(events)`, ReasonStatement, "", ""},
	{"explain", `EXPLAIN SELECT * FROM events`, ReasonStatement, "", ""},
	{"empty", " -- nothing\n", ReasonStatement, "", ""},
	{"escape the paging wrapper", `SELECT 1) UNION SELECT query_json FROM endpointkit_endpoints --`, ReasonUnsupported, "", ""},
	{"escape the wrapper, balanced in total", `SELECT * FROM events) AS q, (SELECT * FROM endpointkit_endpoints`, ReasonUnsupported, "", ""},
	{"unclosed parenthesis", `SELECT * FROM (SELECT * FROM events`, ReasonUnsupported, "", ""},
	{"unclosed string", `SELECT 'abc FROM events`, ReasonUnsupported, "", ""},
	{"unclosed block comment", `SELECT 1 /* FROM endpointkit_endpoints`, ReasonUnsupported, "", ""},

	// Placeholders in odd places.
	{"placeholder as a table", `SELECT * FROM {variables.table}`, ReasonUnsupported, "", ""},
	{"placeholder as a function", `SELECT {variables.f}(1)`, ReasonUnsupported, "", ""},
	{"placeholder as a column of a table", `SELECT * FROM events AS e WHERE e.{variables.x} = 1`, ReasonUnsupported, "", ""},
	{"placeholder as an alias", `SELECT * FROM events AS {variables.a}`, ReasonUnsupported, "", ""},
	{"placeholder then IN table", `SELECT * FROM events WHERE {variables.a} IN sqlite_master`, ReasonUnsupported, "sqlite_master", ""},
	{"placeholder qualifying a table", `SELECT * FROM {variables.schema}.events`, ReasonUnsupported, "", ""},
	{"malformed placeholder", `SELECT * FROM events WHERE event = {variables.}`, ReasonUnsupported, "", ""},
	{"unknown function", `SELECT frobnicate(event) FROM events`, ReasonFunction, "", "frobnicate"},
	// Forms that read like another (forms_engines_test.go's forms): each
	// still names every table it reads.
	{"parenthesised set operation, forbidden arm", `(SELECT uuid FROM events) UNION ALL (SELECT id FROM secrets)`, ReasonTable, "secrets", ""},
	{"parenthesised set operation, library arm", `(SELECT 1) UNION (SELECT query_json FROM endpointkit_endpoints)`, ReasonProtected, "endpointkit_endpoints", ""},
	{"parenthesised set operation, nested", `(((SELECT uuid FROM events) EXCEPT (SELECT name FROM sqlite_master)))`, ReasonCatalog, "sqlite_master", ""},
	{"parenthesised set operation, ORDER BY subquery", `(SELECT uuid FROM events) UNION (SELECT uuid FROM events) ORDER BY (SELECT count(*) FROM secrets)`, ReasonTable, "secrets", ""},
	{"parenthesised set operation, LIMIT subquery", `(SELECT 1) UNION (SELECT 2) LIMIT (SELECT count(*) FROM endpointkit_variables)`, ReasonProtected, "endpointkit_variables", ""},
	{"parenthesised query, INTO", `(SELECT 1) INTO OUTFILE '/tmp/x'`, ReasonStatement, "", ""},
	{"parenthesised statement", `(DELETE FROM events)`, ReasonStatement, "", ""},
	// No engine runs this text (a set operation, then FROM): it is a
	// syntax error, refused before any table is looked at.
	{"EXCEPT holding a subquery is a set operation", `SELECT * EXCEPT (SELECT id FROM secrets) FROM events`, ReasonUnsupported, "", ""},
	{"EXCEPT holding more than names", `SELECT * EXCEPT (event, (SELECT id FROM secrets)) FROM events`, ReasonUnsupported, "", ""},
	{"EXCEPT after a table is a set operation", `SELECT * FROM events EXCEPT (SELECT * FROM secrets)`, ReasonTable, "secrets", ""},
	{"REPLACE holding a subquery", `SELECT * REPLACE ((SELECT max(id) FROM secrets) AS event) FROM events`, ReasonTable, "secrets", ""},
	{"REPLACE holding a library read", `SELECT e.* REPLACE STRICT (coalesce((SELECT name FROM endpointkit_endpoints), event) AS event) FROM events e`, ReasonProtected, "endpointkit_endpoints", ""},
	{"REPLACE holding a forbidden function", `SELECT * REPLACE (file('/etc/passwd') AS event) FROM events`, ReasonFunction, "", "file"},
	{"subscript holding a subquery", `SELECT properties[(SELECT query_json FROM endpointkit_endpoints LIMIT 1)] FROM events`, ReasonProtected, "endpointkit_endpoints", ""},
	{"string subscript holding a subquery", `SELECT properties['k'][(SELECT count(*) FROM secrets)] FROM events`, ReasonTable, "secrets", ""},
	{"subscript string hiding a table from SQLite", `SELECT properties['x] FROM secrets --'] FROM events`, ReasonAmbiguous, "", ""},
	{"subscript comment hiding a table from SQLite", "SELECT properties['k' /* ] FROM secrets */] FROM events", ReasonAmbiguous, "", ""},
	{"subscript line comment", "SELECT properties['k' -- ]\n] FROM events", ReasonAmbiguous, "", ""},
}

func TestCheckRefusesAttacks(t *testing.T) {
	require.GreaterOrEqual(t, len(attacks), 40, "only")
	rules := testRules()
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			err := Check(a.query, rules)
			var e *Error
			require.ErrorAs(t, err, &e, "Check(%q)", a.query)
			assert.ErrorIs(t, err, ErrRefused, "error does not wrap ErrRefused")
			if e.Reason != a.reason || e.Table != a.table || e.Function != a.function {
				t.Errorf("Check(%q):\n got reason %s, table %q, function %q: %v\nwant reason %s, table %q, function %q",
					a.query, e.Reason, e.Table, e.Function, err, a.reason, a.table, a.function)
			}
			if a.table != "" && !strings.Contains(e.Error(), strconv.Quote(a.table)) {
				t.Errorf("message %q does not name table %q", e.Error(), a.table)
			}
			if a.function != "" && !strings.Contains(e.Error(), strconv.Quote(a.function)) {
				t.Errorf("message %q does not name function %q", e.Error(), a.function)
			}
			if e.Line < 1 || e.Column < 1 || e.Offset < 0 || e.Offset > len(a.query) {
				t.Errorf("bad position %d:%d (offset %d)", e.Line, e.Column, e.Offset)
			}
			_, serr := Confine(a.query, rules, "__endpointkit_tenant")
			if assert.Error(t, serr, "Scope refused with %v, Check with %v", serr, err) {
				assert.Equal(t, err.Error(), serr.Error(), "Scope refused with %v, Check with %v", serr, err)
			}
		})
	}
}

// readmeQuery is the query of the README and of examples/server's session.
const readmeQuery = "SELECT substr(timestamp, 1, 10) AS day, count(*) AS events, count(DISTINCT distinct_id) AS users" +
	" FROM events WHERE event = {variables.event} AND timestamp >= {variables.from} AND timestamp < {variables.to}" +
	" GROUP BY day ORDER BY day"

// accepted are queries that must pass: the README's, analytics SQL of the
// four engines, CTEs and subqueries over allowed tables.
var accepted = []string{
	readmeQuery,
	"SELECT substr(timestamp, 1, 10) AS day, count(*) AS events FROM events WHERE event = {variables.event} AND timestamp >= {variables.from} AND timestamp < {variables.to} GROUP BY day ORDER BY day",
	"SELECT count() FROM events WHERE event = {variables.event}",
	"SELECT count(*) FROM events WHERE event IN {variables.events}",
	"SELECT count(*) FROM events WHERE event IN ({variables.events}) AND distinct_id NOT IN (SELECT id FROM users)",
	"select * from events where event = { variables . event };",
	"SELECT 1",
	"SELECT 1; -- trailing comment\n;",
	"/* leading comment */ SELECT 'it''s', 'a\\nb', \"quoted col\" FROM events -- end",
	`SELECT e."event", "E2".uuid FROM "events" AS e JOIN Events "E2" ON e.uuid = "E2".uuid`,
	"SELECT * FROM `events` AS `e` WHERE `e`.`event` = 'x'",
	`SELECT * FROM analytics.sessions s JOIN events e ON e.distinct_id = s.user_id`,
	`SELECT * FROM "analytics"."sessions"`,
	`WITH daily AS (SELECT substr(timestamp, 1, 10) AS d, count(*) AS n FROM events GROUP BY d)
	 SELECT d, n, sum(n) OVER (ORDER BY d ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS running FROM daily ORDER BY d`,
	`WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 10) SELECT n FROM r`,
	`WITH a AS (SELECT distinct_id FROM events), b AS (SELECT * FROM a WHERE distinct_id <> '') SELECT count(*) FROM b JOIN a USING (distinct_id)`,
	`WITH buyers AS MATERIALIZED (SELECT DISTINCT distinct_id FROM events WHERE event = 'purchase') SELECT count(*) FROM buyers`,
	`SELECT a.distinct_id, count(*) FROM events a JOIN events b ON a.distinct_id = b.distinct_id AND b.timestamp > a.timestamp GROUP BY a.distinct_id`,
	`SELECT (SELECT count(*) FROM events) AS total, (SELECT max(timestamp) FROM events) AS last`,
	`SELECT count(*) FROM events e WHERE EXISTS (SELECT 1 FROM events f WHERE f.distinct_id = e.distinct_id AND f.event = 'purchase')`,
	`SELECT n, count(*) FROM (SELECT distinct_id, count(*) AS n FROM events GROUP BY distinct_id) AS per_user GROUP BY n HAVING count(*) > 1 ORDER BY n LIMIT 10 OFFSET 5`,
	`SELECT 1 UNION (SELECT 2) ORDER BY 1`,
	`SELECT * FROM ((SELECT uuid FROM events) UNION ALL (SELECT uuid FROM events)) AS u`,
	`SELECT * FROM ((SELECT uuid FROM events) AS a JOIN events b ON a.uuid = b.uuid)`,
	`SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS v(n, s)`,
	`SELECT CASE WHEN event = 'purchase' THEN 1 ELSE 0 END, coalesce(nullif(event, ''), 'none') FROM events`,
	`SELECT event FROM events WHERE distinct_id IS NOT DISTINCT FROM {variables.user} AND uuid IS DISTINCT FROM 'x'`,
	`SELECT EXTRACT(YEAR FROM timestamp), substring(event FROM 1 FOR 3), trim(BOTH ' ' FROM event), position('a' IN event) FROM events`,
	// SQLite.
	`SELECT j.key, count(*) FROM events e, json_each(e.properties) j GROUP BY j.key`,
	`SELECT strftime('%Y-%m-%d 00:00:00', timestamp, 'weekday 0', '-6 days') AS w, total(json_extract(properties, '$.amount')) FROM events INDEXED BY events_event_timestamp GROUP BY w`,
	`SELECT CAST(json_extract(properties, '$."$browser"') AS TEXT), json_type(properties, '$.amount') IN ('integer', 'real') FROM events NOT INDEXED`,
	`SELECT instr(lower(event), lower({variables.q})) > 0, iif(event = 'a', 1, 0), typeof(timestamp) FROM events`,
	// PostgreSQL.
	`SELECT date_trunc('day', timestamp::timestamp) AS d, count(DISTINCT distinct_id) FILTER (WHERE event = 'purchase') FROM events GROUP BY 1`,
	`SELECT to_char(date_trunc('week', "timestamp"::timestamp), 'YYYY-MM-DD HH24:MI:SS'), (properties::jsonb ->> 'amount')::double precision FROM events`,
	`SELECT DISTINCT ON (distinct_id) distinct_id, timestamp FROM events ORDER BY distinct_id, timestamp DESC NULLS LAST`,
	`SELECT e.uuid, x.n FROM events e CROSS JOIN LATERAL (SELECT count(*) AS n FROM events f WHERE f.distinct_id = e.distinct_id) x`,
	`SELECT * FROM ONLY events`,
	`SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY length(event)) FROM events`,
	`SELECT g FROM unnest('{1,2}') AS g(n) JOIN events ON true`,
	`SELECT CAST(x AS DECIMAL(10, 2)), x::numeric(3, 1), x::varchar(20), ts::timestamp with time zone, y::text[] FROM events`,
	`SELECT jsonb_typeof((properties::jsonb) -> 'a'), properties::jsonb @> '{"a": 1}' FROM events`,
	`SELECT count(*) FROM events GROUP BY GROUPING SETS ((event), (distinct_id), ())`,
	`SELECT * FROM events FETCH FIRST 10 ROWS ONLY`,
	// MySQL.
	`SELECT DATE_FORMAT(timestamp, '%Y-%m-%d 00:00:00') AS d, COUNT(*) FROM events USE INDEX (events_event_timestamp) GROUP BY d WITH ROLLUP`,
	`SELECT JSON_UNQUOTE(JSON_EXTRACT(properties, '$.plan')), CONVERT(event USING utf8mb4), CONVERT(timestamp, DATETIME), CAST(x AS CHAR CHARACTER SET utf8mb4) FROM events`,
	`SELECT DATE_FORMAT(DATE_SUB(DATE(timestamp), INTERVAL WEEKDAY(timestamp) DAY), '%Y-%m-%d 00:00:00'), LOCATE(LOWER('a'), LOWER(event)) FROM events e STRAIGHT_JOIN users u ON u.id = e.distinct_id`,
	`SELECT CAST(JSON_EXTRACT(properties, '$.amount') AS DOUBLE), GROUP_CONCAT(DISTINCT event ORDER BY event SEPARATOR ', ') FROM events LIMIT 5, 10`,
	`SELECT * FROM events FORCE INDEX FOR ORDER BY (events_event_timestamp) ORDER BY timestamp`,
	// ClickHouse.
	`SELECT toStartOfDay(toDateTime(timestamp, 'UTC')) AS d, countIf(event = 'purchase'), uniqExact(distinct_id), uniqExactIf(distinct_id, event = 'x') FROM events FINAL SAMPLE 1/10 PREWHERE event != '' GROUP BY d ORDER BY d WITH FILL LIMIT 1 BY d`,
	`SELECT formatDateTime(toStartOfInterval(toDateTime(timestamp), INTERVAL 1 hour), '%Y-%m-%d %H:%i:%S', 'UTC'), JSONExtractString(properties, 'plan'), JSONExtract(properties, 'amount', 'Nullable(Float64)') FROM events`,
	`SELECT positionCaseInsensitiveUTF8(event, 'a') > 0, multiIf(event = 'a', 1, event = 'b', 2, 3), quantile(0.9)(length(event)), arrayMap(x -> x * 2, array(1, 2)) FROM events`,
	`SELECT e.uuid, tag FROM events AS e ARRAY JOIN splitByChar(',', event) AS tag`,
	`SELECT * FROM events e ANY LEFT JOIN users u ON u.id = e.distinct_id GLOBAL ANY INNER JOIN events f USING uuid`,
	`SELECT CAST(x AS Nullable(String)), toDecimal64(x, 2), CAST(y, 'DateTime64(3)'), t.1 FROM events`,
	`WITH toDate('2025-05-01') AS start SELECT count() FROM events WHERE toDate(timestamp) >= start`,
	`WITH (SELECT max(timestamp) FROM events) AS last SELECT count() FROM events WHERE timestamp = last`,
	`SELECT number FROM numbers(10)`,
	`SELECT count() FROM events WHERE event GLOBAL IN (SELECT event FROM events) AND has(array('a', 'b'), event) AND arr[1] = 'x'`,
}

func TestCheckAcceptsQueries(t *testing.T) {
	rules := testRules()
	for _, q := range accepted {
		assert.NoError(t, Check(q, rules), "Check(%q)", q)
	}
}

// TestCheckAcceptsInsightSQL runs Check on the SQL package insight
// generates for every engine (its golden files), with the bind markers
// turned back into placeholders: the built-in function list must cover
// what the library writes itself.
func TestCheckAcceptsInsightSQL(t *testing.T) {
	files, err := filepath.Glob("../../insight/testdata/*.sql")
	require.NoError(t, err, "no golden SQL found: %v", err)
	require.NotEmpty(t, files, "no golden SQL found: %v", err)
	markers := regexp.MustCompile(`\?|\$(\d+)|\{(p\d+):[A-Za-z0-9()]+\}`)
	rules := &Rules{Tables: []Table{{Name: "events"}}}
	checked := 0
	for _, f := range files {
		if strings.Contains(f, "materialized") {
			continue // DDL and reads of the library's own tables
		}
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		sql, _, _ := strings.Cut(string(b), "\n-- args:")
		n := 0
		sql = markers.ReplaceAllStringFunc(sql, func(string) string {
			n++
			return "{variables.p" + strings.Repeat("x", n%3) + "}"
		})
		assert.NoError(t, Check(sql, rules), "%s\n%s", f, sql)
		checked++
	}
	require.GreaterOrEqual(t, checked, 16, "checked only")
}

func TestRulesAllowMore(t *testing.T) {
	q := `SELECT my_udf(event) FROM events, my_series(3) s`
	base := testRules()
	require.Error(t, Check(q, base), "unknown functions passed")
	more := testRules()
	more.Functions = []string{"MY_UDF"}
	more.TableFunctions = []string{"my_series"}
	require.NoError(t, Check(q, more), "Check with Functions and TableFunctions")
}

func TestRulesCannotAllowProtected(t *testing.T) {
	for _, r := range []Rules{
		{Tables: []Table{{Name: "endpointkit_endpoints"}}},
		{Tables: []Table{{Name: "sqlite_master"}}},
		{Tables: []Table{{Name: "pg_catalog.pg_class"}}},
		{Tables: []Table{{Name: "system.tables"}}},
		{Tables: []Table{{Name: "information_schema.tables"}}},
		{Functions: []string{"pg_read_file"}},
		{Functions: []string{"load_extension"}},
		{Functions: []string{"SLEEP"}},
		{TableFunctions: []string{"file"}},
		{TableFunctions: []string{"pragma_table_info"}},
		{Tables: []Table{{Name: "events"}, {Name: "EVENTS"}}},
		{Tables: []Table{{Name: "a.b.c.d"}}},
		{Tables: []Table{{Name: "bad name"}}},
		{Tables: []Table{{Name: "events", Columns: []string{}}}},
		{Tables: []Table{{Name: "events", Columns: []string{"a", "A"}}}},
		{Tables: []Table{{Name: "events", TenantColumn: "project id"}}},
	} {
		_, err := NewStatic(r, nil)
		if assert.Error(t, err, "NewStatic(%+v)", r) {
			assert.NotErrorIs(t, err, ErrRefused, "NewStatic(%+v)", r)
		}
		if err := Check("SELECT 1", &r); err == nil || errors.Is(err, ErrRefused) {
			t.Errorf("Check under %+v = %v, want a configuration error", r, err)
		}
	}
}

func TestZeroRulesReadNothing(t *testing.T) {
	require.NoError(t, Check("SELECT 1 + 1", nil), "a query without tables")
	var e *Error
	err := Check("SELECT * FROM events", nil)
	require.ErrorAs(t, err, &e, "Check under nil rules = %v", err)
	require.Equal(t, ReasonTable, e.Reason, "Check under nil rules = %v", err)
}

func TestErrorPosition(t *testing.T) {
	q := "SELECT 1\nFROM events e,\n  \u00e9t\u00e9, sqlite_master"
	err := Check(q, testRules())
	var e *Error
	require.ErrorAs(t, err, &e, "Check")
	// The unquoted é is refused first, at line 3, column 3.
	if e.Line != 3 || e.Column != 3 || e.Reason != ReasonAmbiguous {
		t.Fatalf("got %d:%d %s: %v", e.Line, e.Column, e.Reason, err)
	}
	q = "SELECT 1\nFROM events e,\n  \"\u00e9t\u00e9\", sqlite_master"
	err = Check(q, testRules())
	if !errors.As(err, &e) || e.Line != 3 || e.Column != 3 || e.Table != "\u00e9t\u00e9" {
		t.Fatalf("got %v", err)
	}
}

func TestErrorEchoIsBounded(t *testing.T) {
	long := strings.Repeat("x", 10000)
	err := Check(`SELECT * FROM "`+long+`"`, testRules())
	var e *Error
	require.ErrorAs(t, err, &e, "Check")
	require.LessOrEqual(t, len(e.Error()), 200, "error repeats %d bytes: %q", len(e.Error()), e.Error())
	require.LessOrEqual(t, len(e.Table), int(maxEcho+3), "error repeats %d bytes: %q", len(e.Error()), e.Error())
}

func TestDeepNestingIsRefused(t *testing.T) {
	q := "SELECT " + strings.Repeat("(", 100000) + "1" + strings.Repeat(")", 100000)
	var e *Error
	err := Check(q, nil)
	require.ErrorAs(t, err, &e, "Check = %v", err)
	require.Equal(t, ReasonUnsupported, e.Reason, "Check = %v", err)
	q = "SELECT " + strings.Repeat("(", 50) + "1" + strings.Repeat(")", 50)
	require.NoError(t, Check(q, nil), "50 levels")
}

// TestNestedJoinsTakeLinearTime: "((SELECT ...) AS a JOIN b ON ...)"
// starts like a derived table; deciding by backtracking took time
// exponential in the nesting (this test would not end).
func TestNestedJoinsTakeLinearTime(t *testing.T) {
	q := "events"
	for range 40 {
		q = "((SELECT * FROM " + q + ") AS a JOIN events b ON 1)"
	}
	require.NoError(t, Check("SELECT * FROM "+q, testRules()))
	require.Error(t, Check("SELECT * FROM "+strings.Replace(q, "events b", "endpointkit_endpoints b", 1), testRules()), "the library table in the outermost join passed")
}
