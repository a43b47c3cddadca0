// Package chexec is an driver.Executor on a ClickHouse server or cluster
// through github.com/ClickHouse/clickhouse-go/v2 (the native protocol), in
// a package of its own so that hosts not on ClickHouse never link it.
//
// Values never enter the SQL text: the engine writes ClickHouse's typed
// query parameters ({p1:String}, {p2:Int64}, ...) and the executor sends
// the arguments as the query's parameters p1, p2, ... (clickhouse-go's
// WithParameters), each in ClickHouse's parameter text format. Every
// statement carries its settings: those of the Executor, then those of the
// engine's guard (session_timezone = 'UTC', max_execution_time from the
// context's deadline), and readonly = 2 for queries (no writes, settings
// still allowed) and the memory limits, max_memory_usage
// (DefaultMaxMemoryUsage) and max_bytes_before_external_group_by
// (DefaultMaxBytesBeforeExternalGroupBy) unless the Executor's settings
// name them; a query with a byte bound also carries max_result_bytes (see
// RequestBounded). Nothing is sent as a statement of its own: the settings
// travel with the query in the native protocol.
//
// On a cluster, give the executor the engine of the cluster
// (WithEngine(engine.ClickHouseCluster(name))): the stored tables of
// materialized endpoints are then created ON CLUSTER, and the executor
// runs each statement as the engine expands it (engine.Expander).
package chexec

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	chdriver "github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/internal/chparam"
	"github.com/endpointkit/endpointkit/sql/engine"
)

// Executor runs endpoint queries on ClickHouse. It is safe for concurrent
// use, as a clickhouse-go connection pool is.
type Executor struct {
	conn     chdriver.Conn
	settings map[string]any
	engine   engine.Engine
}

var _ driver.Executor = (*Executor)(nil)

// Option configures an Executor.
type Option func(*Executor)

// WithEngine makes e the engine the executor reports and expands its
// statements with: engine.ClickHouse (the default) or the value of
// engine.ClickHouseCluster, whose stored tables live on a cluster.
func WithEngine(e engine.Engine) Option {
	return func(x *Executor) { x.engine = e }
}

// Open connects to the servers of opts (a cluster is an address list:
// clickhouse-go spreads connections over it) and returns an Executor that
// sends settings with every statement.
func Open(opts *clickhouse.Options, settings map[string]any, options ...Option) (*Executor, error) {
	conn, err := clickhouse.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("chexec: %w", err)
	}
	return New(conn, settings, options...), nil
}

// New returns an Executor over an open connection.
func New(conn chdriver.Conn, settings map[string]any, options ...Option) *Executor {
	x := &Executor{conn: conn, settings: settings, engine: engine.ClickHouse}
	for _, o := range options {
		o(x)
	}
	return x
}

// Close closes the connection.
func (x *Executor) Close() error { return x.conn.Close() }

// Engine implements driver.Executor.
func (x *Executor) Engine() engine.Engine { return x.engine }

// Request is what the executor sends for one statement: the SQL as the
// Service rendered it, the parameters by name in ClickHouse's text format,
// and the settings.
type Request struct {
	Query      string
	Parameters map[string]string
	Settings   map[string]any
}

// Request returns what the executor sends for query and args under ctx:
// the arguments as parameters p1, p2, ..., the Executor's settings, the
// engine guard's (session_timezone, and the context's remaining time as
// max_execution_time, whole seconds, at least 1), and readonly = 2 and
// the memory limits' defaults (where the Executor's settings give none)
// when the statement is a query (read).
func (x *Executor) Request(ctx context.Context, query string, args []any, read bool) (Request, error) {
	r := Request{Query: query, Parameters: make(map[string]string, len(args)), Settings: make(map[string]any, len(x.settings)+2)}
	for i, a := range args {
		s, ok := a.(string)
		if !ok {
			return Request{}, fmt.Errorf("chexec: argument %d is %T; the ClickHouse engine binds text", i+1, a)
		}
		r.Parameters[engine.ClickHouse.ArgName(i+1)] = chparam.Escape(s)
	}
	for k, v := range x.settings {
		r.Settings[k] = v
	}
	var timeout time.Duration
	if d, ok := ctx.Deadline(); ok {
		timeout = max(time.Millisecond, time.Until(d))
	}
	// The guard of a read-only connection: its readonly = 1 would forbid
	// the settings clickhouse-go sends after it, in no set order.
	for _, s := range x.engine.Guard(timeout, true).Settings {
		r.Settings[s.Name] = settingValue(s.Value)
	}
	if read {
		r.Settings["readonly"] = 2
		for k, v := range map[string]int64{"max_memory_usage": DefaultMaxMemoryUsage, "max_bytes_before_external_group_by": DefaultMaxBytesBeforeExternalGroupBy} {
			if _, ok := x.settings[k]; !ok {
				r.Settings[k] = v
			}
		}
	}
	return r, nil
}

// DefaultMaxMemoryUsage is the memory one query may use on the server
// (max_memory_usage, sent with each query) unless the Executor's settings
// give max_memory_usage: 1 GiB.
const DefaultMaxMemoryUsage = 1 << 30

// DefaultMaxBytesBeforeExternalGroupBy is the memory a query's GROUP BY
// uses before it spills to disk (max_bytes_before_external_group_by, sent
// with each query) unless the Executor's settings give it: half of
// DefaultMaxMemoryUsage.
const DefaultMaxBytesBeforeExternalGroupBy = DefaultMaxMemoryUsage / 2

// settingValue is a guard's setting as clickhouse-go sends it: an integer
// as a number, other values as text.
func settingValue(v string) any {
	if n, err := strconv.Atoi(v); err == nil {
		return n
	}
	return v
}

// ResultBytesFactor is how many times a run's byte bound (Bounds.MaxBytes)
// the server's max_result_bytes is. ClickHouse weighs a result in memory
// (8 bytes an Int64, a string's bytes and 9 more, a byte more when
// Nullable), up to 4.5 times what driver.RowBytes weighs in JSON text,
// so the server's bound only stops a result far past the run's, which the
// executor weighs exactly as it reads the rows.
const ResultBytesFactor = 8

// RequestBounded is Request for a query run within b (see Query):
// max_result_bytes is ResultBytesFactor times b.MaxBytes, with
// result_overflow_mode = 'throw', when b.MaxBytes is set.
func (x *Executor) RequestBounded(ctx context.Context, query string, args []any, b driver.Bounds) (Request, error) {
	r, err := x.Request(ctx, query, args, true)
	if err == nil && b.MaxBytes > 0 {
		r.Settings["max_result_bytes"] = b.MaxBytes * ResultBytesFactor
		r.Settings["result_overflow_mode"] = "throw"
	}
	return r, err
}

func (r Request) context(ctx context.Context) context.Context {
	return clickhouse.Context(ctx, clickhouse.WithParameters(r.Parameters), clickhouse.WithSettings(r.Settings))
}

// Query implements driver.Executor. Integers come back as int64, floats
// as float64, text as string, date-times as time.Time and NULL as nil;
// Types are ClickHouse's type names.
//
// Where each bound is enforced: b.MaxRows by the executor, which stops
// reading after that many rows and closes the rest of the stream (the
// server may have computed more); b.MaxBytes by the executor, which
// weighs each row as it reads it and fails at the first past the bound,
// and by the server's max_result_bytes, ResultBytesFactor times larger
// (see RequestBounded); b.Timeout by the server, as max_execution_time
// from ctx's deadline, which the Service sets to the same limit, or from
// b.Timeout when ctx has none or a later one.
func (x *Executor) Query(ctx context.Context, st driver.Statement, b driver.Bounds) (*driver.Result, error) {
	ctx, cancel := driver.BoundContext(ctx, b.Timeout)
	defer cancel()
	return x.query(ctx, st.SQL(), st.Args(), b)
}

// codeResultTooLarge is ClickHouse's TOO_MANY_ROWS_OR_BYTES.
const codeResultTooLarge = 396

// Read runs query, a text of the host's own with its parameters and args,
// read-only and with no bounds but ctx's, for the host's own reads (the
// example server counts the events it loaded with it); the Service never
// calls it.
func (x *Executor) Read(ctx context.Context, query string, args []any) (*driver.Result, error) {
	return x.query(ctx, query, args, driver.Bounds{})
}

// query runs query within b's rows and bytes and reads its rows.
func (x *Executor) query(ctx context.Context, query string, args []any, b driver.Bounds) (*driver.Result, error) {
	r, err := x.RequestBounded(ctx, query, args, b)
	if err != nil {
		return nil, err
	}
	rows, err := x.conn.Query(r.context(ctx), query)
	if err != nil {
		return nil, queryError(err)
	}
	defer rows.Close()
	cts := rows.ColumnTypes()
	res := &driver.Result{Columns: rows.Columns(), Types: make([]string, len(cts)), Rows: [][]any{}}
	for i, ct := range cts {
		res.Types[i] = ct.DatabaseTypeName()
	}
	var size int64
	for (b.MaxRows <= 0 || len(res.Rows) < b.MaxRows) && rows.Next() {
		dest := make([]any, len(cts))
		for i, ct := range cts {
			dest[i] = reflect.New(ct.ScanType()).Interface()
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("chexec: scan: %w", err)
		}
		row := make([]any, len(dest))
		for i, d := range dest {
			row[i] = plain(reflect.ValueOf(d).Elem())
		}
		if size += driver.RowBytes(row); b.MaxBytes > 0 && size > b.MaxBytes {
			return nil, fmt.Errorf("chexec: %w: more than %d bytes", driver.ErrResultTooLarge, b.MaxBytes)
		}
		res.Rows = append(res.Rows, row)
	}
	if err := rows.Err(); err != nil {
		return nil, queryError(err)
	}
	return res, ctx.Err()
}

// codeTimeout is ClickHouse's TIMEOUT_EXCEEDED.
const codeTimeout = 159

// queryError wraps an error of a query, as driver.ErrResultTooLarge when
// the server's max_result_bytes stopped it, as
// context.DeadlineExceeded when its max_execution_time did, and as a
// *driver.QueryError when the query is at fault.
func queryError(err error) error {
	var ex *clickhouse.Exception
	switch {
	case errors.As(err, &ex) && ex.Code == codeResultTooLarge:
		return fmt.Errorf("chexec: %w: %w", driver.ErrResultTooLarge, err)
	case errors.As(err, &ex) && ex.Code == codeTimeout:
		return fmt.Errorf("chexec: %w: %w", context.DeadlineExceeded, err)
	}
	return queryFault(err, fmt.Errorf("chexec: query: %w", err))
}

// plain turns a scanned value into int64, float64, string, bool, time.Time
// or nil, as the other executors answer.
func plain(v reflect.Value) any {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if u := v.Uint(); u <= math.MaxInt64 {
			return int64(u)
		}
		return strconv.FormatUint(v.Uint(), 10)
	case reflect.Float32, reflect.Float64:
		return v.Float()
	case reflect.String:
		return v.String()
	case reflect.Bool:
		return v.Bool()
	}
	return v.Interface()
}

// Exec implements driver.Executor. ClickHouse has no transactions: the
// statements run in order whether or not tx is set (its engine's Swap, an
// EXCHANGE TABLES, is atomic on its own and never asks for one). On a
// cluster engine, each runs as the statements the engine expands it to
// (engine.Expander), in order, each with its arguments, stopping at the
// first that fails.
func (x *Executor) Exec(ctx context.Context, stmts []driver.Statement, _ driver.Write) error {
	for _, st := range stmts {
		if err := x.Load(ctx, st.SQL(), st.Args()); err != nil {
			return err
		}
	}
	return nil
}

// Load runs query, a statement of the host's own with its parameters and
// args, as Exec runs one (expanded on a cluster): for the host's own
// statements, such as loading data; the Service never calls it.
func (x *Executor) Load(ctx context.Context, query string, args []any) error {
	stmts := []string{query}
	if ex, ok := x.engine.(engine.Expander); ok {
		stmts = ex.Expand(query)
	}
	for _, stmt := range stmts {
		r, err := x.Request(ctx, stmt, args, false)
		if err != nil {
			return err
		}
		if err := x.conn.Exec(r.context(ctx), stmt); err != nil {
			return fmt.Errorf("chexec: exec: %w", err)
		}
	}
	return nil
}
