package sqlexec_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/internal/stmt"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
	"modernc.org/sqlite"
)

// BenchmarkReadOnlyRun is a cheap run on a read-only pool, as the example
// server's, with and without WithSQLiteLimits (which holds a connection
// per run and prepares the text on it instead of using the statement
// cache).
func BenchmarkReadOnlyRun(b *testing.B) {
	for _, limits := range []bool{false, true} {
		name := "plain"
		if limits {
			name = "limits"
		}
		b.Run(name, func(b *testing.B) {
			dsn := "file:" + b.TempDir() + "/b.db?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)"
			db, err := sql.Open("sqlite", dsn)
			require.NoError(b, err)
			defer db.Close()
			if _, err := db.Exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t SELECT value, 'x' FROM (WITH RECURSIVE r(value) AS (SELECT 1 UNION ALL SELECT value + 1 FROM r WHERE value < 1000) SELECT value FROM r)"); err != nil {
				b.Fatal(err)
			}
			ro, err := sql.Open("sqlite", dsn+"&_pragma=query_only(1)")
			require.NoError(b, err)
			defer ro.Close()
			opts := []sqlexec.Option{sqlexec.WithReadOnly(ro)}
			if limits {
				opts = append(opts, sqlexec.WithSQLiteLimits(sqlite.Limit, sqlexec.SQLiteLimits{}))
			}
			x := sqlexec.New(db, engine.SQLite, opts...)
			defer x.Close()
			st := stmt.New("SELECT v FROM t WHERE id = ?", []any{int64(500)})
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				_, err := x.Query(ctx, st, driver.Bounds{})
				require.NoError(b, err)
			}
		})
	}
}
