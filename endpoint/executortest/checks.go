package executortest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/sql/engine"
)

// testEngine: the engine decides every marker the Service writes, and
// configuration names it, so it must be one package engine knows under its
// own name.
func testEngine(t *testing.T, x driver.Executor, _ Fixture) {
	d := x.Engine()
	if d == nil {
		t.Fatal("Engine() is nil; return one of package engine's values")
	}
	back, err := engine.ByName(d.Name())
	if err != nil || back != d {
		t.Fatalf("engine.ByName(%q) = %v, %v; want %v", d.Name(), back, err, d)
	}
	if again := x.Engine(); again != d {
		t.Fatalf("Engine() changed from %v to %v", d, again)
	}
	if err := placeholder.NewBuilder(d).Err(); err != nil {
		t.Fatalf("placeholder.NewBuilder(%v): %v", d, err)
	}
}

// testExec: materialization writes tables through Exec, with arguments
// bound in INSERT ... SELECT.
func testExec(t *testing.T, x driver.Executor, f Fixture) {
	tb := newTable(t, x, f)
	tb.wantIDs(t, "after CREATE TABLE")

	q, args := tb.insertFixture(t)
	if err := execute(t, x, context.Background(), q, args); err != nil {
		t.Fatalf("Exec(%q) with %d arguments: %v", q, len(args), err)
	}
	tb.wantIDs(t, "after INSERT", fixtureIDs()...)

	q, args = tb.sql(t, func(b *placeholder.Builder, table string) {
		b.WriteString("INSERT INTO " + table + " (id, name, score) SELECT id + ")
		b.Bind(int64(100))
		b.WriteString(", name, score FROM " + table + " WHERE score > ")
		b.Bind(1.0)
		b.WriteString(" AND name <> ")
		b.Bind("x")
	})
	if err := execute(t, x, context.Background(), q, args); err != nil {
		t.Fatalf("Exec(%q, %q): %v", q, args, err)
	}
	ids := append(fixtureIDs(), 101)
	slices.Sort(ids)
	tb.wantIDs(t, "after INSERT ... SELECT", ids...)

	q, _ = tb.sql(t, func(b *placeholder.Builder, table string) { b.WriteString("DROP TABLE " + table) })
	if err := execute(t, x, context.Background(), q, nil); err != nil {
		t.Fatalf("Exec(%q): %v", q, err)
	}
	sel, _ := tb.sql(t, func(b *placeholder.Builder, table string) { b.WriteString("SELECT id FROM " + table) })
	if res, err := query(t, x, context.Background(), sel, nil); err == nil {
		t.Fatalf("Query(%q) after Exec(%q) = %v, want an error: the table should be gone", sel, q, res)
	}
}

// testQueryValues: the Service returns columns, types and rows as they
// come, and encodes the rows as JSON, where a []byte would be base64 and a
// float64 would round a large integer.
func testQueryValues(t *testing.T, x driver.Executor, f Fixture) {
	tb := filledTable(t, x, f)
	q, args := tb.sql(t, func(b *placeholder.Builder, table string) {
		b.WriteString("SELECT score AS ")
		b.WriteIdent("zeta")
		b.WriteString(", name AS ")
		b.WriteIdent("alpha")
		b.WriteString(", id AS ")
		b.WriteIdent("mid")
		b.WriteString(" FROM " + table + " ORDER BY id")
	})
	var want [][]any
	for _, r := range fixtureRows {
		want = append(want, []any{r.score, r.name, r.id})
	}
	wantResult(t, mustQuery(t, x, q, args), q, []string{"zeta", "alpha", "mid"}, want)

	q, args = tb.sql(t, func(b *placeholder.Builder, table string) {
		b.WriteString("SELECT name, id FROM " + table + " WHERE id >= ")
		b.Bind(int64(2))
		b.WriteString(" AND score > ")
		b.Bind(-3.0)
		b.WriteString(" AND name <> ")
		b.Bind("ann")
		b.WriteString(" ORDER BY id")
	})
	want = [][]any{{"007", int64(2)}, {"", int64(4)}, {"ünïcødé ✓", int64(1<<53 + 1)}}
	wantResult(t, mustQuery(t, x, q, args), q, []string{"name", "id"}, want)
}

// wantResult fails t unless res has exactly columns, as many types, and
// rows.
func wantResult(t *testing.T, res *driver.Result, q string, columns []string, rows [][]any) {
	t.Helper()
	if !slices.Equal(res.Columns, columns) {
		t.Fatalf("Query(%q): Columns = %q, want %q", q, res.Columns, columns)
	}
	if len(res.Types) != len(res.Columns) {
		t.Fatalf("Query(%q): Types = %q, want one per column (%d)", q, res.Types, len(res.Columns))
	}
	if !sameRows(res.Rows, rows) {
		t.Fatalf("Query(%q): Rows = %s, want %s (text as string, integers exact, NULL as nil)", q, describe(res.Rows), describe(rows))
	}
}

// testZeroRows: an endpoint whose filter matches nothing answers with its
// columns and no rows; that is not a failure.
func testZeroRows(t *testing.T, x driver.Executor, f Fixture) {
	tb := filledTable(t, x, f)
	q, args := tb.sql(t, func(b *placeholder.Builder, table string) {
		b.WriteString("SELECT id AS ")
		b.WriteIdent("a")
		b.WriteString(", name AS ")
		b.WriteIdent("b")
		b.WriteString(", score AS ")
		b.WriteIdent("c")
		b.WriteString(" FROM " + table + " WHERE id > ")
		b.Bind(int64(1 << 62))
	})
	wantResult(t, mustQuery(t, x, q, args), q, []string{"a", "b", "c"}, nil)
}

// testEngineError: whatever the engine refuses comes back as an error the
// Service turns into a 502, and the executor keeps working (a leaked
// connection would hang the next query on a one-connection pool).
func testEngineError(t *testing.T, x driver.Executor, f Fixture) {
	tb := filledTable(t, x, f)
	unbound, _ := tb.sql(t, func(b *placeholder.Builder, table string) {
		b.WriteString("SELECT id FROM " + table + " WHERE id = ")
		b.Bind(int64(1))
	})
	for _, c := range []struct{ what, sql string }{
		{"a syntax error", "SELEC id FROM " + tb.d.QuoteIdent(tb.name)},
		{"a missing table", "SELECT id FROM " + tb.d.QuoteIdent(tb.name+"_missing")},
		{"a missing column", "SELECT no_such_column FROM " + tb.d.QuoteIdent(tb.name)},
		{"a marker without its argument", unbound},
	} {
		if res, err := query(t, x, context.Background(), c.sql, nil); err == nil {
			t.Errorf("Query of %s (%q) = %v, nil; want an error", c.what, c.sql, res)
		}
	}
	for _, c := range []struct{ what, sql string }{
		{"a syntax error", "INSRT INTO " + tb.d.QuoteIdent(tb.name) + " (id) VALUES (1)"},
		{"a missing table", "INSERT INTO " + tb.d.QuoteIdent(tb.name+"_missing") + " (id) VALUES (1)"},
	} {
		if err := execute(t, x, context.Background(), c.sql, nil); err == nil {
			t.Errorf("Exec of %s (%q) = nil; want an error", c.what, c.sql)
		}
	}
	tb.wantIDs(t, "after engine errors", fixtureIDs()...)
}

// testCanceled: a client that goes away cancels its run.
func testCanceled(t *testing.T, x driver.Executor, f Fixture) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	wantContextError(t, x, f, ctx, context.Canceled)
}

// testDeadlineExceeded: the Service's RunTimeout is a deadline, and its
// error must be recognisable to answer 504 rather than 502.
func testDeadlineExceeded(t *testing.T, x driver.Executor, f Fixture) {
	ctx, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel()
	wantContextError(t, x, f, ctx, ctx.Err())
}

// wantContextError fails t unless Query and Exec on the ended ctx return
// an error wrapping want, and the Exec changes nothing.
func wantContextError(t *testing.T, x driver.Executor, f Fixture, ctx context.Context, want error) {
	t.Helper()
	tb := filledTable(t, x, f)
	q, args := tb.sql(t, func(b *placeholder.Builder, table string) {
		b.WriteString("SELECT id FROM " + table + " WHERE id > ")
		b.Bind(int64(0))
	})
	if res, err := query(t, x, ctx, q, args); !isErr(err, want) {
		t.Errorf("Query with an ended context = %v, %v; want an error wrapping %v", res, err, want)
	}
	q, args = tb.sql(t, func(b *placeholder.Builder, table string) {
		b.WriteString("INSERT INTO " + table + " (id, name, score) VALUES (")
		b.Bind(int64(500))
		b.WriteString(", ")
		b.Bind("late")
		b.WriteString(", ")
		b.Bind(1.0)
		b.WriteString(")")
	})
	if err := execute(t, x, ctx, q, args); !isErr(err, want) {
		t.Errorf("Exec with an ended context = %v; want an error wrapping %v", err, want)
	}
	tb.wantIDs(t, "after Exec with an ended context", fixtureIDs()...)
}

// isErr is errors.Is that refuses a nil err, so that a nil want (a
// context that has not ended) cannot pass by accident.
func isErr(err, want error) bool {
	return err != nil && want != nil && errors.Is(err, want)
}

// testReadOnly: Query runs a saved query, which must only read: the
// Service checks that it is one SELECT, and the executor's read-only run is
// the second line of defence should a write slip past. Each write fails
// through Query, whether it is a statement of its own or hides behind WITH
// (SQLite, PostgreSQL and MySQL 8 let WITH lead a DELETE or UPDATE;
// PostgreSQL has data-modifying CTEs), the table is unchanged, and Exec
// (materialization) still writes afterwards, so that the read-only state
// did not leak into the connections it uses.
func testReadOnly(t *testing.T, x driver.Executor, f Fixture) {
	tb := filledTable(t, x, f)
	other := "executortest_ro_" + tb.name[len("executortest_"):]
	writes := []string{
		"INSERT INTO %[1]s (id, name, score) VALUES (77, 'w', 0)",
		"UPDATE %[1]s SET id = id + 1000",
		"DELETE FROM %[1]s",
		"CREATE TABLE %[2]s (id " + tb.d.Type(engine.Int) + ")",
		"WITH w AS (SELECT 1 AS one) DELETE FROM %[1]s",
		"WITH w AS (SELECT 1 AS one) UPDATE %[1]s SET id = id + 1000",
		"WITH w AS (SELECT 1 AS one) INSERT INTO %[1]s (id, name, score) SELECT 77, 'w', 0 FROM w",
		"WITH d AS (DELETE FROM %[1]s RETURNING id) SELECT id FROM d",
		"SELECT 1 AS id INTO %[2]s",
	}
	for _, w := range writes {
		q := fmt.Sprintf(w, tb.d.QuoteIdent(tb.name), tb.d.QuoteIdent(other))
		if _, err := query(t, x, context.Background(), q, nil); err == nil {
			t.Errorf("Query(%q) succeeded; a run must not write", q)
		}
		tb.wantIDs(t, "after Query("+q+")", fixtureIDs()...)
	}
	sel := "SELECT id FROM " + tb.d.QuoteIdent(other)
	if res, err := query(t, x, context.Background(), sel, nil); err == nil {
		_ = execute(t, x, context.Background(), tb.d.DropTable(other), nil)
		t.Fatalf("a Query created table %s: %v", other, res)
	}
	for i := range 3 {
		// As many times as a small pool has connections: every one must
		// still take a write (an INSERT, which every engine's tables take).
		q, args := tb.sql(t, func(b *placeholder.Builder, table string) {
			b.WriteString("INSERT INTO " + table + " (id, name, score) VALUES (")
			b.Bind(int64(1000 + i))
			b.WriteString(", 'w', 0)")
		})
		if err := execute(t, x, context.Background(), q, args); err != nil {
			t.Fatalf("Exec(%q) after the read-only runs: %v", q, err)
		}
	}
}
