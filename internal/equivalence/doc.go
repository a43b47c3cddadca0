// Package equivalence holds the cross-engine equivalence test of
// endpointkit, and nothing else: TestEquivalence runs one generated corpus
// of SQL endpoints and insights through endpoint.Service on SQLite,
// PostgreSQL, MySQL (MariaDB in CI) and ClickHouse (chDB in CI, through
// endpoint/chdb; a server through endpoint/chexec), and requires every
// engine to answer as SQLite does, and every materialized run to answer as the inline run
// on the same engine. The differences that remain, each with the case that
// shows it, are listed in docs/engines.md and in the test's allow-list,
// which the test checks to be still needed.
//
// Run it on the servers with
//
//	scripts/engines up postgres mysql && eval "$(scripts/engines env)"
//	go test -v -run TestEquivalence ./internal/equivalence/
//
// and the full sweep with -tags long; -tags chdb adds chDB (with the
// variables of scripts/engines env). Without ENDPOINTKIT_TEST_POSTGRES,
// ENDPOINTKIT_TEST_MYSQL or ENDPOINTKIT_TEST_CLICKHOUSE (host:port of a
// ClickHouse server's native protocol, or a clickhouse:// DSN) that engine
// is skipped, naming the variable; SQLite always runs.
package equivalence
