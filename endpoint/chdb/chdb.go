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
	return &Executor{conn: conn}, nil
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
// integers come back as int64, floats as float64, text as string and NULL
// as nil. RowsRead and BytesRead are the engine's statistics of the query.
func (x *Executor) Query(ctx context.Context, query string, args []any) (*driver.Result, error) {
	out, err := x.run(ctx, query, "JSONCompact", args, true)
	if err != nil {
		return nil, err
	}
	return decode(out)
}

// Exec implements driver.Executor.
func (x *Executor) Exec(ctx context.Context, query string, args []any) error {
	_, err := x.run(ctx, query, "Null", args, false)
	return err
}

// run executes query with its arguments as the parameters p1, p2, ..., with
// the settings of the engine's guard: ctx's deadline as max_execution_time,
// and readonly for a query (read), so that a query cannot write.
func (x *Executor) run(ctx context.Context, query, format string, args []any, read bool) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("chdb: %w", err)
	}
	var timeout time.Duration
	if d, ok := ctx.Deadline(); ok {
		timeout = max(time.Millisecond, time.Until(d))
	}
	var settings []string
	for _, s := range engine.ClickHouse.Guard(timeout, !read).Settings {
		settings = append(settings, s.Name+" = "+s.Value)
	}
	if len(settings) > 0 {
		query += " SETTINGS " + strings.Join(settings, ", ")
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
	cq, cf := C.CString(query), C.CString(format)
	defer C.free(unsafe.Pointer(cq))
	defer C.free(unsafe.Pointer(cf))
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
	res := C.chdb_query_with_params_n(*x.conn, cq, C.size_t(len(query)), cf, C.size_t(len(format)),
		pn, pnl, pv, pvl, C.size_t(len(args)))
	if res == nil {
		return nil, errors.New("chdb: the query returned no result")
	}
	defer C.chdb_destroy_query_result(res)
	if msg := C.chdb_result_error(res); msg != nil {
		text := C.GoString(msg)
		if strings.Contains(text, "TIMEOUT_EXCEEDED") || strings.Contains(text, "Timeout exceeded") {
			return nil, fmt.Errorf("chdb: %s: %w", text, context.DeadlineExceeded)
		}
		return nil, fmt.Errorf("chdb: %s", text)
	}
	n := C.chdb_result_length(res)
	if n == 0 {
		return nil, ctx.Err()
	}
	return C.GoBytes(unsafe.Pointer(C.chdb_result_buffer(res)), C.int(n)), ctx.Err()
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

// decode reads JSONCompact output into a Result.
func decode(out []byte) (*driver.Result, error) {
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
	for _, raw := range c.Data {
		row := make([]any, len(raw))
		for i, v := range raw {
			val, err := value(res.Types[i], v)
			if err != nil {
				return nil, fmt.Errorf("chdb: column %s: %w", res.Columns[i], err)
			}
			row[i] = val
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
