package engine

import (
	"context"
	"database/sql"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"
)

// openSQLite returns a fresh in-memory database; one connection, since
// each connection of ":memory:" is a database of its own.
func openSQLite(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", ":memory:")
	require.NoError(t, err)
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

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
		require.NoError(t, err, tt.in)
		assert.Equal(t, tt.want, got, tt.in)
	}
	for _, bad := range []string{"", "oracle", "sqlite4", "postgresq"} {
		_, err := ByName(bad)
		assert.ErrorIs(t, err, ErrUnknown, bad)
		assert.Contains(t, err.Error(), `"`+bad+`"`)
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
		assert.Equal(t, tt.standard, SQLite.QuoteIdent(tt.in))
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
		assert.Equal(t, "x = "+tt.standard, string(SQLite.AppendString(prefix, tt.in)))
		assert.Equal(t, tt.standard, string(PostgreSQL.AppendString(nil, tt.in)))
		assert.Equal(t, tt.mysql, string(MySQL.AppendString(nil, tt.in)))
		assert.Equal(t, tt.clickhouse, string(ClickHouse.AppendString(nil, tt.in)))
	}
}

// TestQuotingOnSQLite checks on a real engine that a quoted literal reads
// back as the same string and a quoted identifier names what it says.
func TestQuotingOnSQLite(t *testing.T) {
	db := openSQLite(t)
	ctx := context.Background()
	for _, s := range []string{"plain", "it's", `''`, `\'; DROP TABLE x; --`, `"quoted"`, "été ’", "a\\"} {
		query := "SELECT " + string(SQLite.AppendString(nil, s))
		var got string
		require.NoError(t, db.QueryRowContext(ctx, query).Scan(&got), query)
		assert.Equal(t, s, got, query)

		table := SQLite.QuoteIdent("t " + s)
		_, err := db.ExecContext(ctx, "CREATE TABLE "+table+" ("+SQLite.QuoteIdent(s)+" TEXT)")
		require.NoError(t, err, s)
		var name string
		require.NoError(t, db.QueryRowContext(ctx,
			"SELECT name FROM pragma_table_info(?)", "t "+s).Scan(&name))
		assert.Equal(t, s, name)
	}
}
