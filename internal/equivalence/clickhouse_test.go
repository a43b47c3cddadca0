package equivalence

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint/chexec"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
)

// clickhouseDialect is ClickHouse: every fixture column Nullable (the
// fixture has NULLs where engines part), text timestamps as String, typed
// ones as DateTime64(6, 'UTC') (PostHog's events) and as DateTime without
// a zone of its own, which reads and parses text in the session's zone
// (ClickHouse's timestamptz: the session starts in clickhouseZone).
var clickhouseDialect = &dialect{
	name: "clickhouse", e: engine.ClickHouse,
	text: "Nullable(String)", textCI: "Nullable(String)", integer: "Nullable(Int64)", real: "Nullable(Float64)",
	boolean: "Nullable(Bool)", json: "Nullable(String)",
	ts: map[storage]string{
		asText:      "Nullable(String)",
		asTimestamp: "Nullable(DateTime64(6, 'UTC'))",
		asZoned:     "Nullable(DateTime)",
	},
	date:         "Nullable(Date)",
	key:          "Int64",
	tableOptions: " ENGINE = MergeTree ORDER BY tuple()",
}

// clickhouseZone is the session time zone a host's ClickHouse starts the
// tests' sessions in (the server's timezone, or a profile's
// session_timezone); the library's queries must answer in UTC all the same.
const clickhouseZone = "America/Los_Angeles"

// clickhouseEnv names a ClickHouse server for the corpus: host:port of
// its native protocol, or a clickhouse:// DSN. chDB (-tags chdb) runs the
// corpus without one.
const clickhouseEnv = "ENDPOINTKIT_TEST_CLICKHOUSE"

func init() {
	targets = append(targets, target{d: clickhouseDialect, env: clickhouseEnv, direct: serverDatabase})
}

// serverDatabase is an executor (endpoint/chexec) on a fresh database of
// the server that clickhouseEnv names, whose sessions start in
// clickhouseZone; the database is dropped when t ends.
func serverDatabase(t *testing.T, s storage) loadingExecutor {
	t.Helper()
	opts := &clickhouse.Options{Addr: []string{testdb.Require(t, clickhouseEnv)}}
	if v := opts.Addr[0]; strings.Contains(v, "://") {
		var err error
		opts, err = clickhouse.ParseDSN(v)
		require.NoError(t, err, "%s", clickhouseEnv)
	}
	admin, err := clickhouse.Open(opts)
	require.NoError(t, err)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "ektest_" + hex.EncodeToString(b) + "_" + string(s)
	ctx := context.Background()
	require.NoError(t, admin.Exec(ctx, "CREATE DATABASE "+name), "%s", clickhouseEnv)
	t.Cleanup(func() {
		_ = admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name)
		admin.Close()
	})
	db := *opts
	db.Auth.Database = name
	x, err := chexec.Open(&db, map[string]any{"session_timezone": clickhouseZone})
	require.NoError(t, err)
	t.Cleanup(func() { x.Close() })
	return x
}
