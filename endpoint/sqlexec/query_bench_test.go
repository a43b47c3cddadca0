package sqlexec_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/internal/cputime"
	"github.com/endpointkit/endpointkit/internal/stmt"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
)

// BenchmarkQuerySQLite sets Executor.Query against what a hand-written
// caller does with the same SQL text on the same pool (db.QueryContext
// with a cancellable context, Columns, Scan into []any, []byte turned
// into string), on a SQLite file in WAL opened as the example server opens
// it: 10,000 demo events, runs on a query_only pool (WithReadOnly).
// select1 is SELECT 1, the executor's whole overhead; count is a count of
// one event's rows scoped to a project, as sql/scope writes it, with
// both values bound.
//
// prepared is the hand-written caller again on a statement it prepared
// once (db.PrepareContext), as the executor keeps its statements: the
// floor of the executor's way, where direct parses the text on every run.
//
// The sides run in turn, benchBlock runs at a time, each going first in
// its turn, so that all see the same machine: the figures are
// executor-ns/op, direct-ns/op and prepared-ns/op (wall time of one
// query), the same in process CPU time (...-cpu-ns/op: user and system,
// GC included; on a machine shared with other work steadier than wall
// time, which counts waits for a core), executor/direct and
// executor/prepared (ratios of wall time), cpu-executor/direct and
// cpu-executor/prepared (of CPU time), and executor-allocs/op,
// direct-allocs/op and prepared-allocs/op (testing.AllocsPerRun before
// the timed loop); ns/op and allocs/op are those of the three together.
//
//	go test -run '^$' -bench BenchmarkQuerySQLite -benchmem -count 5 ./endpoint/sqlexec/
//
// Every side's context carries the deadline the Service gives a run by
// default (30 s), made afresh for each run, so that the ratios are the
// executor's own cost; its Bounds are the Service's other defaults (101
// rows, 10 MiB).
func BenchmarkQuerySQLite(b *testing.B) {
	dsn := "file:" + filepath.Join(b.TempDir(), "bench.db") + "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_txlock=immediate"
	db := openBench(b, dsn)
	require.NoError(b, demo.Load(context.Background(), db, 10000, 1))
	ro := openBench(b, dsn+"&_pragma=query_only(1)")
	x := sqlexec.New(db, engine.SQLite, sqlexec.WithReadOnly(ro))
	b.Cleanup(func() { x.Close() })
	// kept runs on a read-only pool whose connections keep their
	// statements (KeepStatements).
	roKept, err := sqlexec.Open("sqlite", dsn+"&_pragma=query_only(1)", engine.SQLite, sqlexec.KeepStatements(0))
	require.NoError(b, err)
	b.Cleanup(func() { roKept.Close() })
	xKept := sqlexec.New(db, engine.SQLite, sqlexec.WithReadOnly(roKept))
	bounds := driver.Bounds{MaxRows: 101, MaxBytes: 10 << 20, Timeout: 30 * time.Second}

	for _, bc := range []struct {
		name  string
		query string
		args  []any
		want  any
	}{
		{"select1", "SELECT 1", nil, int64(1)},
		{"count", `SELECT count(*) AS n FROM (SELECT * FROM "events" WHERE "events".project_id = ?) AS "events" WHERE event = ?`, []any{"1", "purchase"}, nil},
	} {
		b.Run(bc.name, func(b *testing.B) {
			st := stmt.New(bc.query, bc.args)
			executor := func() {
				ctx, cancel := context.WithTimeout(context.Background(), bounds.Timeout)
				defer cancel()
				res, err := x.Query(ctx, st, bounds)
				require.NoError(b, err)
				require.Len(b, res.Rows, 1)
			}
			kept := func() {
				ctx, cancel := context.WithTimeout(context.Background(), bounds.Timeout)
				defer cancel()
				res, err := xKept.Query(ctx, st, bounds)
				require.NoError(b, err, "kept: %v, %v", res, err)
				require.Len(b, res.Rows, 1, "kept: %v, %v", res, err)
			}
			direct := func() {
				ctx, cancel := context.WithTimeout(context.Background(), bounds.Timeout)
				defer cancel()
				rows := directQuery(b, ctx, ro, bc.query, bc.args)
				require.Len(b, rows, 1)
			}
			// Both sides read the same answer.
			ctx := context.Background()
			res, err := x.Query(ctx, st, bounds)
			require.NoError(b, err)
			if got := directQuery(b, ctx, ro, bc.query, bc.args); len(got) != 1 || len(res.Rows) != 1 || got[0][0] != res.Rows[0][0] {
				b.Fatalf("executor read %v, direct %v", res.Rows, got)
			}
			if bc.want != nil && res.Rows[0][0] != bc.want {
				b.Fatalf("got %v, want %v", res.Rows[0][0], bc.want)
			}
			execAllocs := testing.AllocsPerRun(200, executor)
			directAllocs := testing.AllocsPerRun(200, direct)

			// prepared is direct on a statement prepared once, as the
			// executor's are: the floor of what the executor does.
			prep, err := ro.PrepareContext(ctx, bc.query)
			require.NoError(b, err)
			defer prep.Close()
			prepared := func() {
				ctx, cancel := context.WithTimeout(context.Background(), bounds.Timeout)
				defer cancel()
				rows, err := prep.QueryContext(ctx, bc.args...)
				require.NoError(b, err)
				got := scanAll(b, rows)
				require.Len(b, got, 1)
			}
			preparedAllocs := testing.AllocsPerRun(200, prepared)

			keptAllocs := testing.AllocsPerRun(200, kept)

			sides := []func(){executor, direct, prepared, kept}
			names := []string{"executor", "direct", "prepared", "kept"}
			var wall, cpu [4]time.Duration
			b.ReportAllocs()
			b.ResetTimer()
			for done, round := 0, 0; done < b.N; round++ {
				m := min(benchBlock, b.N-done)
				// Each side goes first, second and third in turn.
				for k := range sides {
					j := (round + k) % len(sides)
					c0, _ := cputime.Process()
					t0 := time.Now()
					for range m {
						sides[j]()
					}
					wall[j] += time.Since(t0)
					c1, _ := cputime.Process()
					cpu[j] += c1 - c0
				}
				done += m
			}
			n := float64(b.N)
			for j, name := range names {
				b.ReportMetric(float64(wall[j])/n, name+"-ns/op")
				if cpu[j] > 0 {
					b.ReportMetric(float64(cpu[j])/n, name+"-cpu-ns/op")
				}
			}
			b.ReportMetric(float64(wall[0])/float64(wall[1]), "executor/direct")
			b.ReportMetric(float64(wall[0])/float64(wall[2]), "executor/prepared")
			if cpu[1] > 0 && cpu[2] > 0 {
				b.ReportMetric(float64(cpu[0])/float64(cpu[1]), "cpu-executor/direct")
				b.ReportMetric(float64(cpu[0])/float64(cpu[2]), "cpu-executor/prepared")
			}
			b.ReportMetric(float64(wall[3])/float64(wall[1]), "kept/direct")
			b.ReportMetric(keptAllocs, "kept-allocs/op")
			b.ReportMetric(preparedAllocs, "prepared-allocs/op")
			b.ReportMetric(execAllocs, "executor-allocs/op")
			b.ReportMetric(directAllocs, "direct-allocs/op")
		})
	}
}

// benchBlock is how many runs of one side BenchmarkQuerySQLite times
// together before the next side's.
const benchBlock = 50

// directQuery is the hand-written read of BenchmarkQuerySQLite.
func directQuery(b *testing.B, ctx context.Context, db *sql.DB, query string, args []any) [][]any {
	rows, err := db.QueryContext(ctx, query, args...)
	require.NoError(b, err)
	return scanAll(b, rows)
}

// scanAll reads rows as a hand-written caller does: Columns, Scan into
// []any, []byte turned into string.
func scanAll(b *testing.B, rows *sql.Rows) [][]any {
	defer rows.Close()
	cols, err := rows.Columns()
	require.NoError(b, err)
	out := [][]any{}
	for rows.Next() {
		row := make([]any, len(cols))
		dest := make([]any, len(cols))
		for i := range row {
			dest[i] = &row[i]
		}
		require.NoError(b, rows.Scan(dest...))
		for i, v := range row {
			if raw, ok := v.([]byte); ok {
				row[i] = string(raw)
			}
		}
		out = append(out, row)
	}
	require.NoError(b, rows.Err())
	return out
}

func openBench(b *testing.B, dsn string) *sql.DB {
	b.Helper()
	db, err := sql.Open("sqlite", dsn)
	require.NoError(b, err)
	b.Cleanup(func() { db.Close() })
	require.NoError(b, db.Ping())
	return db
}
