package engine

import (
	"context"
	"database/sql"
	"reflect"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/internal/jsonrule"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestByName(t *testing.T) {
	tests := []struct {
		in   string
		want Engine
	}{
		{"sqlite", SQLite}, {"SQLite3", SQLite},
		{"postgresql", PostgreSQL}, {"Postgres", PostgreSQL}, {"pgx", PostgreSQL},
		{"mysql", MySQL}, {" MySQL ", MySQL},
		{"clickhouse", ClickHouse}, {"ClickHouse", ClickHouse},
	}
	for _, tt := range tests {
		got, err := ByName(tt.in)
		require.NoError(t, err, "%v", tt.in)
		assert.Equal(t, tt.want, got, "%v", tt.in)
	}
	for _, bad := range []string{"", "oracle", "sqlite4", "postgresq"} {
		_, err := ByName(bad)
		assert.ErrorIs(t, err, ErrUnknown, "%v", bad)
		s, sub := err.Error(), `"`+bad+`"`
		assert.Contains(t, s, sub)
	}
	for _, d := range All() {
		got, err := ByName(d.Name())
		require.NoError(t, err)
		assert.Equal(t, d, got, "Name round-trips through ByName")
		assert.Equal(t, d.Name(), d.String())
	}
}

func TestQuoteIdent(t *testing.T) {
	tests := []struct {
		in                  string
		standard, backticks string
	}{
		{"plain", `"plain"`, "`plain`"},
		{"", `""`, "``"},
		{`a"b`, `"a""b"`, "`a\"b`"},
		{"a`b", "\"a`b\"", "`a``b`"},
		{`"; DROP TABLE t; --`, `"""; DROP TABLE t; --"`, "`\"; DROP TABLE t; --`"},
		{"été", `"été"`, "`été`"},
	}
	for _, tt := range tests {
		got, want := SQLite.QuoteIdent(tt.in), tt.standard
		assert.Equal(t, want, got, "SQLite.QuoteIdent(tt.in)")
		assert.Equal(t, tt.standard, PostgreSQL.QuoteIdent(tt.in))
		assert.Equal(t, tt.backticks, MySQL.QuoteIdent(tt.in))
		assert.Equal(t, tt.backticks, ClickHouse.QuoteIdent(tt.in))
	}
}

func TestAppendString(t *testing.T) {
	tests := []struct {
		in                          string
		standard, mysql, clickhouse string
	}{
		{"abc", `'abc'`, `'abc'`, `'abc'`},
		{"", `''`, `''`, `''`},
		{"it's", `'it''s'`, `'it\'s'`, `'it\'s'`},
		{`a\b`, `'a\b'`, `'a\\b'`, `'a\\b'`},
		{`\'`, `'\'''`, `'\\\''`, `'\\\''`},
		{"a\x00b", "'a\x00b'", `'a\0b'`, `'a\0b'`},
		{"l1\nl2\r", "'l1\nl2\r'", `'l1\nl2\r'`, `'l1\nl2\r'`},
		{"z\x1a", "'z\x1a'", `'z\Z'`, "'z\x1a'"},
		{`say "hi"`, `'say "hi"'`, `'say "hi"'`, `'say "hi"'`},
		{"’ʼ", "'’ʼ'", "'’ʼ'", "'’ʼ'"},
	}
	for _, tt := range tests {
		prefix := []byte("x = ")
		got, want := string(SQLite.AppendString(prefix, tt.in)), "x = "+tt.standard
		assert.Equal(t, want, got, "string(SQLite.AppendString(prefix, tt.in))")
		assert.Equal(t, tt.standard, string(PostgreSQL.AppendString(nil, tt.in)))
		assert.Equal(t, tt.mysql, string(MySQL.AppendString(nil, tt.in)))
		assert.Equal(t, tt.clickhouse, string(ClickHouse.AppendString(nil, tt.in)))
	}
}

// TestQuotingOnSQLite checks on a real engine that a quoted literal reads
// back as the same string and a quoted identifier names what it says.
func TestQuotingOnSQLite(t *testing.T) {
	db := testdb.SQLite(t)
	ctx := context.Background()
	for _, s := range []string{"plain", "it's", `''`, `\'; DROP TABLE x; --`, `"quoted"`, "été ’", "a\\"} {
		query := "SELECT " + string(SQLite.AppendString(nil, s))
		var got string
		require.NoError(t, db.QueryRowContext(ctx, query).Scan(&got), "%v", query)
		assert.Equal(t, s, got, "%v", query)

		table := SQLite.QuoteIdent("t " + s)
		_, err := db.ExecContext(ctx, "CREATE TABLE "+table+" ("+SQLite.QuoteIdent(s)+" TEXT)")
		require.NoError(t, err, "%v", s)
		var name string
		require.NoError(t, db.QueryRowContext(ctx,
			"SELECT name FROM pragma_table_info(?)", "t "+s).Scan(&name))
		assert.Equal(t, s, name)
	}
}

// onServers runs load and then check on a fresh database of SQLite and,
// where their variables are set (scripts/engines env), of PostgreSQL and
// MySQL. The database has one connection, in UTC while load writes; check
// then runs in the session an executor that runs Session (sqlexec.Open)
// gives, after the connection was put in another time zone, as a server
// may default to.
func onServers(t *testing.T, load, check func(t *testing.T, e Engine, db *sql.DB)) {
	for _, s := range []struct {
		e         Engine
		env       string
		utc, zone string
		open      func(testing.TB) *sql.DB
	}{
		{SQLite, "", "", "", testdb.SQLite},
		{PostgreSQL, testdb.PostgresEnv, "SET TIME ZONE 'UTC'", "SET TIME ZONE 'America/Los_Angeles'", testdb.Postgres},
		{MySQL, testdb.MySQLEnv, "SET time_zone = '+00:00'", "SET time_zone = '+05:30'", testdb.MySQL},
	} {
		t.Run(s.e.Name(), func(t *testing.T) {
			if s.env != "" {
				testdb.Require(t, s.env)
			}
			db := s.open(t)
			db.SetMaxOpenConns(1)
			db.SetMaxIdleConns(1)
			exec := func(stmts ...string) {
				for _, q := range stmts {
					if q != "" {
						_, err := db.Exec(q)
						require.NoError(t, err, "%v", q)
					}
				}
			}
			exec(s.utc)
			if load != nil {
				load(t, s.e, db)
			}
			exec(s.zone)
			if ss, ok := s.e.(Session); ok {
				exec(ss.Session()...)
			}
			check(t, s.e, db)
		})
	}
}

// rendered is a Writer that writes the engine's markers and arguments.
type rendered struct {
	t    *testing.T
	e    Engine
	sql  []byte
	args []any
}

func (r *rendered) WriteString(s string) { r.sql = append(r.sql, s...) }

func (r *rendered) Bind(v any) {
	arg, typ, err := r.e.Arg(v)
	require.NoError(r.t, err)
	if name := r.e.ArgName(len(r.args) + 1); name != "" {
		arg = sql.Named(name, arg)
	}
	r.args = append(r.args, arg)
	r.sql = r.e.Marker(r.sql, len(r.args), typ)
}

// text reads a text value as drivers return it: string or bytes.
func text(t *testing.T, v any) string {
	t.Helper()
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	}
	t.Fatalf("a text value of Go type %T", v)
	return ""
}

// number reads a number or NULL.
func number(t *testing.T, v any) any {
	t.Helper()
	switch x := v.(type) {
	case nil:
		return nil
	case int64:
		return float64(x)
	case float64:
		return x
	}
	t.Fatalf("a number of Go type %T", v)
	return nil
}

// TestJSONRule checks the library's one JSON rule on every engine, on a
// column of the engine's Text type (MySQL: binary, read as UTF-8): the
// text of a property is empty when it is missing, JSON null or "", the value
// of a string (letter case, trailing spaces and unicode kept, escapes
// decoded; the string "null" is 'null'), and the JSON text of a number
// (canonical spellings) or of true and false; its number is the value of
// a JSON number and NULL for anything else, a number stored as text
// included. The text compares byte for byte.
func TestJSONRule(t *testing.T) {
	rows := jsonrule.Cases
	onServers(t, nil, func(t *testing.T, e Engine, db *sql.DB) {
		_, err := db.Exec(e.CreateTable("j", []Column{{"id", Int}, {"p", Text}}))
		require.NoError(t, err)
		for i, r := range rows {
			w := &rendered{t: t, e: e}
			jsonrule.WriteInsert(w, e.QuoteIdent("j"), i, r)
			_, err := db.Exec(string(w.sql), w.args...)
			require.NoError(t, err)
		}
		w := &rendered{t: t, e: e}
		w.WriteString("SELECT ")
		e.JSONText(w, e.QuoteIdent("p"), "k")
		w.WriteString(", ")
		e.JSONNumber(w, e.QuoteIdent("p"), "k")
		w.WriteString(" FROM " + e.QuoteIdent("j") + " ORDER BY " + e.QuoteIdent("id"))
		res, err := db.Query(string(w.sql), w.args...)
		require.NoError(t, err, "%v", string(w.sql))
		defer res.Close()
		i := 0
		for ; res.Next(); i++ {
			var txt, num any
			require.NoError(t, res.Scan(&txt, &num))
			got, want := text(t, txt), rows[i].Text
			assert.Equal(t, want, got, "text of %v: text(t, txt)", rows[i].JSON)
			if got, want := number(t, num), rows[i].Num; !reflect.DeepEqual(got, want) {
				t.Errorf("number of %v: number(t, num) = %+v, want %+v", rows[i].JSON, got, want)
			}
		}
		require.NoError(t, res.Err())
		assert.Len(t, rows, i)

		// Equality and grouping are byte for byte.
		w = &rendered{t: t, e: e}
		w.WriteString("SELECT count(*) FROM " + e.QuoteIdent("j") + " WHERE ")
		e.JSONText(w, e.QuoteIdent("p"), "k")
		w.WriteString(" = ")
		w.Bind("pro")
		var n int
		require.NoError(t, db.QueryRow(string(w.sql), w.args...).Scan(&n), "%v", string(w.sql))
		got, want := n, 1
		assert.Equal(t, want, got, "'pro' matches 'pro' only, not 'pro ' or 'Pro': n")
		w = &rendered{t: t, e: e}
		w.WriteString("SELECT count(*) FROM (SELECT DISTINCT ")
		e.JSONText(w, e.QuoteIdent("p"), "k")
		w.WriteString(" AS " + e.QuoteIdent("v") + " FROM " + e.QuoteIdent("j") + ") AS " + e.QuoteIdent("d"))
		require.NoError(t, db.QueryRow(string(w.sql), w.args...).Scan(&n), "%v", string(w.sql))
		if got, want := n, 11; got != want {
			t.Errorf("distinct texts: n = %v, want %v", got, want)
		}
	})
}

// TestTextColumnsCompareBytes: a text column the library creates (stored
// tables) compares and groups byte for byte on every engine: neither
// letter case, nor accents, nor trailing spaces are ignored.
func TestTextColumnsCompareBytes(t *testing.T) {
	onServers(t, nil, func(t *testing.T, e Engine, db *sql.DB) {
		_, err := db.Exec(e.CreateTable("t", []Column{{"v", Text}}))
		require.NoError(t, err)
		for _, v := range []string{"a", "A", "a ", "a  ", "á", "ß", "ss"} {
			w := &rendered{t: t, e: e}
			w.WriteString("INSERT INTO " + e.QuoteIdent("t") + " VALUES (")
			w.Bind(v)
			w.WriteString(")")
			_, err := db.Exec(string(w.sql), w.args...)
			require.NoError(t, err)
		}
		for _, v := range []string{"a", "a ", "ss"} {
			w := &rendered{t: t, e: e}
			w.WriteString("SELECT count(*) FROM " + e.QuoteIdent("t") + " WHERE " + e.QuoteIdent("v") + " = ")
			w.Bind(v)
			var n int
			require.NoError(t, db.QueryRow(string(w.sql), w.args...).Scan(&n))
			got, want := n, 1
			assert.Equal(t, want, got, "rows equal to %q: n", v)
		}
		var groups int
		require.NoError(t, db.QueryRow("SELECT count(*) FROM (SELECT "+e.QuoteIdent("v")+" FROM "+e.QuoteIdent("t")+
			" GROUP BY "+e.QuoteIdent("v")+") AS "+e.QuoteIdent("g")).Scan(&groups))
		assert.Equal(t, 7, groups)
	})
}

// timesDDL is a table of one instant per row, stored as UTC text, as the
// engine's timestamp and as its timestamp with a time zone.
func timesDDL(e Engine) string {
	types := map[string][3]string{
		"sqlite":     {"TEXT", "TEXT", "TEXT"},
		"postgresql": {"text", "timestamp", "timestamptz"},
		"mysql":      {"VARCHAR(19)", "DATETIME", "TIMESTAMP NULL"},
	}[e.Name()]
	return "CREATE TABLE times (id " + e.Type(Int) + ", as_text " + types[0] + ", as_ts " + types[1] + ", as_tz " + types[2] + ")"
}

var instants = []string{"2025-04-27 23:59:59", "2025-04-30 23:59:59", "2025-05-01 00:00:00", "2025-05-01 00:00:01", "2025-05-01 12:34:56", "2025-05-02 00:00:00"}

func loadTimes(t *testing.T, e Engine, db *sql.DB) {
	t.Helper()
	_, err := db.Exec(timesDDL(e))
	require.NoError(t, err)
	for i, at := range instants {
		w := &rendered{t: t, e: e}
		w.WriteString("INSERT INTO times VALUES (")
		w.Bind(int64(i))
		for range 3 {
			w.WriteString(", ")
			w.Bind(at)
		}
		w.WriteString(")")
		_, err := db.Exec(string(w.sql), w.args...)
		require.NoError(t, err)
	}
}

// TestTimeArgs: a Date value, bound as the engine binds it, selects the
// same instants from timestamps stored as UTC text, as timestamp and as
// timestamptz (MySQL: DATETIME, TIMESTAMP) in a session put in UTC by
// Session, on every engine.
func TestTimeArgs(t *testing.T) {
	day := func(s string) variable.Timestamp {
		d, err := time.Parse(time.DateOnly, s)
		require.NoError(t, err)
		return variable.Timestamp{Time: d, DateOnly: true}
	}
	at := func(s string) variable.Timestamp {
		d, err := time.Parse(time.DateTime, s)
		require.NoError(t, err)
		return variable.Timestamp{Time: d}
	}
	ranges := []struct {
		from, to variable.Timestamp
		want     int
	}{
		{day("2025-05-01"), day("2025-05-02"), 3},
		{at("2025-05-01 00:00:00"), at("2025-05-02 00:00:00"), 3},
		{at("2025-05-01 00:00:01"), at("2025-05-01 12:34:56"), 1},
		{day("2025-04-28"), day("2025-05-01"), 1},
		{variable.Timestamp{Time: time.Date(2025, 5, 1, 2, 0, 0, 0, time.FixedZone("", 2*3600))}, day("2025-05-03"), 4},
	}
	onServers(t, loadTimes, func(t *testing.T, e Engine, db *sql.DB) {
		for _, col := range []string{"as_text", "as_ts", "as_tz"} {
			for _, r := range ranges {
				w := &rendered{t: t, e: e}
				w.WriteString("SELECT count(*) FROM times WHERE " + col + " >= ")
				w.Bind(r.from)
				w.WriteString(" AND " + col + " < ")
				w.Bind(r.to)
				var n int
				require.NoError(t, db.QueryRow(string(w.sql), w.args...).Scan(&n), "%v", string(w.sql))
				got, want := n, r.want
				assert.Equal(t, want, got, "%s in [%v, %v): n", col, r.from.Time, r.to.Time)
			}
		}
	})
}

// TestTruncate: every bucket of a timestamp stored as UTC text, as
// timestamp and as timestamptz, read strictly as a materialized table
// reads it, is the UTC start of its bucket on every engine (weeks from
// Monday).
func TestTruncate(t *testing.T) {
	want := map[Bucket][]string{
		Minute: {"2025-04-27 23:59:00", "2025-04-30 23:59:00", "2025-05-01 00:00:00", "2025-05-01 00:00:00", "2025-05-01 12:34:00", "2025-05-02 00:00:00"},
		Hour:   {"2025-04-27 23:00:00", "2025-04-30 23:00:00", "2025-05-01 00:00:00", "2025-05-01 00:00:00", "2025-05-01 12:00:00", "2025-05-02 00:00:00"},
		Day:    {"2025-04-27 00:00:00", "2025-04-30 00:00:00", "2025-05-01 00:00:00", "2025-05-01 00:00:00", "2025-05-01 00:00:00", "2025-05-02 00:00:00"},
		Week:   {"2025-04-21 00:00:00", "2025-04-28 00:00:00", "2025-04-28 00:00:00", "2025-04-28 00:00:00", "2025-04-28 00:00:00", "2025-04-28 00:00:00"},
		Month:  {"2025-04-01 00:00:00", "2025-04-01 00:00:00", "2025-05-01 00:00:00", "2025-05-01 00:00:00", "2025-05-01 00:00:00", "2025-05-01 00:00:00"},
	}
	onServers(t, loadTimes, func(t *testing.T, e Engine, db *sql.DB) {
		for _, col := range []string{"as_text", "as_ts", "as_tz"} {
			for _, u := range []Bucket{Minute, Hour, Day, Week, Month} {
				q := "SELECT " + e.TimeText(e.Truncate(u, e.StrictTimestamp(col))) + ", " +
					e.TimeText(e.Truncate(u, e.Timestamp(col))) + " FROM times ORDER BY id"
				rows, err := db.Query(q)
				require.NoError(t, err, "%v", q)
				var got, loose []string
				for rows.Next() {
					var a, b any
					require.NoError(t, rows.Scan(&a, &b))
					got, loose = append(got, text(t, a)), append(loose, text(t, b))
				}
				require.NoError(t, rows.Err())
				rows.Close()
				assert.Equal(t, want[u], got, "%s by %s, strictly", col, u)
				if got, want := loose, want[u]; !reflect.DeepEqual(got, want) {
					t.Errorf("%s by %s: loose = %+v, want %+v", col, u, got, want)
				}
			}
		}
	})
}

// TestPageKeepsOrder: Page returns the rows of a query from offset on in
// the query's own order, on every engine (MariaDB drops the ORDER BY of a
// derived table it merges).
func TestPageKeepsOrder(t *testing.T) {
	onServers(t, nil, func(t *testing.T, e Engine, db *sql.DB) {
		_, err := db.Exec(e.CreateTable("p", []Column{{"id", Int}, {"v", Text}}))
		require.NoError(t, err)
		for i, v := range []string{"c", "a", "e", "b", "d", "g", "f"} {
			w := &rendered{t: t, e: e}
			w.WriteString("INSERT INTO p VALUES (")
			w.Bind(int64(i))
			w.WriteString(", ")
			w.Bind(v)
			w.WriteString(")")
			_, err := db.Exec(string(w.sql), w.args...)
			require.NoError(t, err)
		}
		w := &rendered{t: t, e: e}
		w.WriteString("SELECT v FROM p WHERE id >= ")
		w.Bind(int64(0))
		w.WriteString(" ORDER BY v")
		query := string(w.sql)
		limit := &rendered{t: t, e: e, args: w.args}
		limit.Bind(int64(3))
		offset := &rendered{t: t, e: e, args: limit.args}
		offset.Bind(int64(2))
		// As an executor runs it: under the run's guard prefix.
		q := e.Guard(0, true).Prefix + e.Page(query, string(limit.sql), string(offset.sql))
		rows, err := db.Query(q, offset.args...)
		require.NoError(t, err, "%v", q)
		defer rows.Close()
		var got []string
		for rows.Next() {
			var v any
			require.NoError(t, rows.Scan(&v))
			got = append(got, text(t, v))
		}
		require.NoError(t, rows.Err())
		assert.Equal(t, []string{"c", "d", "e"}, got, "%v", q)
	})
}
