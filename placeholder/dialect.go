package placeholder

import (
	"fmt"
	"strings"
)

// Dialect decides how bind markers, arguments, identifiers and string
// literals are written for one SQL engine. The zero Dialect is not valid;
// use one of the package's values.
type Dialect struct {
	name string
	kind dialectKind
}

type dialectKind uint8

const (
	kindInvalid dialectKind = iota
	kindSQLite
	kindPostgreSQL
	kindMySQL
	kindClickHouse
)

// The supported dialects.
//
// SQLite and MySQL bind with '?', one argument per marker.
//
// PostgreSQL binds with $1, $2, ...: a variable used twice reuses its
// number, and each element of a list gets a number of its own.
//
// ClickHouse binds with the server's typed query parameters,
// {p1:String}, {p2:Int64}, ..., and the arguments are sql.NamedArg values
// named p1, p2, ... holding the value as text. clickhouse-go (v2, with a
// server recent enough for protocol parameters) sends such arguments to the
// server as query parameters when the query holds {name:Type} markers, and
// the server parses each value as its declared type. Its '?' binding
// instead formats the values into the SQL text on the client, which would
// break this package's promise that no value ever becomes part of the SQL
// text. Text values also suit the older clickhouse-go releases that accept
// only strings as parameters. A variable used twice reuses its parameter;
// list elements get one each. Date-times are typed DateTime('UTC') so that
// the server does not read them in its own time zone.
var (
	SQLite     = Dialect{name: "sqlite", kind: kindSQLite}
	PostgreSQL = Dialect{name: "postgresql", kind: kindPostgreSQL}
	MySQL      = Dialect{name: "mysql", kind: kindMySQL}
	ClickHouse = Dialect{name: "clickhouse", kind: kindClickHouse}
)

// DialectByName returns the dialect of a configuration name, matched
// without regard to case: "sqlite" (or "sqlite3"), "postgresql" (or
// "postgres", "pgx"), "mysql", "clickhouse". Other names wrap
// ErrUnknownDialect.
func DialectByName(name string) (Dialect, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "sqlite", "sqlite3":
		return SQLite, nil
	case "postgresql", "postgres", "pgx":
		return PostgreSQL, nil
	case "mysql":
		return MySQL, nil
	case "clickhouse":
		return ClickHouse, nil
	}
	return Dialect{}, fmt.Errorf("%w %q (want sqlite, postgresql, mysql or clickhouse)", ErrUnknownDialect, name)
}

// Name returns the dialect's canonical name, as DialectByName accepts it;
// "" for the zero Dialect.
func (d Dialect) Name() string { return d.name }

// String returns the dialect's name, for fmt.
func (d Dialect) String() string { return d.name }

// QuoteIdent returns s as a quoted identifier: "..." with doubled double
// quotes on SQLite and PostgreSQL (and the zero Dialect, standard SQL),
// `...` with doubled backticks on MySQL and ClickHouse.
func (d Dialect) QuoteIdent(s string) string {
	q := byte('"')
	if d.kind == kindMySQL || d.kind == kindClickHouse {
		q = '`'
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte(q)
	for i := 0; i < len(s); i++ {
		if s[i] == q {
			b.WriteByte(q)
		}
		b.WriteByte(s[i])
	}
	b.WriteByte(q)
	return b.String()
}

// AppendString appends s as a string literal to dst. It serves printers
// of SQL text that must repeat the user's own query text (a column value
// taken from the saved query, a comment), never run-time values, which are
// bound. SQLite and PostgreSQL (and the zero Dialect) double single
// quotes, relying on standard_conforming_strings on PostgreSQL; MySQL and
// ClickHouse escape with backslashes, including NUL and line breaks,
// assuming MySQL's default sql_mode (without NO_BACKSLASH_ESCAPES).
func (d Dialect) AppendString(dst []byte, s string) []byte {
	dst = append(dst, '\'')
	backslash := d.kind == kindMySQL || d.kind == kindClickHouse
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !backslash {
			if c == '\'' {
				dst = append(dst, '\'')
			}
			dst = append(dst, c)
			continue
		}
		switch c {
		case '\'', '\\':
			dst = append(dst, '\\', c)
		case 0:
			dst = append(dst, '\\', '0')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case 0x1a:
			if d.kind == kindMySQL {
				dst = append(dst, '\\', 'Z')
			} else {
				dst = append(dst, c)
			}
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '\'')
}

func (d Dialect) valid() bool { return d.kind != kindInvalid }

// numbered reports whether markers carry a number (or name) so that a
// variable used twice can reuse its argument.
func (d Dialect) numbered() bool { return d.kind == kindPostgreSQL || d.kind == kindClickHouse }
