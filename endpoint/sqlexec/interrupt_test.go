package sqlexec_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/endpointtest"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec/sqliteinterrupt"
	"github.com/endpointkit/endpointkit/internal/stmt"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"modernc.org/sqlite"
)

// afterFirstRow answers its first row at once and then looks for a second
// for ever: its work comes after the query started, where
// modernc.org/sqlite no longer interrupts it.
const afterFirstRow = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r WHERE n = 1 OR n < 0"

// interruptiblePools returns an Executor for each way a SQLite run holds
// its connection, each with WithInterrupt: the guarded run (a
// transaction), a read-only pool, each with and without SQLite limits, a
// pool without a statement cache, and a read-only or writable pool that
// keeps statements.
func interruptiblePools(t *testing.T) map[string]*sqlexec.Executor {
	t.Helper()
	out := map[string]*sqlexec.Executor{}
	open := func(dsn string, opts ...sqlexec.OpenOption) *sql.DB {
		db, err := sqlexec.Open("sqlite", dsn, engine.SQLite, opts...)
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		return db
	}
	interrupt := sqlexec.WithInterrupt(sqliteinterrupt.For)
	limits := sqlexec.WithSQLiteLimits(sqlite.Limit, sqlexec.SQLiteLimits{})
	for _, c := range []struct {
		name     string
		readOnly bool
		keep     bool
		opts     []sqlexec.Option
	}{
		{"guarded", false, false, nil},
		{"guarded with limits", false, false, []sqlexec.Option{limits}},
		{"read-only pool", true, false, nil},
		{"read-only pool with limits", true, false, []sqlexec.Option{limits}},
		{"read-only pool without statements", true, false, []sqlexec.Option{sqlexec.WithStatements(-1)}},
		{"read-only pool keeping statements", true, true, nil},
		// A guarded run holds a connection that keeps statements: the
		// driver's connection it wraps is interrupted.
		{"guarded keeping statements", false, true, nil},
	} {
		dsn := fileDSN(t)
		var keep []sqlexec.OpenOption
		if c.keep {
			keep = append(keep, sqlexec.KeepStatements(0))
		}
		opts := append([]sqlexec.Option{interrupt}, c.opts...)
		var db *sql.DB
		if c.readOnly {
			db = open(dsn)
			opts = append(opts, sqlexec.WithReadOnly(open(dsn+"&_pragma=query_only(1)", keep...)))
		} else {
			db = open(dsn, keep...)
		}
		x := sqlexec.New(db, engine.SQLite, opts...)
		t.Cleanup(func() { x.Close() })
		out[c.name] = x
	}
	return out
}

// TestInterruptStopsAFollowingRow: with WithInterrupt, a run whose work
// comes after its first row stops at its time limit, with a deadline
// error, whichever way it holds its connection; the connection then runs
// the next query (the interrupt reached no later run). Without it the run
// never ends.
func TestInterruptStopsAFollowingRow(t *testing.T) {
	for name, x := range interruptiblePools(t) {
		t.Run(name, func(t *testing.T) {
			for i := range 2 { // the second on a connection the first was interrupted on
				requireEndsWithin(t, x, afterFirstRow, 100*time.Millisecond)
				res, err := x.Query(context.Background(), stmt.New("SELECT 1 AS one", nil), driver.Bounds{Timeout: time.Second})
				require.NoError(t, err, "run %d: the next query: %v, %v", i, res, err)
				require.Len(t, res.Rows, 1, "run %d: the next query: %v, %v", i, res, err)
			}
		})
	}
}

// requireEndsWithin runs q on x with a time limit of limit and requires a
// deadline error within 3 s of it; a run still going 10 s later fails
// the test (and is left running: nothing else can stop it).
func requireEndsWithin(t *testing.T, x *sqlexec.Executor, q string, limit time.Duration) {
	t.Helper()
	type answer struct {
		err  error
		took time.Duration
	}
	done := make(chan answer, 1)
	go func() {
		start := time.Now()
		_, err := x.Query(context.Background(), stmt.New(q, nil), driver.Bounds{Timeout: limit})
		done <- answer{err, time.Since(start)}
	}()
	select {
	case a := <-done:
		require.ErrorIs(t, a.err, context.DeadlineExceeded)
		// The slack is for a loaded machine (a CI runner's other test
		// binaries): a run without the interrupt never ends, so even a
		// generous bound tells the two apart.
		require.LessOrEqual(t, a.took, limit+3*time.Second, "stopped after, limit %v", limit)
	case <-time.After(limit + 10*time.Second):
		t.Fatalf("still running %v after its limit of %v", 10*time.Second, limit)
	}
}

// repeatedInterrupt is sqliteinterrupt.For whose interrupt goes on
// interrupting the connection for d: an interrupt that arrives late, as the
// watch's can (up to interruptEvery after the run's context ended), made
// to reach whatever the connection runs in that time.
func repeatedInterrupt(d time.Duration) sqlexec.InterruptFunc {
	return func(dc any) (func(), error) {
		f, err := sqliteinterrupt.For(dc)
		if err != nil {
			return nil, err
		}
		return func() {
			for end := time.Now().Add(d); time.Now().Before(end); {
				f()
			}
		}, nil
	}
}

// TestInterruptLeavesNoTransactionOpen: a guarded run interrupted when its
// context ends leaves its connection outside any transaction, whatever the
// interrupt reaches: the writer of a pool of one connection commits after
// each such run, and the next run begins its own transaction. database/sql
// rolled the transaction back by itself once the context ended, while the
// run was still watched; an interrupt reaching that ROLLBACK failed it, the
// connection went back to the pool inside the transaction, each later run
// failed with "cannot start a transaction within a transaction" and the
// writer's INSERTs were never committed.
func TestInterruptLeavesNoTransactionOpen(t *testing.T) {
	dsn := fileDSN(t)
	db := fileDB(t, dsn, 1, "CREATE TABLE w (n INTEGER)")
	other := testdb.SQLitePool(t, dsn, 0)
	x := sqlexec.New(db, engine.SQLite, sqlexec.WithInterrupt(repeatedInterrupt(30*time.Millisecond)))
	defer x.Close()
	for i := range 8 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
		_, err := x.Read(ctx, afterFirstRow, nil)
		cancel()
		require.ErrorIs(t, err, context.DeadlineExceeded, "run %d", i)
		if _, err := db.Exec("INSERT INTO w VALUES (?)", i); err != nil {
			t.Fatalf("the write after run %d: %v", i, err)
		}
		var n int
		if err := other.QueryRow("SELECT count(*) FROM w").Scan(&n); err != nil || n != i+1 {
			t.Fatalf("after run %d another connection reads %d rows (%v), want %d: the write was not committed", i, n, err, i+1)
		}
		res, err := x.Query(context.Background(), stmt.New("SELECT count(*) AS n FROM w", nil), driver.Bounds{})
		require.NoError(t, err, "the run after run %d: %v, %v", i, res, err)
		require.Len(t, res.Rows, 1, "the run after run %d: %v, %v", i, res, err)
	}
}

// TestInterruptReachesNoOtherRun: runs interrupted at their time limit,
// on a pool of two connections, with runs that do some work without a
// limit, many at once: no interrupt reaches a run whose context
// did not end, each interrupted run ends with a deadline error, guarded or
// on a read-only pool, with the driver's interrupt or one that goes on
// interrupting for a while after the run's end.
func TestInterruptReachesNoOtherRun(t *testing.T) {
	const work = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 20000) SELECT count(*) AS n FROM r"
	for _, c := range []struct {
		name      string
		readOnly  bool
		interrupt sqlexec.InterruptFunc
	}{
		{"guarded", false, sqliteinterrupt.For},
		{"guarded, repeated", false, repeatedInterrupt(5 * time.Millisecond)},
		{"read-only pool", true, sqliteinterrupt.For},
		{"read-only pool, repeated", true, repeatedInterrupt(5 * time.Millisecond)},
	} {
		t.Run(c.name, func(t *testing.T) {
			dsn := fileDSN(t)
			// The database in WAL mode before connections open at once
			// (two connections setting it on a new file may be busy).
			db := fileDB(t, dsn, 2, "CREATE TABLE w (n INTEGER)")
			opts := []sqlexec.Option{sqlexec.WithInterrupt(c.interrupt)}
			if c.readOnly {
				ro := readOnly(t, dsn, 2)
				opts = append(opts, sqlexec.WithReadOnly(ro))
			}
			x := sqlexec.New(db, engine.SQLite, opts...)
			defer x.Close()
			errs := make(chan error, 64)
			for g := range 4 {
				go func() {
					for i := range 6 {
						// A run of work has no deadline: its context never
						// ends, so any error it meets came from another run
						// (a deadline of its own failed it on a loaded
						// machine under -race, not an interrupt).
						ctx, cancel := context.WithCancel(context.Background())
						q := work
						if (g+i)%2 == 0 {
							cancel()
							ctx, cancel = context.WithTimeout(context.Background(), time.Duration(1+i%3)*5*time.Millisecond)
							q = afterFirstRow
						}
						_, err := x.Read(ctx, q, nil)
						cancel()
						switch {
						case q == afterFirstRow && !errors.Is(err, context.DeadlineExceeded):
							errs <- fmt.Errorf("an endless run: %v, want a deadline error", err)
						case q == work && err != nil:
							errs <- fmt.Errorf("a run within its limit: %v", err)
						default:
							errs <- nil
						}
					}
				}()
			}
			for range 24 {
				err := <-errs
				assert.NoError(t, err)
			}
		})
	}
}

// TestInterruptFuncThatFails: an InterruptFunc that refuses the
// connection, or returns no interrupt and no error, fails each run at its
// start with an error saying so, rather than running it without the
// interrupt (or calling a nil interrupt when the run's context ends).
func TestInterruptFuncThatFails(t *testing.T) {
	for name, f := range map[string]sqlexec.InterruptFunc{
		"refuses":       func(any) (func(), error) { return nil, errors.New("not mine") },
		"no interrupt":  func(any) (func(), error) { return nil, nil },
		"not modernc's": func(any) (func(), error) { return sqliteinterrupt.For(struct{}{}) },
	} {
		t.Run(name, func(t *testing.T) {
			for _, readOnly := range []bool{false, true} {
				dsn := fileDSN(t)
				db := testdb.SQLitePool(t, dsn, 0)
				opts := []sqlexec.Option{sqlexec.WithInterrupt(f)}
				if readOnly {
					opts = append(opts, sqlexec.WithReadOnly(db))
				}
				x := sqlexec.New(db, engine.SQLite, opts...)
				// The run fails at its start; the limit is only a bound, wide
				// enough that a loaded machine opening the file does not reach
				// it first (100 ms did, failing with the deadline instead).
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				_, err := x.Read(ctx, afterFirstRow, nil)
				cancel()
				if err == nil || !strings.Contains(err.Error(), "interrupting the run's connection") || errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("read-only %v: %v, want the InterruptFunc's failure", readOnly, err)
				}
			}
		})
	}
}

// TestInterruptAfterClose: the Executor and its pools closed while a
// watched run goes on: the run still ends at its limit with a deadline
// error, and its interrupt reaches no closed connection (under -race).
func TestInterruptAfterClose(t *testing.T) {
	for name, x := range interruptiblePools(t) {
		t.Run(name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
				defer cancel()
				_, err := x.Read(ctx, afterFirstRow, nil)
				done <- err
			}()
			time.Sleep(20 * time.Millisecond)
			require.NoError(t, x.Close())
			select {
			case err := <-done:
				require.ErrorIs(t, err, context.DeadlineExceeded)
			case <-time.After(5 * time.Second):
				t.Fatal("still running 5 s after its limit")
			}
			// Runs after Close still run, and are interrupted.
			requireEndsWithin(t, x, afterFirstRow, 50*time.Millisecond)
		})
	}
}

// TestInterruptPoolClosed: the run's pool closed while a watched run goes
// on (database/sql closes its connection once the run lets it go): the run
// ends at its limit with a deadline error, and the interrupt, which takes
// the connection's lock as its Close does, reaches no closed connection.
func TestInterruptPoolClosed(t *testing.T) {
	db, err := sql.Open("sqlite", fileDSN(t))
	require.NoError(t, err)
	// The watch asks for the connection's interrupt once the run holds
	// the connection it reads on: the pool is closed after that.
	watched := make(chan struct{}, 1)
	x := sqlexec.New(db, engine.SQLite, sqlexec.WithInterrupt(func(c any) (func(), error) {
		select {
		case watched <- struct{}{}:
		default:
		}
		return sqliteinterrupt.For(c)
	}))
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond) // long enough to be watched on a loaded machine
		defer cancel()
		_, err := x.Read(ctx, afterFirstRow, nil)
		done <- err
	}()
	// The pool is closed once the run is watched on its connection (or
	// after 100 ms): a Close before the run holds its connection (a 20 ms
	// sleep was the wait, which a loaded machine outran) makes the run's
	// own start fail with "database is closed".
	select {
	case <-watched:
		time.Sleep(10 * time.Millisecond) // into its rows
	case <-time.After(100 * time.Millisecond):
	}
	closed := make(chan error, 1)
	go func() { closed <- db.Close() }()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.DeadlineExceeded)
	case <-time.After(5 * time.Second):
		t.Fatal("still running 5 s after its limit")
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if _, err := x.Read(context.Background(), "SELECT 1", nil); err == nil {
		t.Fatal("a run on a closed pool did not fail")
	}
}

// TestGuardedSQLiteRunEndsAtItsLimit: a guarded SQLite run given to Query
// with a time limit ends at that limit, not serverGrace (500ms) later:
// SQLite's guard, a read-only transaction, carries no time limit of the
// server's for the context to back up.
func TestGuardedSQLiteRunEndsAtItsLimit(t *testing.T) {
	x := interruptiblePools(t)["guarded"]
	start := time.Now()
	_, err := x.Query(context.Background(), stmt.New(afterFirstRow, nil), driver.Bounds{Timeout: 50 * time.Millisecond})
	took := time.Since(start)
	require.ErrorIs(t, err, context.DeadlineExceeded, "%v after %v, want a deadline error at about 50ms", err, took)
	require.LessOrEqual(t, took, 400*time.Millisecond, "%v after %v, want a deadline error at about 50ms", err, took)
}

// TestInterruptThroughTheService: through the Service and its HTTP API (on
// endpointtest's pool, whose one database the store, the run log and the
// guarded runs share), a run whose work comes after its first row ends at
// RunTimeout with a 504, each time; the store takes writes after each (a
// new endpoint), and the next run answers.
func TestInterruptThroughTheService(t *testing.T) {
	env := endpointtest.New(t, endpointtest.WithConfig(func(c *endpoint.Config) { c.RunTimeout = 50 * time.Millisecond }))
	create := func(name, query string) {
		t.Helper()
		body := fmt.Sprintf(`{"name": %q, "query": {"kind": "HogQLQuery", "query": %q}}`, name, query)
		status, answer := env.Do(t, "POST", "/endpoints/", body)
		require.Equal(t, 201, status, "create %s %s", name, answer)
	}
	create("endless", afterFirstRow)
	for i := range 4 {
		start := time.Now()
		status, answer := env.Do(t, "POST", "/endpoints/endless/run", `{}`)
		if status != 504 || time.Since(start) > 3*time.Second {
			t.Fatalf("run %d: %d %s after %v, want a 504 at about 50ms", i, status, answer, time.Since(start))
		}
		name := fmt.Sprintf("cheap%d", i)
		create(name, "SELECT 1 AS one")
		if status, answer := env.Do(t, "POST", "/endpoints/"+name+"/run", `{}`); status != 200 || !strings.Contains(answer, `"one"`) {
			t.Fatalf("the run after run %d: %d %s", i, status, answer)
		}
	}
}
