//go:build chdb

package chdb

/*
#cgo LDFLAGS: -lchdb
#include <stdlib.h>
#include <stddef.h>
#include <stdint.h>

typedef void * chdb_connection;
typedef struct chdb_result_ chdb_result;

chdb_connection * chdb_connect(int argc, char ** argv);
void chdb_close_conn(chdb_connection * conn);
chdb_result * chdb_query_with_params_n(chdb_connection conn, const char * query, size_t query_len,
	const char * format, size_t format_len, const char * const * param_names, const size_t * param_name_lens,
	const char * const * param_values, const size_t * param_value_lens, size_t param_count);
char * chdb_result_buffer(chdb_result * result);
size_t chdb_result_length(chdb_result * result);
const char * chdb_result_error(chdb_result * result);
void chdb_destroy_query_result(chdb_result * result);
*/
import "C"

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/engine"
	"github.com/endpointkit/endpointkit/internal/chparam"
)

// Executor runs queries on an in-process chDB. It is safe for concurrent
// use: statements of one Executor run one at a time, as a chDB connection
// runs them.
type Executor struct {
	mu   sync.Mutex
	conn *C.chdb_connection
}

var _ driver.Executor = (*Executor)(nil)

// ErrClosed is returned by an Executor after Close.
var ErrClosed = errors.New("chdb: executor closed")

// Open starts chDB keeping its data in dir ("" for memory only). chDB
// runs one engine per process with one data path: open one Executor per
// process and keep it open.
func Open(dir string) (*Executor, error) {
	args := []string{"endpointkit"}
	if dir != "" {
		args = append(args, "--path="+dir)
	}
	argv := make([]*C.char, len(args))
	for i, a := range args {
		argv[i] = C.CString(a)
		defer C.free(unsafe.Pointer(argv[i]))
	}
	conn := C.chdb_connect(C.int(len(args)), &argv[0])
	if conn == nil {
		return nil, fmt.Errorf("chdb: cannot start with data in %q", dir)
	}
	x := &Executor{conn: conn}
	for _, stmt := range session {
		if _, err := x.run(context.Background(), stmt, "Null", nil, nil); err != nil {
			x.Close()
			return nil, err
		}
	}
	return x, nil
}

// session is what the connection's session is put in once: UTC, as the
// engine's SQL assumes (engine.ClickHouse's Guard sends it with each query
// too, but statements run through Exec, such as an INSERT ... VALUES,
// cannot carry settings at their end), whatever the process's time zone
// (chDB's default, from TZ); and date-times answered as ISO 8601 UTC text,
// whatever a column's zone, which decode reads as time.Time.
var session = []string{
	"SET session_timezone = 'UTC'",
	"SET date_time_output_format = 'iso'",
}

// Close closes the connection; the engine stops with its last connection.
func (x *Executor) Close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.conn != nil {
		C.chdb_close_conn(x.conn)
		x.conn = nil
	}
	return nil
}

// Engine implements driver.Executor.
func (x *Executor) Engine() engine.Engine { return engine.ClickHouse }

// Query implements driver.Executor. Columns carry ClickHouse's type names;
// integers come back as int64, floats as float64, text as string, Date and
// DateTime values as time.Time in UTC, and NULL as nil. RowsRead and
// BytesRead are the engine's statistics of the query. The query runs with
// the settings of the engine's guard (engine.ClickHouse.Guard), written
// after it: session_timezone, the time limit as max_execution_time, and
// readonly, so that a query cannot write.
//
// Where each bound is enforced: b.Timeout by the engine, as
// max_execution_time (the sooner of b.Timeout and ctx's deadline), and by
// ctx, checked before and after the statement (a call into chDB cannot be
// interrupted). b.MaxRows and b.MaxBytes only by this executor, on the
// engine's answer: chDB computes the whole result and hands it over as
// one JSON buffer, which Query splits into rows whole and of which it
// converts at most b.MaxRows rows to values, weighing each as it is
// converted and failing at the first past b.MaxBytes. The engine's own
// result limits (max_result_rows, max_result_bytes) are not used: chDB
// 26.5 hangs on the statement after one that a result limit stopped. So
// a bound saves the conversion and the memory of the rows' values, not
// the engine's work nor the buffer.
func (x *Executor) Query(ctx context.Context, st driver.Statement, b driver.Bounds) (*driver.Result, error) {
	ctx, cancel := driver.BoundContext(ctx, b.Timeout)
	defer cancel()
	return x.read(ctx, st.SQL(), st.Args(), b)
}

// Read runs query, a text of the host's own with its parameters and args,
// read-only and with no bounds but ctx's, for the host's own reads (the
// example server counts the events it loaded with it); the Service never
// calls it.
func (x *Executor) Read(ctx context.Context, query string, args []any) (*driver.Result, error) {
	return x.read(ctx, query, args, driver.Bounds{})
}

// read runs query under the engine's guard and decodes its answer within
// b's rows and bytes.
func (x *Executor) read(ctx context.Context, query string, args []any, b driver.Bounds) (*driver.Result, error) {
	var settings []string
	for _, s := range engine.ClickHouse.Guard(timeout(ctx), false).Settings {
		settings = append(settings, s.Name+" = "+settingValue(s.Value))
	}
	out, err := x.run(ctx, query+" SETTINGS "+strings.Join(settings, ", "), "JSONCompact", args, nil)
	if err != nil {
		return nil, err
	}
	return decode(out, b)
}

// Exec implements driver.Executor. chDB has no transactions: the
// statements run in order whether or not tx is set (the ClickHouse
// engine's Swap, an EXCHANGE TABLES, is atomic on its own and never asks
// for one).
func (x *Executor) Exec(ctx context.Context, stmts []driver.Statement, tx bool) error {
	for _, st := range stmts {
		if err := x.Load(ctx, st.SQL(), st.Args()); err != nil {
			return err
		}
	}
	return nil
}

// Load runs query, a statement of the host's own with its parameters and
// args, as Exec runs one: for the host's own statements, such as loading
// data; the Service never calls it. ctx's deadline reaches the engine as
// the session's max_execution_time for the statement: a SETTINGS clause
// cannot follow every statement (INSERT ... VALUES takes it before VALUES).
func (x *Executor) Load(ctx context.Context, query string, args []any) error {
	var around [2]string
	if t := timeout(ctx); t > 0 {
		around = [2]string{"SET max_execution_time = " + strconv.FormatInt(int64(math.Ceil(t.Seconds())), 10), "SET max_execution_time = 0"}
	}
	_, err := x.run(ctx, query, "Null", args, around[:])
	return err
}

// timeout is the time left before ctx's deadline, 0 without one.
func timeout(ctx context.Context) time.Duration {
	if d, ok := ctx.Deadline(); ok {
		return max(time.Millisecond, time.Until(d))
	}
	return 0
}

// settingValue writes a setting's value: a number as it is, other text as
// a string literal.
func settingValue(v string) string {
	if _, err := strconv.ParseFloat(v, 64); err == nil {
		return v
	}
	return string(engine.ClickHouse.AppendString(nil, v))
}

// run executes query with its arguments as the parameters p1, p2, ...;
// around, when set, are two statements run just before and just after it
// on the same session (the second whatever the query did).
func (x *Executor) run(ctx context.Context, query, format string, args []any, around []string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("chdb: %w", err)
	}
	names := make([]*C.char, len(args))
	values := make([]*C.char, len(args))
	nameLens := make([]C.size_t, len(args))
	valueLens := make([]C.size_t, len(args))
	for i, a := range args {
		s, ok := a.(string)
		if !ok {
			return nil, fmt.Errorf("chdb: argument %d is %T; the ClickHouse engine binds text", i+1, a)
		}
		name := engine.ClickHouse.ArgName(i + 1)
		value := chparam.Escape(s)
		names[i], nameLens[i] = C.CString(name), C.size_t(len(name))
		values[i], valueLens[i] = C.CString(value), C.size_t(len(value))
		defer C.free(unsafe.Pointer(names[i]))
		defer C.free(unsafe.Pointer(values[i]))
	}
	var pn, pv **C.char
	var pnl, pvl *C.size_t
	if len(args) > 0 {
		pn, pv, pnl, pvl = &names[0], &values[0], &nameLens[0], &valueLens[0]
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.conn == nil {
		return nil, ErrClosed
	}
	if len(around) == 2 && around[0] != "" {
		if _, err := x.query(around[0], "Null", nil, nil, nil, nil, 0); err != nil {
			return nil, err
		}
		defer x.query(around[1], "Null", nil, nil, nil, nil, 0) //nolint:errcheck // a failure shows on the next statement
	}
	out, err := x.query(query, format, pn, pnl, pv, pvl, len(args))
	if err != nil {
		return nil, err
	}
	return out, ctx.Err()
}

// query runs one statement on the connection; x.mu is held.
func (x *Executor) query(query, format string, pn **C.char, pnl *C.size_t, pv **C.char, pvl *C.size_t, n int) ([]byte, error) {
	cq, cf := C.CString(query), C.CString(format)
	defer C.free(unsafe.Pointer(cq))
	defer C.free(unsafe.Pointer(cf))
	res := C.chdb_query_with_params_n(*x.conn, cq, C.size_t(len(query)), cf, C.size_t(len(format)),
		pn, pnl, pv, pvl, C.size_t(n))
	if res == nil {
		return nil, errors.New("chdb: the query returned no result")
	}
	defer C.chdb_destroy_query_result(res)
	if msg := C.chdb_result_error(res); msg != nil {
		text := C.GoString(msg)
		if strings.Contains(text, "TIMEOUT_EXCEEDED") || strings.Contains(text, "Timeout exceeded") {
			return nil, fmt.Errorf("chdb: %s: %w", text, context.DeadlineExceeded)
		}
		return nil, queryError(text)
	}
	size := C.chdb_result_length(res)
	if size == 0 {
		return nil, nil
	}
	return C.GoBytes(unsafe.Pointer(C.chdb_result_buffer(res)), C.int(size)), nil
}

// compact is ClickHouse's JSONCompact output, whose statistics are what
// the engine read to answer.
type compact struct {
	Meta []struct {
		Name string `json:"name"`
		Type string `json:"type"`
	} `json:"meta"`
	Data       [][]json.RawMessage `json:"data"`
	Statistics *struct {
		RowsRead  *int64 `json:"rows_read"`
		BytesRead *int64 `json:"bytes_read"`
	} `json:"statistics"`
}

// decode reads JSONCompact output into a Result: at most b.MaxRows rows
// (all when 0), failing once they weigh more than b.MaxBytes (when set).
func decode(out []byte, b driver.Bounds) (*driver.Result, error) {
	res := &driver.Result{Columns: []string{}, Types: []string{}, Rows: [][]any{}}
	if len(out) == 0 {
		return res, nil
	}
	var c compact
	if err := json.Unmarshal(out, &c); err != nil {
		return nil, fmt.Errorf("chdb: reading the answer: %w", err)
	}
	for _, m := range c.Meta {
		res.Columns = append(res.Columns, m.Name)
		res.Types = append(res.Types, m.Type)
	}
	if c.Statistics != nil {
		res.RowsRead, res.BytesRead = c.Statistics.RowsRead, c.Statistics.BytesRead
	}
	var size int64
	for _, raw := range c.Data {
		if b.MaxRows > 0 && len(res.Rows) >= b.MaxRows {
			break
		}
		row := make([]any, len(raw))
		for i, v := range raw {
			val, err := value(res.Types[i], v)
			if err != nil {
				return nil, fmt.Errorf("chdb: column %s: %w", res.Columns[i], err)
			}
			row[i] = val
		}
		if size += driver.RowBytes(row); b.MaxBytes > 0 && size > b.MaxBytes {
			return nil, fmt.Errorf("chdb: %w: more than %d bytes", driver.ErrResultTooLarge, b.MaxBytes)
		}
		res.Rows = append(res.Rows, row)
	}
	return res, nil
}

// value converts one JSON value of a column of type typ.
func value(typ string, raw json.RawMessage) (any, error) {
	if string(raw) == "null" {
		return nil, nil
	}
	base := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(typ, "Nullable("), "LowCardinality("), ")")
	switch {
	case strings.HasPrefix(base, "Int"), strings.HasPrefix(base, "UInt"):
		var s json.Number
		if err := json.Unmarshal(unquote(raw), &s); err != nil {
			return nil, err
		}
		if n, err := s.Int64(); err == nil {
			return n, nil
		}
		return s.String(), nil
	case strings.HasPrefix(base, "Float"), strings.HasPrefix(base, "Decimal"):
		var f float64
		err := json.Unmarshal(unquote(raw), &f)
		return f, err
	case base == "Bool":
		var b bool
		err := json.Unmarshal(raw, &b)
		return b, err
	case strings.HasPrefix(base, "DateTime"), strings.HasPrefix(base, "Date"):
		// ISO 8601 UTC (date_time_output_format, see session); a Date is
		// its day.
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		layout := time.RFC3339Nano
		if !strings.HasPrefix(base, "DateTime") {
			layout = time.DateOnly
		}
		return time.Parse(layout, s)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return string(raw), nil
	}
	return s, nil
}

// unquote strips the quotes ClickHouse puts around 64-bit integers.
func unquote(raw json.RawMessage) json.RawMessage {
	if len(raw) >= 2 && raw[0] == '"' {
		return raw[1 : len(raw)-1]
	}
	return raw
}
