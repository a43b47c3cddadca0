// Package chdb is an endpoint.Executor on chDB, ClickHouse running in the
// process (libchdb.so), so that endpoints run on ClickHouse without a
// server: the example server's -driver chdb, and the ClickHouse tests of
// the library in CI.
//
// The executor is built only with the build tag chdb and cgo, against
// libchdb.so: `scripts/engines up chdb` installs it (the npm package
// @chdb/lib-linux-x64-gnu) and `eval "$(scripts/engines env)"` sets
// CGO_LDFLAGS and LD_LIBRARY_PATH for `go test -tags chdb ./...`. Without
// the tag the package holds only this documentation and the parameter
// encoding, which is pure Go.
//
// Values never enter the SQL text: the engine writes ClickHouse's typed
// query parameters ({p1:String}, {p2:Int64}, ...) and the executor passes
// the arguments to chdb_query_with_params_n as the parameters p1, p2, ...,
// each in ClickHouse's text format for parameters (see EscapeParam).
package chdb

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

// EscapeParam returns v in ClickHouse's text format for a query parameter,
// so that the server reads back exactly v: without it a value holding a
// backslash, a tab, a newline, a carriage return, NUL or a quote fails to
// parse (Code 25, 457) or reads as another value.
func EscapeParam(v string) string { return escaper.Replace(v) }
