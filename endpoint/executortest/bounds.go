package executortest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/internal/stmt"
	"github.com/endpointkit/endpointkit/placeholder"
)

// selectAll writes the query of every fixture row's id and name, in id
// order.
func (tb *table) selectAll(t *testing.T) (string, []any) {
	t.Helper()
	return tb.sql(t, func(b *placeholder.Builder, table string) {
		b.WriteString("SELECT id, name FROM " + table + " WHERE id > ")
		b.Bind(int64(0))
		b.WriteString(" ORDER BY id")
	})
}

// wantRows fails t unless rows are the first n rows of the fixture's
// ids and names.
func wantRows(t *testing.T, what string, rows [][]any, n int) {
	t.Helper()
	want := make([][]any, n)
	for i, r := range fixtureRows[:n] {
		want[i] = []any{r.id, r.name}
	}
	if !sameRows(rows, want) {
		t.Fatalf("%s: rows = %s, want the first %d: %s", what, describe(rows), n, describe(want))
	}
}

// testMaxRows: the Service reads one row more than a page to tell whether
// there are more, and an executor returns no more than Bounds.MaxRows, the
// first in the query's order, and is usable afterwards (rows left unread
// must not hold a connection).
func testMaxRows(t *testing.T, x driver.Executor, f Fixture) {
	tb := filledTable(t, x, f)
	q, args := tb.selectAll(t)
	for _, c := range []struct{ max, want int }{{1, 1}, {2, 2}, {len(fixtureRows), len(fixtureRows)}, {100, len(fixtureRows)}, {0, len(fixtureRows)}} {
		for range 3 { // more often than a small pool has connections
			res, err := queryWithin(t, x, context.Background(), q, args, driver.Bounds{MaxRows: c.max})
			if err != nil || res == nil {
				t.Fatalf("Query(%q) with MaxRows %d = %v, %v; want %d rows", q, c.max, res, err, c.want)
			}
			wantRows(t, fmt.Sprint("MaxRows ", c.max), res.Rows, c.want)
		}
	}
	tb.wantIDs(t, "after the bounded queries", fixtureIDs()...)
}

// testMaxBytes: Bounds.MaxBytes weighs the rows read with driver.RowBytes;
// at the weight of every row the query answers them all, a byte less
// fails with an error wrapping driver.ErrResultTooLarge, and only rows
// read count: under MaxRows the bound is the weight of those rows.
func testMaxBytes(t *testing.T, x driver.Executor, f Fixture) {
	tb := filledTable(t, x, f)
	q, args := tb.selectAll(t)
	all := mustQuery(t, x, q, args)
	wantRows(t, "without bounds", all.Rows, len(fixtureRows))
	var total, firstTwo int64
	for i, row := range all.Rows {
		total += driver.RowBytes(row)
		if i < 2 {
			firstTwo = total
		}
	}
	res, err := queryWithin(t, x, context.Background(), q, args, driver.Bounds{MaxBytes: total})
	if err != nil || res == nil {
		t.Fatalf("Query(%q) with MaxBytes %d, the weight of its rows = %v, %v; want its rows", q, total, res, err)
	}
	wantRows(t, "MaxBytes at the weight of the rows", res.Rows, len(fixtureRows))
	for _, b := range []driver.Bounds{{MaxBytes: total - 1}, {MaxBytes: firstTwo}, {MaxBytes: 1}, {MaxRows: 3, MaxBytes: firstTwo}} {
		res, err := queryWithin(t, x, context.Background(), q, args, b)
		if !errors.Is(err, driver.ErrResultTooLarge) {
			t.Fatalf("Query(%q) with %+v, under the weight of its rows (%d) = %v, %v; want an error wrapping driver.ErrResultTooLarge", q, b, total, res, err)
		}
	}
	res, err = queryWithin(t, x, context.Background(), q, args, driver.Bounds{MaxRows: 2, MaxBytes: firstTwo})
	if err != nil || res == nil {
		t.Fatalf("Query(%q) with MaxRows 2 and MaxBytes %d, the weight of 2 rows = %v, %v; want 2 rows: rows not read do not count", q, firstTwo, res, err)
	}
	wantRows(t, "MaxRows 2 within their weight", res.Rows, 2)
	tb.wantIDs(t, "after the refused queries", fixtureIDs()...)
}

// timeoutBound is the Bounds.Timeout of testTimeout, and timeoutGrace how
// much later than it the query must have ended: engines time queries in
// whole seconds (ClickHouse's max_execution_time).
const (
	timeoutBound = 300 * time.Millisecond
	timeoutGrace = 4 * time.Second
	// timeoutBackstop is the context's deadline, which ends the query of
	// an executor that ignores Bounds.Timeout (where the engine lets a
	// context end it).
	timeoutBackstop = timeoutBound + timeoutGrace + 2*time.Second
)

// testTimeout: Bounds.Timeout ends the query even when the context has no
// nearer deadline (an executor passes it to the engine, and to its own
// wait), with an error, and the executor is usable afterwards.
func testTimeout(t *testing.T, x driver.Executor, f Fixture) {
	if f.Slow == "" {
		t.Skipf("the Fixture of engine %s has no Slow query to time", x.Engine().Name())
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeoutBackstop)
	defer cancel()
	start := time.Now()
	res, err := queryWithin(t, x, ctx, f.Slow, nil, driver.Bounds{Timeout: timeoutBound})
	took := time.Since(start)
	switch {
	case err == nil:
		t.Fatalf("Query(%q) with Timeout %v = %v after %v; want an error", f.Slow, timeoutBound, res, took)
	case took > timeoutBound+timeoutGrace:
		t.Fatalf("Query(%q) with Timeout %v ended after %v (%v); want it ended within %v", f.Slow, timeoutBound, took, err, timeoutGrace)
	}
	tb := filledTable(t, x, f)
	tb.wantIDs(t, "after a query that timed out", fixtureIDs()...)
}

// testExecTx: Exec runs its statements in order; asked for one
// transaction on an engine whose DDL is transactional (engine.Swap says
// so), a failing statement leaves nothing of those before it.
func testExecTx(t *testing.T, x driver.Executor, f Fixture) {
	tb := newTable(t, x, f)
	insert := func(id int64) driver.Statement {
		q, args := tb.sql(t, func(b *placeholder.Builder, table string) {
			b.WriteString("INSERT INTO " + table + " (id, name, score) VALUES (")
			b.Bind(id)
			b.WriteString(", 'tx', 0)")
		})
		return stmt.New(q, args)
	}
	for _, tx := range []bool{false, true} {
		base := int64(10)
		if tx {
			base = 20
		}
		if err := executeAll(t, x, context.Background(), tx, insert(base+1), insert(base+2)); err != nil {
			t.Fatalf("Exec of two INSERTs (tx %v): %v", tx, err)
		}
	}
	tb.wantIDs(t, "after two Exec of two INSERTs", 11, 12, 21, 22)
	missing := stmt.New("INSERT INTO "+tb.d.QuoteIdent(tb.name+"_missing")+" (id) VALUES (1)", nil)
	if err := executeAll(t, x, context.Background(), false, insert(31), missing, insert(32)); err == nil {
		t.Fatal("Exec of an INSERT into a missing table succeeded")
	}
	tb.wantIDs(t, "after Exec stopped at its failing statement", 11, 12, 21, 22, 31)
	if _, inTx := tb.d.Swap("a", "b"); !inTx {
		return
	}
	if err := executeAll(t, x, context.Background(), true, insert(41), missing); err == nil {
		t.Fatal("Exec in a transaction of an INSERT into a missing table succeeded")
	}
	tb.wantIDs(t, "after Exec in a transaction failed", 11, 12, 21, 22, 31)
}
