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
uint64_t chdb_result_rows_read(chdb_result * result);
uint64_t chdb_result_storage_rows_read(chdb_result * result);
uint64_t chdb_result_storage_bytes_read(chdb_result * result);
void chdb_destroy_query_result(chdb_result * result);
chdb_result * chdb_stream_query_with_params_n(chdb_connection conn, const char * query, size_t query_len,
	const char * format, size_t format_len, const char * const * param_names, const size_t * param_name_lens,
	const char * const * param_values, const size_t * param_value_lens, size_t param_count);
chdb_result * chdb_stream_fetch_result(chdb_connection conn, chdb_result * result);
void chdb_stream_cancel_query(chdb_connection conn, chdb_result * result);
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/internal/chparam"
	"github.com/endpointkit/endpointkit/sql/engine"
)

// Executor runs queries on an in-process chDB. It is safe for concurrent
// use: statements of one Executor run one at a time, as a chDB connection
// runs them.
type Executor struct {
	mu   sync.Mutex
	conn *C.chdb_connection
	// session is what Open put the connection's session in: the time
	// zone, the date-time format, the memory limits and the answer's
	// format settings, the same for every query.
	session []engine.Setting
	// limits is the settings of session a query's SETTINGS clause
	// starts with when the session may no longer hold them.
	limits string
	// check is the statement that answers 1 when the session holds
	// every setting of session.
	check string
	// kept is whether the session holds every setting of session, as
	// check answered after the last statement that could change it (a
	// statement of Load or Exec); x.mu guards it. While it does, a
	// run's SETTINGS clause leaves them out and carries only what is
	// the run's own (see Query).
	kept bool
}

// DefaultMaxMemoryUsage is the memory one query may use on the engine
// (ClickHouse's max_memory_usage) unless WithMaxMemoryUsage says
// otherwise: 1 GiB.
const DefaultMaxMemoryUsage = 1 << 30

// DefaultMaxBytesBeforeExternalGroupBy is the memory a GROUP BY uses
// before it spills to disk (ClickHouse's
// max_bytes_before_external_group_by) unless
// WithMaxBytesBeforeExternalGroupBy says otherwise: half of
// DefaultMaxMemoryUsage.
const DefaultMaxBytesBeforeExternalGroupBy = DefaultMaxMemoryUsage / 2

// Option configures an Executor.
type Option func(*options)

type options struct {
	maxMemory, externalGroupBy int64
}

// WithMaxMemoryUsage sets the memory one query may use, sent with each
// query as max_memory_usage: a query past it fails with the engine's
// MEMORY_LIMIT_EXCEEDED. 0 or less lifts the limit.
func WithMaxMemoryUsage(n int64) Option {
	return func(o *options) { o.maxMemory = max(n, 0) }
}

// WithMaxBytesBeforeExternalGroupBy sets the memory a GROUP BY uses before
// it spills to disk, sent with each query as
// max_bytes_before_external_group_by. 0 or less never spills.
func WithMaxBytesBeforeExternalGroupBy(n int64) Option {
	return func(o *options) { o.externalGroupBy = max(n, 0) }
}

var _ driver.Executor = (*Executor)(nil)

// ErrClosed is returned by an Executor after Close.
var ErrClosed = errors.New("chdb: executor closed")

// Open starts chDB keeping its data in dir ("" for memory only). chDB
// runs one engine per process with one data path: open one Executor per
// process and keep it open.
//
// Open puts the connection's session in the settings every query has:
// max_memory_usage (DefaultMaxMemoryUsage, or WithMaxMemoryUsage),
// max_bytes_before_external_group_by
// (DefaultMaxBytesBeforeExternalGroupBy, or
// WithMaxBytesBeforeExternalGroupBy), session_timezone = 'UTC' and the
// answer's format settings, for the statements of Exec and Load, which
// carry none of them, and for runs (see Query).
func Open(dir string, opts ...Option) (*Executor, error) {
	o := options{maxMemory: DefaultMaxMemoryUsage, externalGroupBy: DefaultMaxBytesBeforeExternalGroupBy}
	for _, f := range opts {
		f(&o)
	}
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
	x := &Executor{conn: conn, session: sessionOf(o)}
	x.limits, x.check = limitsOf(x.session), checkOf(x.session)
	// The settings are the session's, for the statements that carry no
	// SETTINGS clause (Exec, Load: a refresh's CREATE TABLE ... AS
	// SELECT is bounded as a run is), and so that a run need not send
	// them.
	set := "SET "
	for i, s := range x.session {
		if i > 0 {
			set += ", "
		}
		set += s.Name + " = " + settingValue(s.Value)
	}
	if err := x.Load(context.Background(), set, nil); err != nil {
		x.Close()
		return nil, err
	}
	return x, nil
}

// sessionOf is what Open puts the connection's session in under o: UTC,
// as the engine's SQL assumes (engine.ClickHouse's Guard sends it with
// each query too, but statements run through Exec, such as an INSERT ...
// VALUES, cannot carry settings at their end), whatever the process's
// time zone (chDB's default, from TZ); date-times answered as ISO 8601
// UTC text, whatever a column's zone, which decode reads as time.Time;
// the memory limits; and a JSON column's values as their text (the
// decoder reads no JSON type).
func sessionOf(o options) []engine.Setting {
	return []engine.Setting{
		{Name: "session_timezone", Value: "UTC"},
		{Name: "date_time_output_format", Value: "iso"},
		{Name: "max_memory_usage", Value: strconv.FormatInt(o.maxMemory, 10)},
		{Name: "max_bytes_before_external_group_by", Value: strconv.FormatInt(o.externalGroupBy, 10)},
		{Name: "output_format_binary_write_json_as_string", Value: "1"},
	}
}

// checkOf is the statement that answers 1 when the session holds every
// setting of session, 0 when a statement changed one since.
func checkOf(session []engine.Setting) string {
	q := "SELECT "
	for i, s := range session {
		if i > 0 {
			q += " AND "
		}
		q += "getSetting(" + string(engine.ClickHouse.AppendString(nil, s.Name)) + ") = " + settingValue(s.Value)
	}
	return q
}

// limitsOf is the start of a query's SETTINGS clause when the session
// may no longer hold session: the settings of session a query reads but
// those the engine's guard writes (session_timezone) and
// date_time_output_format, which the binary answer does not use.
func limitsOf(session []engine.Setting) string {
	var q []byte
	guard := engine.ClickHouse.Guard(time.Second, false).Settings
	for _, s := range session {
		if s.Name == "date_time_output_format" || slices.ContainsFunc(guard, func(g engine.Setting) bool { return g.Name == s.Name }) {
			continue
		}
		if len(q) > 0 {
			q = append(q, ", "...)
		}
		q = append(q, s.Name...)
		q = append(q, " = "...)
		q = append(q, settingValue(s.Value)...)
	}
	return string(q)
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
// DateTime values as time.Time in UTC, and NULL as nil (see decoderOf for
// every type). RowsRead and BytesRead are the engine's statistics of the
// query. The query carries its settings in a SETTINGS clause written after
// it, not in statements of their own: the result bounds, and the settings
// of the engine's guard (engine.ClickHouse.Guard): the time limit as
// max_execution_time, and readonly last, so that a query cannot write or
// change a setting. The settings Open put the session in (the memory
// limits, session_timezone, the format settings) are the query's too:
// the clause leaves them out while the session holds them, which the
// executor asks after each statement of Exec and Load (a run, read-only,
// cannot change the session), and carries them all once a statement of
// the host's changed one, until the session holds them again.
// chDB answers in RowBinaryWithNamesAndTypes, which the executor reads
// straight into values.
//
// Where each bound is enforced: b.Timeout by the engine, as
// max_execution_time (the sooner of b.Timeout and ctx's deadline), and by
// ctx, checked before and after the statement (a call into chDB cannot be
// interrupted). b.MaxRows by the engine, as max_result_rows with
// result_overflow_mode = 'break' (it stops at the end of the block that
// reaches the bound, as at a LIMIT), and by the executor, which reads at
// most b.MaxRows rows of the answer. b.MaxBytes by the executor, which
// weighs each row as it reads it and fails at the first past the bound
// (with 'break' the engine would answer a part of the rows, not fail, so
// it is not sent the bound).
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

// read runs query with its settings and decodes its answer within b's rows
// and bytes, from chDB's buffer (decode copies what it keeps: the answer
// is not copied to Go whole first, and the strings it holds are copied
// into memory the collector does not scan, see strArena).
func (x *Executor) read(ctx context.Context, query string, args []any, b driver.Bounds) (*driver.Result, error) {
	t := timeout(ctx)
	text := func(kept bool) string { return x.withSettings(query, t, b, kept) }
	var res *driver.Result
	use := func(out string, st stats) error {
		var err error
		if res, err = decode(out, b, st.answered); err != nil {
			return err
		}
		res.RowsRead, res.BytesRead = &st.rows, &st.bytes
		return nil
	}
	if err := x.runThen(ctx, text, resultFormat, args, false, use); err != nil {
		return nil, err
	}
	return res, nil
}

// withSettings is query with its SETTINGS clause (see Query); kept is
// whether the session holds the settings Open put it in, which the
// clause then leaves out.
func (x *Executor) withSettings(query string, timeout time.Duration, b driver.Bounds, kept bool) string {
	q := make([]byte, 0, len(query)+len(x.limits)+160)
	q = append(q, query...)
	q = append(q, " SETTINGS "...)
	start := len(q)
	if !kept {
		q = append(q, x.limits...)
	}
	if b.MaxRows > 0 {
		if len(q) > start {
			q = append(q, ", "...)
		}
		q = append(q, "max_result_rows = "...)
		q = strconv.AppendInt(q, int64(b.MaxRows), 10)
		q = append(q, ", result_overflow_mode = 'break'"...)
	}
	for _, s := range engine.ClickHouse.Guard(timeout, false).Settings {
		if kept && slices.Contains(x.session, s) {
			continue
		}
		if len(q) > start {
			q = append(q, ", "...)
		}
		q = append(q, s.Name...)
		q = append(q, " = "...)
		q = append(q, settingValue(s.Value)...)
	}
	return string(q)
}

// Exec implements driver.Executor. chDB has no transactions: the
// statements run in order whether or not w.Tx is set, and w.MaxBytes is
// not counted (the Service measures a stored table once built) (the ClickHouse
// engine's Swap, an EXCHANGE TABLES, is atomic on its own and never asks
// for one). Each statement runs as Load runs it: ctx's deadline travels
// in its own SETTINGS clause.
func (x *Executor) Exec(ctx context.Context, stmts []driver.Statement, _ driver.Write) error {
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
// max_execution_time in the statement's own SETTINGS clause (see
// withClause: before an INSERT's data, at the end of any other statement),
// never in a statement of its own; USE, SET and SYSTEM statements, which
// take no clause and read no data, run as they are.
func (x *Executor) Load(ctx context.Context, query string, args []any) error {
	if t := timeout(ctx); t > 0 {
		query, _ = withClause(query, "max_execution_time = "+strconv.FormatInt(int64(math.Ceil(t.Seconds())), 10))
	}
	_, _, err := x.runWith(ctx, func(bool) string { return query }, "Null", args, true)
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

// drainQuery is the statement drain runs.
var drainQuery = C.CString("SELECT 1")

// drainFormat is the format drain asks for: no output of its own.
var drainFormat = C.CString("Null")

// drain runs a statement that answers nothing after one that failed; x.mu
// is held. chDB 26.5 keeps what a statement that failed while it ran had
// written of its answer (its header, rows of the blocks before the error)
// and hands it to the next statement that succeeds, before that
// statement's own answer: a query would read another's rows. The drained
// answer is dropped.
func (x *Executor) drain() {
	res := C.chdb_query_with_params_n(*x.conn, drainQuery, 8, drainFormat, 4, nil, nil, nil, nil, 0)
	if res != nil {
		C.chdb_destroy_query_result(res)
	}
}

// stats are what the engine read to answer a query (rows, bytes) and the
// rows it says it answered.
type stats struct {
	rows, bytes int64
	answered    int
}

// run executes query with its arguments as the parameters p1, p2, ....
func (x *Executor) run(ctx context.Context, query, format string, args []any) (string, stats, error) {
	return x.runWith(ctx, func(bool) string { return query }, format, args, false)
}

// runWith executes text(x.kept), built with x.mu held, with its arguments
// as the parameters p1, p2, ...; with check, it then asks whether the
// session still holds the settings Open put it in (x.kept), before
// another statement runs.
func (x *Executor) runWith(ctx context.Context, text func(kept bool) string, format string, args []any, check bool) (string, stats, error) {
	var out string
	var st stats
	err := x.runThen(ctx, text, format, args, check, func(answer string, s stats) error {
		out, st = strings.Clone(answer), s
		return nil
	})
	if err != nil {
		return "", stats{}, err
	}
	return out, st, nil
}

// runThen executes text(x.kept) as runWith does and calls use with its
// answer, in chDB's buffer, freed once use returns; x.mu is held while
// use runs.
func (x *Executor) runThen(ctx context.Context, text func(kept bool) string, format string, args []any, check bool, use func(answer string, st stats) error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("chdb: %w", err)
	}
	ps, err := paramsOf(args)
	if err != nil {
		return err
	}
	defer ps.free()
	pn, pnl, pv, pvl := ps.pointers()
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.conn == nil {
		return ErrClosed
	}
	err = x.query(text(x.kept), format, pn, pnl, pv, pvl, len(args), use)
	if check {
		// Whether or not the statement succeeded: one that failed may
		// have changed the session before it did.
		x.kept = x.holdsSession()
	}
	if err != nil {
		return err
	}
	return ctx.Err()
}

// params are a statement's arguments as chDB's parameters p1, p2, ...,
// in C memory until free.
type params struct {
	names, values       []*C.char
	nameLens, valueLens []C.size_t
}

// paramsOf is args as parameters: text only, each escaped as
// ClickHouse's parameters are.
func paramsOf(args []any) (*params, error) {
	ps := &params{
		names: make([]*C.char, 0, len(args)), values: make([]*C.char, 0, len(args)),
		nameLens: make([]C.size_t, 0, len(args)), valueLens: make([]C.size_t, 0, len(args)),
	}
	for i, a := range args {
		s, ok := a.(string)
		if !ok {
			ps.free()
			return nil, fmt.Errorf("chdb: argument %d is %T; the ClickHouse engine binds text", i+1, a)
		}
		name := engine.ClickHouse.ArgName(i + 1)
		value := chparam.Escape(s)
		ps.names, ps.nameLens = append(ps.names, C.CString(name)), append(ps.nameLens, C.size_t(len(name)))
		ps.values, ps.valueLens = append(ps.values, C.CString(value)), append(ps.valueLens, C.size_t(len(value)))
	}
	return ps, nil
}

// pointers are the arrays as chDB takes them, nil without arguments.
func (ps *params) pointers() (pn **C.char, pnl *C.size_t, pv **C.char, pvl *C.size_t) {
	if len(ps.names) > 0 {
		pn, pnl, pv, pvl = &ps.names[0], &ps.nameLens[0], &ps.values[0], &ps.valueLens[0]
	}
	return
}

// free frees the parameters' C memory.
func (ps *params) free() {
	for i := range ps.names {
		C.free(unsafe.Pointer(ps.names[i]))
		C.free(unsafe.Pointer(ps.values[i]))
	}
}

// holdsSession reports whether the session holds every setting Open put
// it in; x.mu is held. It says no when it cannot tell.
func (x *Executor) holdsSession() bool {
	var holds bool
	err := x.query(x.check, "TabSeparated", nil, nil, nil, nil, 0, func(out string, _ stats) error {
		holds = out == "1\n"
		return nil
	})
	return err == nil && holds
}

// query runs one statement on the connection and calls use with its
// answer, in chDB's buffer, which is freed once use returns (use keeps
// nothing of it); x.mu is held.
func (x *Executor) query(query, format string, pn **C.char, pnl *C.size_t, pv **C.char, pvl *C.size_t, n int, use func(answer string, st stats) error) error {
	cq, cf := C.CString(query), C.CString(format)
	defer C.free(unsafe.Pointer(cq))
	defer C.free(unsafe.Pointer(cf))
	res := C.chdb_query_with_params_n(*x.conn, cq, C.size_t(len(query)), cf, C.size_t(len(format)),
		pn, pnl, pv, pvl, C.size_t(n))
	if res == nil {
		return errors.New("chdb: the query returned no result")
	}
	defer C.chdb_destroy_query_result(res)
	if msg := C.chdb_result_error(res); msg != nil {
		x.drain()
		text := C.GoString(msg)
		if strings.Contains(text, "TIMEOUT_EXCEEDED") || strings.Contains(text, "Timeout exceeded") {
			return fmt.Errorf("chdb: %s: %w", text, context.DeadlineExceeded)
		}
		return queryError(text)
	}
	st := stats{rows: int64(C.chdb_result_storage_rows_read(res)), bytes: int64(C.chdb_result_storage_bytes_read(res)),
		answered: int(min(C.chdb_result_rows_read(res), math.MaxInt32))}
	size := C.chdb_result_length(res)
	if size == 0 {
		return use("", st)
	}
	return use(unsafe.String((*byte)(unsafe.Pointer(C.chdb_result_buffer(res))), int(size)), st)
}
