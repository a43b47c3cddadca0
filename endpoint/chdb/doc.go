// Package chdb is an driver.Executor on chDB, ClickHouse running in the
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
// each in ClickHouse's text format for parameters (package internal/chparam).
package chdb
