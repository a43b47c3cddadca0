package endpoint

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/scope"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadFault: each engine's message about an unknown column or table,
// or a syntax error, is read as such with the name (or the text the error
// is near) it quotes; other messages are other faults.
func TestReadFault(t *testing.T) {
	for _, c := range []struct {
		msg  string
		kind faultKind
		name string
	}{
		{"no such column: evnt", faultColumn, "evnt"},
		{"no such column: e.evnt", faultColumn, "e.evnt"},
		{`column "evnt" does not exist`, faultColumn, "evnt"},
		{"column e.evnt does not exist", faultColumn, "e.evnt"},
		{"Unknown column 'evnt' in 'SELECT'", faultColumn, "evnt"},
		{"Unknown expression identifier `evnt`", faultColumn, "evnt"},
		{"Identifier 'e.evnt' cannot be resolved from table with name e", faultColumn, "e.evnt"},
		{"no such table: evnts", faultTable, "evnts"},
		{`relation "evnts" does not exist`, faultTable, "evnts"},
		{"Table 'db.evnts' doesn't exist", faultTable, "db.evnts"},
		{"Unknown table expression identifier 'evnts'", faultTable, "evnts"},
		{"Table default.evnts does not exist", faultTable, "default.evnts"},
		{`near ",": syntax error`, faultSyntax, ","},
		{`syntax error at or near "FROM"`, faultSyntax, "FROM"},
		{"incomplete input", faultSyntax, ""},
		{"syntax error at end of input", faultSyntax, ""},
		{"You have an error in your SQL syntax; check the manual that corresponds to your MariaDB server version for the right syntax to use near ' 1 FROM events\n) AS endpoint_q LIMIT ? OFFSET ?' at line 2", faultSyntax, " 1 FROM events\n) AS endpoint_q LIMIT ? OFFSET ?"},
		{"Syntax error: failed at position 32 (1) (line 2, col 16): 1 FROM events. Expected one of: a, b", faultSyntax, "1 FROM events"},
		{"division by zero", faultOther, ""},
		{"ambiguous column name: event", faultOther, ""},
	} {
		kind, name := readFault(c.msg)
		assert.Equal(t, c.kind, kind, c.msg)
		assert.Equal(t, c.name, name, c.msg)
	}
}

// TestCleanMessage: the statement the Service wraps around a query is cut
// from an engine's message, and MySQL's and ClickHouse's syntax errors
// read as one.
func TestCleanMessage(t *testing.T) {
	for msg, want := range map[string]string{
		"no such column: evnt": "no such column: evnt",
		"You have an error in your SQL syntax; check the manual that corresponds to your MariaDB server version for the right syntax to use near ') AS endpoint_q LIMIT ? OFFSET ?' at line 3": "syntax error at the end of the query",
		"Syntax error: failed at position 48 ()) (line 3, col 1): ) AS endpoint_q LIMIT {p1:Int64} OFFSET {p2:Int64} SETTINGS max_execution_time = 30, readonly = 1. Expected one of: x":       "syntax error at the end of the query",
	} {
		assert.Equal(t, want, cleanMessage(msg), msg)
	}
}

// TestSuggest: the nearest names by Damerau-Levenshtein distance, case
// aside; all of them listed when none is near.
func TestSuggest(t *testing.T) {
	assert.Equal(t, 1, distance("evnt", "event"))
	assert.Equal(t, 1, distance("evnet", "event"), "a transposition is one edit")
	assert.Equal(t, 0, distance("", ""))
	assert.Equal(t, 3, distance("abc", ""))
	assert.Equal(t, "did you mean event?", suggest("evnt", []string{"uuid", "event", "timestamp"}, "columns"))
	assert.Equal(t, "did you mean Event?", suggest("EVNT", []string{"Event"}, "columns"))
	assert.Equal(t, "did you mean orders or ordre?", suggest("ordrs", []string{"orders", "order", "ordre"}, "tables"))
	assert.Equal(t, "columns: uuid, timestamp.", suggest("zzz", []string{"uuid", "timestamp"}, "columns"))
}

// TestLocate: where a name or an engine's quoted text is in the query.
func TestLocate(t *testing.T) {
	sql := "SELECT e.evnt\nFROM \"events\" AS e"
	off, ok := locateName(engine.PostgreSQL.Lexical(), sql, "e.evnt", "evnt")
	assert.True(t, ok)
	assert.Equal(t, 7, off)
	off, ok = locateName(engine.PostgreSQL.Lexical(), sql, "events", "events")
	assert.True(t, ok)
	line, col := position(sql, off)
	assert.Equal(t, [2]int{2, 6}, [2]int{line, col})
	_, _, ok = locateText("SELECT a,, b FROM t", ",")
	assert.False(t, ok, "a text the query holds twice has no one place")
	off, n, ok := locateText("SELECT a,, 1 FROM t", "1 FROM (SELECT * FROM t WHERE tenant = ?) AS t")
	assert.True(t, ok)
	assert.Equal(t, [2]int{11, 7}, [2]int{off, n})
	assert.True(t, balanced(engine.SQLite.Lexical(), "SELECT count(*) FROM t WHERE"))
	assert.False(t, balanced(engine.SQLite.Lexical(), "SELECT f(a,)) FROM t"))
	assert.Equal(t, []string{"events", "s.persons"}, queriedTables(engine.SQLite.Lexical(), "SELECT * FROM events e JOIN s.persons p ON 1 = 1 WHERE x IN (SELECT y FROM events)"))
}

// TestInertMessagePerEngine: a placeholder the engine reads as text is
// refused with the form that works on that engine, built from the
// literal's own pieces.
func TestInertMessagePerEngine(t *testing.T) {
	const like = "SELECT * FROM events WHERE event LIKE '%{variables.q}%'"
	const where = "Placeholder {variables.q} at line 1, column 41 is inside a string literal, where the database reads it as text and binds no value; build the text with the placeholder outside the quotes: "
	for _, tc := range []struct {
		e      engine.Engine
		sql    string
		detail string
	}{
		{engine.SQLite, like, where + "'%' || {variables.q} || '%'"},
		{engine.PostgreSQL, like, where + "'%' || {variables.q} || '%'"},
		{engine.MySQL, like, where + "concat('%', {variables.q}, '%')"},
		{engine.ClickHouse, like, where + "concat('%', {variables.q}, '%')"},
		{engine.SQLite, "SELECT 1 WHERE country = '{variables.q}'",
			"Placeholder {variables.q} at line 1, column 27 is inside a string literal, where the database reads it as text and binds no value; build the text with the placeholder outside the quotes: {variables.q}"},
		{engine.SQLite, "SELECT 1 WHERE a = 'it''s {variables.q} or {variables.r}!'",
			"Placeholder {variables.q} at line 1, column 27 is inside a string literal, where the database reads it as text and binds no value; build the text with the placeholder outside the quotes: 'it''s ' || {variables.q} || ' or ' || {variables.r} || '!'"},
		{engine.MySQL, "SELECT 1 WHERE a = 'x{variables.q}'",
			"Placeholder {variables.q} at line 1, column 22 is inside a string literal, where the database reads it as text and binds no value; build the text with the placeholder outside the quotes: concat('x', {variables.q})"},
		{engine.PostgreSQL, "SELECT 1 WHERE a = $$%{variables.q}%$$",
			"Placeholder {variables.q} at line 1, column 23 is inside a string literal, where the database reads it as text and binds no value; build the text with the placeholder outside the quotes: '%' || {variables.q} || '%'"},
		{engine.SQLite, "SELECT 1\n-- filter on {variables.q}\nWHERE 1 = 1",
			"Placeholder {variables.q} at line 2, column 14 is inside a comment, where the database reads it as text and binds no value; write it outside the comment"},
		{engine.PostgreSQL, "SELECT 1 /* {variables.q} */",
			"Placeholder {variables.q} at line 1, column 13 is inside a comment, where the database reads it as text and binds no value; write it outside the comment"},
		{engine.SQLite, `SELECT "{variables.q}" FROM events`,
			"Placeholder {variables.q} at line 1, column 9 is inside a quoted name, where the database reads it as text and binds no value; a variable's value can only stand where a value does, outside the quotes"},
	} {
		tmpl, err := placeholder.CompileFor(tc.e.Lexical(), tc.sql)
		require.NoError(t, err, "%s: CompileFor(%q)", tc.e, tc.sql)
		err = checkInert(tc.e, tc.sql, tmpl)
		if !assert.Error(t, err, "%s: %q saves; want it refused", tc.e, tc.sql) {
			continue
		}
		if e := err.(*Error); e.Status != 400 || e.Code != CodeInvalidInput || e.Detail != tc.detail || e.Attr != "query" {
			t.Errorf("%s: %q:\n got {%d %s %q %s}\nwant {400 invalid_input %q query}", tc.e, tc.sql, e.Status, e.Code, e.Detail, e.Attr, tc.detail)
		}
	}
	// Text that only looks like the start of a placeholder names no
	// variable: JSON in a literal saves.
	for _, sql := range []string{`SELECT '{"variables": 1}'`, "SELECT '{variables.}'", "SELECT 1 -- {not a placeholder}"} {
		tmpl, err := placeholder.CompileFor(engine.SQLite.Lexical(), sql)
		require.NoError(t, err)
		assert.NoError(t, checkInert(engine.SQLite, sql, tmpl), "%q", sql)
	}
}

// pagedOf compiles src as an endpoint query of engine e without variables
// of its own and pages it.
func pagedOf(t testing.TB, e engine.Engine, src string) (*compiled, error) {
	t.Helper()
	tmpl, err := placeholder.CompileFor(e.Lexical(), src)
	require.NoError(t, err, "Compile(%q)", src)
	c, _, err := compiledOf(tmpl, e)
	return c, err
}

// compiledOf compiles tmpl, a query of engine e without variables, as
// compileSQL does: one statement, scoped (with no policy), paged. It
// returns the scoped template too.
func compiledOf(tmpl *placeholder.Template, e engine.Engine) (*compiled, *scope.Template, error) {
	c := &compiled{tmpl: tmpl, index: map[string]int{}, scope: scope.New(nil, "1", e)}
	for i, n := range tmpl.Names() {
		c.index[n] = i
	}
	if err := singleStatement(tmpl.Statement()); err != nil {
		return c, nil, err
	}
	text, _, err := c.scope.Compile(tmpl.Source())
	if err != nil {
		return c, nil, err
	}
	return c, text, c.compilePaged(text)
}

func TestCompilePaged(t *testing.T) {
	const tail = "\n) AS endpoint_q LIMIT {variables.endpoint_limit} OFFSET {variables.endpoint_offset}"
	const single = "an endpoint runs a single statement; remove the ';' and what follows it."
	for _, tc := range []struct {
		src, body string
		err       string        // the message of the 400, "" for none, "sandbox" for the sandbox's refusal
		e         engine.Engine // nil for SQLite
	}{
		{"SELECT 1", "SELECT 1", "", nil},
		{"SELECT 1;", "SELECT 1", "", nil},
		{"SELECT 1 ;; \n", "SELECT 1", "", nil},
		{"SELECT 1 -- trailing; comment", "SELECT 1", "", nil},
		{"SELECT 1; -- done\n/* really */ ;", "SELECT 1", "", nil},
		{"SELECT ';' AS s;", "SELECT ';' AS s", "", nil},
		{"SELECT \"a;b\", `c;d` FROM t", "SELECT \"a;b\", `c;d` FROM t", "", nil},
		{"SELECT 'it''s;' -- x", "SELECT 'it''s;'", "", nil},
		// The sandbox refuses, before paging, a literal that engines read
		// differently (a backslash before a quote on MySQL).
		{`SELECT 'a\';' FROM t;`, ``, "sandbox", engine.MySQL},
		{`SELECT 'a\'';' FROM t;`, `SELECT 'a\'';' FROM t`, "", nil}, // SQLite: no escapes
		// So are MySQL's '#' comments and PostgreSQL's dollar quotes
		// (placeholder's own tests read them per engine).
		{"SELECT 1 # c; d\nFROM t;", "", "sandbox", engine.MySQL},
		{"SELECT $$;$$ FROM t;", "", "sandbox", engine.PostgreSQL},
		{"SELECT 1 /* ; */ FROM t", "SELECT 1 /* ; */ FROM t", "", nil},
		{"SELECT {variables.x};", "SELECT {variables.x}", "", nil},
		{"SELECT 1 -- c\nFROM t -- d", "SELECT 1 -- c\nFROM t", "", nil},
		{"SELECT 1; SELECT 2", "", "Invalid query at line 1, column 9: " + single, nil},
		{"SELECT 1;\n-- c\nDROP TABLE t", "", "Invalid query at line 1, column 9: " + single, nil},
		{"ab\ncdé;\nx", "", "Invalid query at line 2, column 4: " + single, nil},
		{"-- only a comment", "", "sandbox", nil},
	} {
		e := tc.e
		if e == nil {
			e = engine.SQLite
		}
		c, err := pagedOf(t, e, tc.src)
		var ae *access.Error
		switch {
		case tc.err == "sandbox":
			assert.ErrorAs(t, err, &ae, "compilePaged(%q)", tc.src)
		case tc.err != "":
			var e *Error
			if !errors.As(err, &e) || e.Detail != tc.err || e.Code != CodeInvalidInput || e.Status != 400 {
				t.Errorf("compilePaged(%q) = %v; want a 400 %q", tc.src, err, tc.err)
			}
		case err != nil:
			t.Errorf("compilePaged(%q): %v", tc.src, err)
		default:
			want := "SELECT * FROM (\n" + tc.body + tail
			assert.Equal(t, want, c.paged.Text().Source(), "compilePaged(%q) pages as", tc.src)
		}
	}
}

// FuzzCompilePaged: for any text that compiles as a template, paging either
// refuses it as two statements with a 400 or yields a template with the
// same placeholders plus the two page bounds; never a panic.
func FuzzCompilePaged(f *testing.F) {
	for _, s := range []string{
		"SELECT * FROM t WHERE a = {variables.a} -- c",
		"SELECT 1; -- x\n;",
		"SELECT '{variables.a};' ; SELECT 2",
		"SELECT {variables.endpoint_limit} FROM t LIMIT 5",
		"SELECT `a;` /* ; */ FROM \"t;\"",
		"SELECT 'a\\';'",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		tmpl, err := placeholder.CompileFor(engine.SQLite.Lexical(), src)
		if err != nil {
			return
		}
		st := tmpl.Statement()
		body, semi := st.Body, st.Second
		require.True(t, strings.HasPrefix(src, body), "body %q is not a prefix of %q", body, src)
		if semi >= 0 && (semi >= len(src) || src[semi] != ';') {
			t.Fatalf("semicolon offset %d does not point at ';' in %q", semi, src)
		}
		c, _, err := compiledOf(tmpl, engine.SQLite)
		var ae *access.Error
		switch {
		case errors.As(err, &ae):
			return // the sandbox refuses what it cannot vouch for
		case err != nil:
			require.GreaterOrEqual(t, semi, 0, "compilePaged(%q): %v", src, err)
			return
		}
		want := append(tmpl.Names(), c.limitName, c.offsetName)
		got := c.paged.Text().Names()
		require.True(t, slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))), "paged names %v, want %v", got, want)
	})
}

func TestPlainSelect(t *testing.T) {
	for _, tc := range []struct {
		body string
		want bool
	}{
		{"SELECT 1", true},
		{"select * from t", true},
		{"  \n\tSeLeCt a FROM t WHERE b = {variables.b}", true},
		{"-- top\nSELECT 1", true},
		{"/* a */ /* b */SELECT 1", true},
		{"SELECT a AS into_x, intox FROM t", true},
		{"SELECT 'x' AS selected", true},
		{"SELECTa FROM t", false},
		{"SELECT", true},
		{"SELECT 1 INTO t2", false},
		{"SELECT * into OUTFILE '/tmp/x' FROM t", false},
		{"SELECT 'into' FROM t", false}, // a word in a string keeps the wrapper
		{"SELECT 1 -- into\n", false},
		{"WITH x AS (SELECT 1) SELECT * FROM x", false},
		{"WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d", false},
		{"DELETE FROM t", false},
		{"INSERT INTO t SELECT 1", false},
		{"(SELECT 1) UNION (SELECT 2)", false},
		{"VALUES (1)", false},
		{"PRAGMA table_info(t)", false},
		{"-- only a comment", false},
		{"/* unterminated", false},
		{"", false},
		{"SÉLECT 1", false},
	} {
		assert.Equal(t, tc.want, plainSelect(engine.SQLite.Lexical(), tc.body), "plainSelect(%q)", tc.body)
	}
}

// TestPlainSelectPerEngine: comments are skipped as the engine reads
// them, and a comment the engine executes keeps the wrapper.
func TestPlainSelectPerEngine(t *testing.T) {
	for _, tc := range []struct {
		e    engine.Engine
		body string
		want bool
	}{
		{engine.PostgreSQL, "/* a /* b */ c */ SELECT 1", true},
		{engine.ClickHouse, "/* a /* b */ c */ SELECT 1", true},
		{engine.SQLite, "/* a /* b */ c */ SELECT 1", false},
		{engine.MySQL, "# note\nSELECT 1", true},
		{engine.SQLite, "# note\nSELECT 1", false},
		{engine.MySQL, "/*!50000 SELECT 1 */", false},
		{engine.MySQL, "SELECT 1 /*!50000 , 2 */", false},
		{engine.MySQL, "SELECT 'a\\' INTO' AS x", false},
		{engine.SQLite, `SELECT 'C:\' AS p FROM t`, true},
		{engine.PostgreSQL, "SELECT $$ into $$", false},
	} {
		assert.Equal(t, tc.want, plainSelect(tc.e.Lexical(), tc.body), "%s: plainSelect(%q)", tc.e.Name(), tc.body)
	}
}

// FuzzPlainSelect: the test never panics, ignores the case of ASCII
// letters and leading comments, and any word INTO keeps the wrapper.
func FuzzPlainSelect(f *testing.F) {
	for _, s := range []string{"SELECT 1", "select a into b", "-- c\nSELECT x", "/**/select", "WITH x AS (SELECT 1) SELECT 1", "SELECT 'é'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		plainSelect := func(s string) bool { return plainSelect(engine.SQLite.Lexical(), s) }
		got := plainSelect(s)
		upper := []byte(s)
		for i, c := range upper {
			if c >= 'a' && c <= 'z' {
				upper[i] = c - 'a' + 'A'
			}
		}
		require.Equal(t, got, plainSelect(string(upper)), "plainSelect(%q) = %v but %v in upper case", s, got, !got)
		if !strings.Contains(s, "*/") && plainSelect("/* "+s+" */ "+s) != got {
			t.Fatalf("a leading comment changed plainSelect(%q)", s)
		}
		require.False(t, plainSelect(s+" into"), "plainSelect(%q + \" into\") = true", s)
		if got && !strings.EqualFold(strings.TrimLeft(skipLeadingComments(s), " \t\n\r\f\v")[:6], "select") {
			t.Fatalf("plainSelect(%q) = true for a text that does not begin with SELECT", s)
		}
	})
}

// skipLeadingComments drops the comments plainSelect skips, for the fuzz
// target's own check.
func skipLeadingComments(s string) string {
	for {
		s = strings.TrimLeft(s, " \t\n\r\f\v")
		switch {
		case strings.HasPrefix(s, "--"):
			_, s, _ = strings.Cut(s, "\n")
		case strings.HasPrefix(s, "/*"):
			_, s, _ = strings.Cut(s[2:], "*/")
		default:
			return s
		}
	}
}

// TestCompileDirect: a plain SELECT gets a direct template of its body,
// trailing semicolons and comments left out, with the same placeholders;
// anything else gets none.
func TestCompileDirect(t *testing.T) {
	for _, tc := range []struct {
		src, direct string
	}{
		{"SELECT a FROM t WHERE b = {variables.b}", "SELECT a FROM t WHERE b = {variables.b}"},
		{"SELECT a FROM t WHERE b = {variables.b};  -- done", "SELECT a FROM t WHERE b = {variables.b}"},
		{"WITH x AS (SELECT 1) SELECT * FROM x", ""},
	} {
		c, err := pagedOf(t, engine.SQLite, tc.src)
		require.NoError(t, err, "compilePaged(%q)", tc.src)
		switch {
		case tc.direct == "" && c.direct != nil:
			t.Errorf("%q runs unwrapped as %q", tc.src, c.direct.Text().Source())
		case tc.direct != "" && (c.direct == nil || c.direct.Text().Source() != tc.direct):
			t.Errorf("%q: direct %v, want %q", tc.src, c.direct, tc.direct)
		case c.direct != nil && !slices.Equal(c.direct.Text().Names(), c.tmpl.Names()):
			t.Errorf("%q: direct names %v, want %v", tc.src, c.direct.Text().Names(), c.tmpl.Names())
		}
	}
	if tmpl, _ := placeholder.Compile("SELECT 1"); tmpl != nil {
		c, text, err := compiledOf(tmpl, engine.SQLite)
		if err != nil || c.direct != text {
			t.Errorf("a body equal to the source was compiled twice: %v", err)
		}
	}
}

// BenchmarkPlainSelect2K tests the 2 KB query that sql/sqltoken's
// BenchmarkTokens2K reads, to compare the scanners on the same text.
func BenchmarkPlainSelect2K(b *testing.B) {
	data, err := os.ReadFile("../sql/sqltoken/testdata/bench2k.sql")
	require.NoError(b, err)
	src := string(data)
	lx := engine.SQLite.Lexical()
	require.True(b, plainSelect(lx, src), "the query is not a plain SELECT")
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		plainSelect(lx, src)
	}
}

// TestOneWayToTheExecutor: in this package, only the three gateways call
// the executor, and each takes a scope.Statement, which only package
// sql/scope makes: a new way for a run to happen cannot send the
// executor SQL that was not scoped. It fails when a function outside them
// calls a method of the Executor.
func TestOneWayToTheExecutor(t *testing.T) {
	gateways := map[string]bool{"executeCapped": true, "execAll": true, "execWithin": true, "queryOwn": true,
		"query": true} // stream.go: executeCapped's call of the executor
	methods := map[string]bool{"Query": true, "QueryRows": true, "Exec": true}
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	calls := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		require.NoError(t, err)
		f, err := parser.ParseFile(fset, name, src, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || !methods[sel.Sel.Name] {
					return true
				}
				recv := string(src[fset.Position(sel.X.Pos()).Offset:fset.Position(sel.X.End()).Offset])
				if !strings.Contains(recv, "Executor") {
					return true
				}
				calls++
				if !gateways[fn.Name.Name] {
					t.Errorf("%s: %s calls %s.%s: run statements through executeCapped, execAll or queryOwn, which take a scope.Statement", fset.Position(call.Pos()), fn.Name.Name, recv, sel.Sel.Name)
				}
				return true
			})
		}
	}
	require.NotEqual(t, 0, calls, "no call of the executor found: the test no longer sees them")
}
