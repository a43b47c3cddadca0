// Package chparam writes values in ClickHouse's text format for query
// parameters, which both ClickHouse executors (in-process chDB and
// clickhouse-go) send.
package chparam

import "strings"

// escaper escapes what ClickHouse's parameter text format reads as escape
// sequences or delimiters: a value is parsed as if it were the contents of
// a quoted string, so a backslash, a quote and the control characters the
// format reads specially are written as escapes.
var escaper = strings.NewReplacer(
	`\`, `\\`,
	`'`, `\'`,
	"\t", `\t`,
	"\n", `\n`,
	"\r", `\r`,
	"\x00", `\0`,
	"\b", `\b`,
	"\f", `\f`,
)

// Escape returns v in ClickHouse's text format for a query parameter, so
// that the server reads back exactly v: without it a value holding a
// backslash, a tab, a newline, a carriage return, NUL or a quote fails to
// parse (Code 25, 457) or reads as another value.
func Escape(v string) string { return escaper.Replace(v) }
