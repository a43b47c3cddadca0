package chexec

import (
	"context"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	chdriver "github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/executortest"
	"github.com/endpointkit/endpointkit/internal/stmt"
	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
)

// TestRequestGolden: what the executor sends for a rendered endpoint query:
// the SQL with typed markers only, each value as a parameter in the text
// format (hostile ones included), the settings, the time limit and
// readonly for queries.
func TestRequestGolden(t *testing.T) {
	tpl, err := placeholder.Compile("SELECT count() FROM events WHERE event = {variables.event} AND timestamp >= {variables.from} AND n < {variables.n} AND country IN {variables.c}")
	require.NoError(t, err)
	query, args, err := tpl.Render(engine.ClickHouse, map[string]any{
		"event": "it's\t\\ \n", "from": variable.Timestamp{Time: time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC), DateOnly: true},
		"n": int64(7), "c": []string{"FR", "DE"},
	})
	require.NoError(t, err)
	x := New(nil, map[string]any{"max_threads": 4})
	ctx, cancel := context.WithTimeout(context.Background(), 29500*time.Millisecond)
	defer cancel()
	r, err := x.Request(ctx, query, args, true)
	require.NoError(t, err)
	assert.Equal(t, "SELECT count() FROM events WHERE event = {p1:String} AND timestamp >= {p2:String} AND n < {p3:Int64} AND country IN ({p4:String}, {p5:String})", r.Query)
	assert.Equal(t, map[string]string{"p1": `it\'s\t\\ \n`, "p2": "2025-05-01", "p3": "7", "p4": "FR", "p5": "DE"}, r.Parameters)
	assert.Equal(t, map[string]any{"max_threads": 4, "session_timezone": "UTC", "optimize_move_to_prewhere": 0, "max_execution_time": 30, "readonly": 2,
		"max_memory_usage": int64(DefaultMaxMemoryUsage), "max_bytes_before_external_group_by": int64(DefaultMaxBytesBeforeExternalGroupBy)}, r.Settings)

	w, err := x.Request(context.Background(), "DROP TABLE IF EXISTS t", nil, false)
	require.NoError(t, err)
	got, want := w.Settings, (map[string]any{"max_threads": 4, "session_timezone": "UTC", "optimize_move_to_prewhere": 0})
	assert.Equal(t, want, got, "writes are not read-only and have no deadline here: w.Settings")

	own := New(nil, map[string]any{"session_timezone": "Europe/Berlin"})
	r, err = own.Request(context.Background(), "SELECT 1", nil, true)
	require.NoError(t, err)
	assert.Equal(t, "UTC", r.Settings["session_timezone"], "the engine's session zone wins over the host's: r.Settings[\"session_timezone\"]")
	small := New(nil, map[string]any{"max_memory_usage": 1 << 20, "max_bytes_before_external_group_by": 0})
	r, err = small.Request(context.Background(), "SELECT 1", nil, true)
	require.NoError(t, err)
	if got, want := r.Settings["max_memory_usage"], 1<<20; !reflect.DeepEqual(got, want) {
		t.Errorf("the host's memory limit wins over the default: r.Settings[\"max_memory_usage\"] = %+v, want %+v", got, want)
	}
	assert.Equal(t, 0, r.Settings["max_bytes_before_external_group_by"])
	_, err = x.Request(context.Background(), "SELECT 1", []any{1}, true)
	assert.Error(t, err, "only text arguments: the engine binds text: got no error, want one")
}

// TestConformance runs the executor suite on the server that
// ENDPOINTKIT_TEST_CLICKHOUSE names (host:port of the native protocol).
func TestConformance(t *testing.T) {
	addr := os.Getenv("ENDPOINTKIT_TEST_CLICKHOUSE")
	if addr == "" {
		t.Skip("ENDPOINTKIT_TEST_CLICKHOUSE is not set (host:port of a ClickHouse server's native protocol); the ClickHouse engine is tested in CI through chDB (go test -tags chdb ./endpoint/chdb)")
	}
	x, err := Open(&clickhouse.Options{Addr: []string{addr}}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { x.Close() })
	executortest.Run(t, func(*testing.T) driver.Executor { return x })
}

// recorder is a connection that keeps the statements executed on it.
type recorder struct {
	chdriver.Conn
	stmts []string
}

func (r *recorder) Exec(_ context.Context, query string, _ ...any) error {
	r.stmts = append(r.stmts, query)
	return nil
}

// TestExecOnCluster: with the engine of a cluster, the executor reports it
// (so the Service writes its DDL) and runs each statement as the engine
// expands it; with the default engine, as it is.
func TestExecOnCluster(t *testing.T) {
	e, err := engine.ClickHouseCluster("events")
	require.NoError(t, err)
	conn := &recorder{}
	x := New(conn, nil, WithEngine(e))
	if got, want := x.Engine(), e; !reflect.DeepEqual(got, want) {
		t.Errorf("x.Engine() = %+v, want %+v", got, want)
	}
	ctx := context.Background()
	build := e.CreateTableAs("t_next", "SELECT 1 AS n")
	require.NoError(t, x.Exec(ctx, []driver.Statement{stmt.New(build, nil), stmt.New(e.DropTable("t"), nil)}, driver.Write{Tx: true}), "no transaction on ClickHouse: in order")
	want := append(e.(engine.Expander).Expand(build), e.(engine.Expander).Expand(e.DropTable("t"))...)
	assert.Equal(t, want, conn.stmts)
	got := len(conn.stmts)
	assert.Equal(t, 5, got, "create local, create Distributed, insert; drop both: len(conn.stmts) = %d, want %d: %v", got, 5, conn.stmts)

	conn.stmts = nil
	plain := New(conn, nil)
	if got, want := plain.Engine(), engine.ClickHouse; !reflect.DeepEqual(got, want) {
		t.Errorf("plain.Engine() = %+v, want %+v", got, want)
	}
	require.NoError(t, plain.Exec(ctx, []driver.Statement{stmt.New(engine.ClickHouse.CreateTableAs("t_next", "SELECT 1 AS n"), nil)}, driver.Write{Tx: false}))
	if got, want := conn.stmts, ([]string{engine.ClickHouse.CreateTableAs("t_next", "SELECT 1 AS n")}); !reflect.DeepEqual(got, want) {
		t.Errorf("conn.stmts = %+v, want %+v", got, want)
	}

	conn.stmts = nil
	require.NoError(t, x.Load(ctx, "INSERT INTO events VALUES (1)", nil))
	if got, want := conn.stmts, ([]string{"INSERT INTO events VALUES (1)"}); !reflect.DeepEqual(got, want) {
		t.Errorf("the host's Load expands as Exec does: conn.stmts = %+v, want %+v", got, want)
	}
}

// rows are a query's answer of one String column, as a fake connection
// gives it.
type rows struct {
	chdriver.Rows
	values []string
	i      int
}

func (r *rows) Next() bool { r.i++; return r.i <= len(r.values) }

func (r *rows) Scan(dest ...any) error {
	*dest[0].(*string) = r.values[r.i-1]
	return nil
}

func (r *rows) ColumnTypes() []chdriver.ColumnType { return []chdriver.ColumnType{stringColumn{}} }
func (r *rows) Columns() []string                  { return []string{"s"} }
func (r *rows) Close() error                       { return nil }
func (r *rows) Err() error                         { return nil }

type stringColumn struct{ chdriver.ColumnType }

func (stringColumn) ScanType() reflect.Type   { return reflect.TypeOf("") }
func (stringColumn) DatabaseTypeName() string { return "String" }

// answering is a connection that answers every query with its rows, or
// fails with err; it keeps the deadline of the last query's context.
type answering struct {
	chdriver.Conn
	values   []string
	err      error
	deadline time.Time
}

func (a *answering) Query(ctx context.Context, _ string, _ ...any) (chdriver.Rows, error) {
	a.deadline, _ = ctx.Deadline()
	if a.err != nil {
		return nil, a.err
	}
	return &rows{values: a.values}, nil
}

// TestQueryBounds: the executor stops at Bounds.MaxRows, weighs the rows
// it reads as driver.RowBytes does and fails past Bounds.MaxBytes with
// driver.ErrResultTooLarge, as it does when the server's
// max_result_bytes (ResultBytesFactor times the bound, sent with
// result_overflow_mode = 'throw') stops the query. Bounds.Timeout becomes
// the context's deadline (max_execution_time, see Request) when the
// context has none as near, and the server's TIMEOUT_EXCEEDED a deadline
// error.
func TestQueryBounds(t *testing.T) {
	ctx := context.Background()
	x := New(&answering{values: []string{"aaaa", "bbbb", "cccc"}}, nil)
	res, err := x.Query(ctx, stmt.New("SELECT s", nil), driver.Bounds{MaxRows: 2})
	require.NoError(t, err)
	assert.Equal(t, [][]any{{"aaaa"}, {"bbbb"}}, res.Rows)
	assert.Equal(t, []string{"String"}, res.Types)

	row := driver.RowBytes([]any{"aaaa"})
	_, err = x.Query(ctx, stmt.New("SELECT s", nil), driver.Bounds{MaxBytes: 3 * row})
	require.NoError(t, err, "exactly the bound")
	_, err = x.Query(ctx, stmt.New("SELECT s", nil), driver.Bounds{MaxBytes: 3*row - 1})
	require.ErrorIs(t, err, driver.ErrResultTooLarge)

	r, err := x.RequestBounded(ctx, "SELECT s", nil, driver.Bounds{MaxBytes: 1000})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"session_timezone": "UTC", "optimize_move_to_prewhere": 0, "readonly": 2, "max_result_bytes": int64(8000), "result_overflow_mode": "throw",
		"max_memory_usage": int64(DefaultMaxMemoryUsage), "max_bytes_before_external_group_by": int64(DefaultMaxBytesBeforeExternalGroupBy)}, r.Settings)
	r, err = x.RequestBounded(ctx, "SELECT s", nil, driver.Bounds{})
	require.NoError(t, err)
	_, ok := r.Settings["max_result_bytes"]
	assert.False(t, ok, "key %v in %v", "max_result_bytes", r.Settings)

	server := New(&answering{err: &clickhouse.Exception{Code: 396, Name: "DB::Exception", Message: "Limit for result exceeded"}}, nil)
	_, err = server.Query(ctx, stmt.New("SELECT s", nil), driver.Bounds{MaxBytes: 1000})
	require.ErrorIs(t, err, driver.ErrResultTooLarge)
	other := New(&answering{err: &clickhouse.Exception{Code: 60, Message: "Unknown table"}}, nil)
	_, err = other.Query(ctx, stmt.New("SELECT s", nil), driver.Bounds{})
	require.Error(t, err)
	assert.NotErrorIs(t, err, driver.ErrResultTooLarge)
	assert.NotErrorIs(t, err, context.DeadlineExceeded)
	slow := New(&answering{err: &clickhouse.Exception{Code: 159, Message: "Timeout exceeded: elapsed 1.0 seconds"}}, nil)
	_, err = slow.Query(ctx, stmt.New("SELECT s", nil), driver.Bounds{Timeout: time.Second})
	require.ErrorIs(t, err, context.DeadlineExceeded)

	conn := &answering{values: []string{"a"}}
	timed := New(conn, nil)
	_, err = timed.Query(ctx, stmt.New("SELECT s", nil), driver.Bounds{Timeout: 2 * time.Second})
	require.NoError(t, err)
	require.False(t, conn.deadline.IsZero(), "Bounds.Timeout without a deadline in ctx: conn.deadline.IsZero() is true")
	if want, d := time.Now().Add(2*time.Second), time.Second; conn.deadline.Before(want.Add(-d)) || conn.deadline.After(want.Add(d)) {
		t.Errorf("conn.deadline = %v, want within %v of %v", conn.deadline, d, want)
	}
	near, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	want, _ := near.Deadline()
	_, err = timed.Query(near, stmt.New("SELECT s", nil), driver.Bounds{Timeout: time.Hour})
	require.NoError(t, err)
	if got, want := conn.deadline, want; !reflect.DeepEqual(got, want) {
		t.Errorf("the nearer deadline of ctx stays: conn.deadline = %+v, want %+v", got, want)
	}
}
