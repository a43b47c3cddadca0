// Package executortest is the conformance suite for driver.Executor
// implementations. Every implementation runs it from its own tests, once
// per engine or configuration it supports:
//
//	func TestConformance(t *testing.T) {
//		executortest.Run(t, func(t *testing.T) driver.Executor {
//			return myexec.New(openTestDatabase(t))
//		})
//	}
//
// newExecutor is called once per check and may return executors on one
// shared database: each check creates its own table, named
// executortest_<random hex>, through the executor's Exec, and drops it when
// done. The SQL is written with placeholder.NewBuilder(x.Engine()), so
// the suite runs on any engine whose dialect the placeholder package knows;
// the column types come from FixtureFor(x.Engine()), or from the Fixture
// given to RunWith for an engine that needs others.
//
// The checks, each a subtest: Dialect is valid and its name round-trips
// through engine.ByName; Exec creates, fills and drops a table
// with bound arguments; Query returns the columns in select order, a Types
// slice as long, and rows in column order with text as string (never
// []byte), integers as any Go integer type and floats as float64 or
// float32, both exact, and NULL as nil; no rows is an empty
// result, not an error; hostile text (quotes, comment markers, a DROP
// TABLE, backslashes, NUL, Unicode quotes, other dialects' markers) bound
// as arguments round-trips exactly, matches only its own row, and leaves
// the table in place; engine errors come back as errors, never panics, and
// leave the executor usable; a cancelled context fails Query and Exec with
// an error wrapping context.Canceled, and an expired deadline with
// context.DeadlineExceeded, without running the statement; concurrent
// Query calls return their own answers (run the suite with -race); and
// Query runs read-only: a statement that writes (INSERT, UPDATE, DELETE,
// CREATE TABLE), as might slip past the Service's checks, fails and
// changes nothing, and the executor still reads and writes (Exec)
// afterwards. Every bound of driver.Bounds holds: MaxRows returns the
// first rows only, MaxBytes refuses rows that weigh more with an error
// wrapping driver.ErrResultTooLarge (and counts only the rows read), and
// Timeout ends a query whose context has no nearer deadline (the Fixture's
// Slow query). Exec runs statements in order, stops at the first that
// fails, and, asked for a transaction on an engine whose DDL is
// transactional (engine.Engine.Swap), leaves nothing of a failed one. An
// executor that is a driver.RowQuerier hands over through QueryRows the
// rows Query answers, within the same bounds, and ends with its sink's
// error (Sink is a RowSink for an implementation's own tests).
//
// The suite makes its statements itself: it is, with package
// sql/scope, the only code of this module allowed to seal a
// driver.Statement, so that it can hand an executor SQL of its own.
//
// The suite cannot tell correct escaping into the SQL text from binding:
// it shows that no hostile value changes what a statement does, which
// escaping done right also achieves. Binding remains the contract.
package executortest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/internal/stmt"
	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/sql/engine"
)

// Run runs the conformance suite as subtests of t, with the table types of
// FixtureFor(x.Engine()).
func Run(t *testing.T, newExecutor func(t *testing.T) driver.Executor) {
	t.Helper()
	run(t, func(x driver.Executor) Fixture { return FixtureFor(x.Engine()) }, newExecutor)
}

// RunWith runs the conformance suite as subtests of t, with the table
// types of f, for an engine that FixtureFor does not suit.
func RunWith(t *testing.T, f Fixture, newExecutor func(t *testing.T) driver.Executor) {
	t.Helper()
	run(t, func(driver.Executor) Fixture { return f }, newExecutor)
}

// check is one subtest of the suite.
type check struct {
	name string
	fn   func(t *testing.T, x driver.Executor, f Fixture)
}

// checks is the suite, in the order it runs.
var checks = []check{
	{"Engine", testEngine},
	{"ExecCreatesFillsAndDrops", testExec},
	{"QueryValues", testQueryValues},
	{"ZeroRows", testZeroRows},
	{"BoundArgumentsNotInterpolated", testHostile},
	{"EngineError", testEngineError},
	{"Canceled", testCanceled},
	{"DeadlineExceeded", testDeadlineExceeded},
	{"ConcurrentQuery", testConcurrentQuery},
	{"QueryIsReadOnly", testReadOnly},
	{"BoundMaxRows", testMaxRows},
	{"BoundMaxBytes", testMaxBytes},
	{"BoundTimeout", testTimeout},
	{"ExecInOrderAndInTransaction", testExecTx},
	{"QueryRows", testQueryRows},
}

func run(t *testing.T, fixture func(driver.Executor) Fixture, newExecutor func(t *testing.T) driver.Executor) {
	t.Helper()
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			x := newExecutor(t)
			if x.Engine() == nil && c.name != "Engine" {
				t.Skip("Engine() is nil: the Engine check fails, and nothing else can run")
			}
			c.fn(t, x, fixture(x))
		})
	}
}

// table is the suite's table on one executor.
type table struct {
	x    driver.Executor
	d    engine.Engine
	f    Fixture
	name string
}

// newTable creates an empty table with a name of its own, dropped when t
// ends, and fails t if Exec cannot create it.
func newTable(t *testing.T, x driver.Executor, f Fixture) *table {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatalf("table name: %v", err)
	}
	tb := &table{x: x, d: x.Engine(), f: f, name: "executortest_" + hex.EncodeToString(b[:])}
	if err := placeholder.NewBuilder(tb.d).Err(); err != nil {
		t.Fatalf("setup: the executor's dialect %q cannot write SQL: %v", tb.d.Name(), err)
	}
	if err := execute(t, x, context.Background(), f.createTable(tb.d, tb.name), nil); err != nil {
		t.Fatalf("setup: Exec(%q): %v", f.createTable(tb.d, tb.name), err)
	}
	t.Cleanup(func() {
		drop := "DROP TABLE IF EXISTS " + tb.d.QuoteIdent(tb.name)
		if err := execute(t, x, context.Background(), drop, nil); err != nil {
			t.Errorf("cleanup: Exec(%q): %v", drop, err)
		}
	})
	return tb
}

// filledTable is newTable with the fixture rows inserted.
func filledTable(t *testing.T, x driver.Executor, f Fixture) *table {
	t.Helper()
	tb := newTable(t, x, f)
	q, args := tb.insertFixture(t)
	if err := execute(t, x, context.Background(), q, args); err != nil {
		t.Fatalf("setup: Exec(%q) with %d arguments: %v", q, len(args), err)
	}
	return tb
}

// sql builds a statement: write gets a Builder and the quoted table name.
func (tb *table) sql(t *testing.T, write func(b *placeholder.Builder, table string)) (string, []any) {
	t.Helper()
	b := placeholder.NewBuilder(tb.d)
	write(b, tb.d.QuoteIdent(tb.name))
	if err := b.Err(); err != nil {
		t.Fatalf("building SQL: %v", err)
	}
	return b.SQL(), b.Args()
}

// fixtureRow is a row of the suite's table; nil is NULL.
type fixtureRow struct {
	id    int64
	name  any
	score any
}

// fixtureRows are chosen to expose lossy conversions: an id beyond
// float64's exact integers, text that looks like a number, Unicode, the
// empty string (not NULL), and floats exact in binary.
var fixtureRows = []fixtureRow{
	{1, "ann", 1.5},
	{2, "007", -2.25},
	{3, nil, nil},
	{4, "", 0.0},
	{1<<53 + 1, "ünïcødé ✓", 0.125},
}

// insertFixture is one INSERT of every fixture row, NULLs written as
// NULL (the builder binds no nil) and everything else bound.
func (tb *table) insertFixture(t *testing.T) (string, []any) {
	return tb.sql(t, func(b *placeholder.Builder, table string) {
		b.WriteString("INSERT INTO " + table + " (id, name, score) VALUES ")
		for i, r := range fixtureRows {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(")
			for j, v := range []any{r.id, r.name, r.score} {
				if j > 0 {
					b.WriteString(", ")
				}
				if v == nil {
					b.WriteString("NULL")
				} else {
					b.Bind(v)
				}
			}
			b.WriteString(")")
		}
	})
}

// query calls x.Query without bounds, failing t if it panics.
func query(t *testing.T, x driver.Executor, ctx context.Context, q string, args []any) (res *driver.Result, err error) {
	t.Helper()
	return queryWithin(t, x, ctx, q, args, driver.Bounds{})
}

// queryWithin calls x.Query within b, failing t if it panics.
func queryWithin(t *testing.T, x driver.Executor, ctx context.Context, q string, args []any, b driver.Bounds) (res *driver.Result, err error) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("Query(%q) panicked: %v", q, p)
		}
	}()
	return x.Query(ctx, stmt.New(q, args), b)
}

// mustQuery calls x.Query, failing t on an error or a nil result.
func mustQuery(t *testing.T, x driver.Executor, q string, args []any) *driver.Result {
	t.Helper()
	res, err := query(t, x, context.Background(), q, args)
	if err != nil {
		t.Fatalf("Query(%q, %q): %v", q, args, err)
	}
	if res == nil {
		t.Fatalf("Query(%q, %q) returned a nil result and no error", q, args)
	}
	return res
}

// execute calls x.Exec with one statement, failing t if it panics.
func execute(t *testing.T, x driver.Executor, ctx context.Context, q string, args []any) (err error) {
	t.Helper()
	return executeAll(t, x, ctx, false, stmt.New(q, args))
}

// executeAll calls x.Exec, failing t if it panics.
func executeAll(t *testing.T, x driver.Executor, ctx context.Context, tx bool, stmts ...driver.Statement) (err error) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("Exec(%q) panicked: %v", stmts[0].SQL(), p)
		}
	}()
	return x.Exec(ctx, stmts, driver.Write{Tx: tx})
}

// ids returns the ids of the table's rows, in order.
func (tb *table) ids(t *testing.T) []any {
	t.Helper()
	q, args := tb.sql(t, func(b *placeholder.Builder, table string) {
		b.WriteString("SELECT id FROM " + table + " ORDER BY id")
	})
	res := mustQuery(t, tb.x, q, args)
	out := make([]any, 0, len(res.Rows))
	for _, row := range res.Rows {
		if len(row) != 1 {
			t.Fatalf("Query(%q): row %v has %d values, want 1", q, row, len(row))
		}
		out = append(out, row[0])
	}
	return out
}

// wantIDs fails t unless the table holds exactly the rows of ids.
func (tb *table) wantIDs(t *testing.T, what string, ids ...int64) {
	t.Helper()
	got := tb.ids(t)
	want := make([][]any, len(ids))
	for i, id := range ids {
		want[i] = []any{id}
	}
	gotRows := make([][]any, len(got))
	for i, v := range got {
		gotRows[i] = []any{v}
	}
	if !sameRows(gotRows, want) {
		t.Fatalf("%s: table ids = %s, want %v", what, describe(gotRows), ids)
	}
}

// fixtureIDs are the ids of fixtureRows, in order.
func fixtureIDs() []int64 {
	ids := make([]int64, len(fixtureRows))
	for i, r := range fixtureRows {
		ids[i] = r.id
	}
	return ids
}
