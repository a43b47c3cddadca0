// Package sqlexec runs endpoint queries on a database/sql database: it is
// the driver.Executor for SQLite, PostgreSQL, MySQL and any other engine
// with a database/sql driver.
package sqlexec

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/sqltoken"
)

// DefaultStatements is how many prepared statements an Executor keeps
// unless WithStatements says otherwise.
const DefaultStatements = 256

// endTimeout bounds the statements that undo a guard (engine.Guard's End)
// once a run is over, even when its context ended.
const endTimeout = 10 * time.Second

// Executor is an driver.Executor over a *sql.DB. It is safe for
// concurrent use, as *sql.DB is.
//
// Queries run read-only, in the way the engine's Guard says: on SQLite
// with PRAGMA query_only on a connection held for the run (and turned off
// again before the connection goes back to the pool), on PostgreSQL and
// MySQL in a READ ONLY transaction. A run with a time limit (Bounds.Timeout)
// also carries it to the server: PostgreSQL's statement_timeout, MariaDB's
// max_statement_time; SQLite stops when the context ends. Exec, which
// builds materialized tables, writes.
//
// On SQLite the guard costs two statements and a transaction per run;
// WithReadOnly gives runs a pool whose connections are read-only already,
// which costs nothing per run.
//
// Queries run as prepared statements, kept by their SQL text (a saved
// endpoint's rendered SQL is the same on every run that binds the same
// number of values), so that the engine parses each text once rather than
// on every run. At most WithStatements of them are kept, the least
// recently used closed first. Close closes them; the *sql.DB stays the
// caller's to close.
type Executor struct {
	db *sql.DB
	// runs is the pool queries run on: db, or WithReadOnly's pool, whose
	// connections are read-only already (readOnly).
	runs     *sql.DB
	readOnly bool
	engine   engine.Engine
	lex      engine.Lexical
	stmts    *stmtCache // nil: every query is parsed again
	// guard is the last guard computed, by timeout: a Service passes the
	// same timeout to every run.
	guard atomic.Pointer[guardEntry]
	// limit sets limits on the connections of runs and Exec
	// (WithSQLiteLimits); nil when none are set.
	limit  LimitFunc
	limits SQLiteLimits
	// connLimit sets them through the driver's connections
	// (WithSQLiteConnLimits), once on each kept connection.
	connLimit ConnLimitFunc
	// sqlite is whether engine is SQLite, whose declared types typeName
	// renames.
	sqlite bool
	// kept is whether plain runs take the run pool's kept statements
	// (KeepStatements), and texts then the texts checkQuery accepted.
	kept  bool
	texts *checkedTexts
	// setupErr fails every run and Exec: options that cannot hold
	// together (ErrLimitsOnKeptPool).
	setupErr error
	// interrupt stops a held connection's statement (WithInterrupt), for
	// the runs watched holds.
	interrupt InterruptFunc
	watched   runWatch
}

type guardEntry struct {
	timeout time.Duration
	g       engine.Guard
	plain   bool // g asks for no held connection and no transaction
}

// Option changes how New builds an Executor.
type Option func(*options)

type options struct {
	statements int
	readOnly   *sql.DB
	limit      LimitFunc
	connLimit  ConnLimitFunc
	limits     SQLiteLimits
	interrupt  InterruptFunc
}

// WithStatements sets how many prepared statements the Executor keeps: 0
// means DefaultStatements, a negative n keeps none (each query is prepared
// by the driver as database/sql does by default).
func WithStatements(n int) Option {
	return func(o *options) { o.statements = n }
}

// WithReadOnly makes queries run on ro, a pool on the same database whose
// every connection is read-only, while Exec keeps writing through the
// *sql.DB given to New. The Executor trusts ro to be read-only and skips
// the part of the engine's guard that makes a run so (the time limit
// stays): open it so, for SQLite with modernc.org/sqlite's
// _pragma=query_only(1) in the DSN, for PostgreSQL as a user whose
// default_transaction_read_only is on, for MySQL with
// transaction_read_only=1. On SQLite this makes the guard free; on the
// client-server engines a read-only database user is the stronger
// guarantee anyway.
func WithReadOnly(ro *sql.DB) Option {
	return func(o *options) { o.readOnly = ro }
}

// New returns an Executor that runs queries on db, whose engine is eng (it
// decides the SQL the Service writes). Runs assume the session time zone is
// UTC: on PostgreSQL and MySQL open db with Open (or Connector), which sets
// it on every connection, or with a DSN that does (pgx timezone=UTC,
// go-sql-driver time_zone='+00:00'); otherwise a timestamptz or DATETIME
// column reads in the server's zone.
func New(db *sql.DB, eng engine.Engine, opts ...Option) *Executor {
	o := options{statements: DefaultStatements}
	for _, opt := range opts {
		opt(&o)
	}
	if o.statements == 0 {
		o.statements = DefaultStatements
	}
	e := &Executor{db: db, runs: db, engine: eng, lex: eng.Lexical(), limit: o.limit, connLimit: o.connLimit, limits: o.limits, sqlite: eng.Embedded(), interrupt: o.interrupt}
	if o.readOnly != nil {
		e.runs, e.readOnly = o.readOnly, true
	}
	if o.statements > 0 {
		e.stmts = newStmtCache(o.statements)
	}
	runsKeep := keeps(e.runs)
	if runsKeep && e.stmts != nil {
		e.kept, e.texts = true, newCheckedTexts(o.statements)
	}
	if e.limit != nil && e.limits.Length >= 0 && (runsKeep || keeps(e.db)) {
		e.setupErr = ErrLimitsOnKeptPool
	}
	return e
}

var _ driver.Executor = (*Executor)(nil)

// Engine implements driver.Executor.
func (e *Executor) Engine() engine.Engine { return e.engine }

// driverArgs names the arguments where the engine's parameters are named.
func (e *Executor) driverArgs(args []any) []any {
	if len(args) == 0 || e.engine.ArgName(1) == "" {
		return args
	}
	named := make([]any, len(args))
	for i, a := range args {
		named[i] = sql.Named(e.engine.ArgName(i+1), a)
	}
	return named
}

// Close closes the prepared statements the Executor keeps; those that
// queries are running on close when the queries end. Queries after Close
// still run, unprepared. It does not close the *sql.DB.
func (e *Executor) Close() error {
	if e.stmts == nil {
		return nil
	}
	return e.stmts.close()
}

// Query implements driver.Executor: it runs st read-only within b.
// Columns are the result's column names and Types their database type
// names (sql.ColumnType's DatabaseTypeName). Engines that type expressions
// only per value, as SQLite does for count(*), report no name; such a
// column is named after the Go type of its first non-NULL value (INTEGER,
// REAL, TEXT, BOOLEAN, TIMESTAMP), or "" when every value is NULL. Values
// are those of the driver, with []byte turned into string so that rows
// encode as JSON text rather than base64.
//
// Where each bound is enforced: b.MaxRows by closing the rows after that
// many (SQLite, which computes rows as they are read, stops there; a
// client-server engine's driver drains or discards the rest); b.MaxBytes
// by weighing each row as it is read, the query ended at the first row
// past it; b.Timeout by the server (PostgreSQL's statement_timeout,
// MariaDB's max_statement_time, see engine.Guard) and on SQLite by ctx,
// which the Service gives the same deadline.
func (e *Executor) Query(ctx context.Context, st driver.Statement, b driver.Bounds) (*driver.Result, error) {
	limit := b.Timeout
	if ge := e.guardFor(b.Timeout); b.Timeout > 0 && !e.sqlite && (!ge.plain || len(ge.g.Settings) > 0) {
		// The server stops the statement itself at b.Timeout, with an
		// error naming its limit; the context only backs it up. SQLite's
		// guard (a read-only transaction) sets no time limit: its runs
		// end at the context's.
		limit += serverGrace
	}
	ctx, cancel := driver.BoundContext(ctx, limit)
	defer cancel()
	return e.query(ctx, st.SQL(), st.Args(), b)
}

// serverGrace is how long past Bounds.Timeout the context of a query waits
// on an engine that ends the statement itself (engine.Guard), so that the
// server's own error, not the client's cancellation, ends it.
const serverGrace = 500 * time.Millisecond

// Read runs query, a text of the host's own with its bind markers and
// args, read-only and with no bounds but ctx's, for the host's own reads
// (the example server counts the events it loaded with it); the Service
// never calls it.
func (e *Executor) Read(ctx context.Context, query string, args []any) (*driver.Result, error) {
	return e.query(ctx, query, args, driver.Bounds{})
}

// guardFor returns the engine's guard of a run with timeout, and whether
// it is plain: no held connection, no transaction.
func (e *Executor) guardFor(timeout time.Duration) *guardEntry {
	if g := e.guard.Load(); g != nil && g.timeout == timeout {
		return g
	}
	g := e.engine.Guard(timeout, e.readOnly)
	ge := &guardEntry{timeout: timeout, g: g, plain: !g.Tx && len(g.Begin) == 0 && len(g.End) == 0}
	e.guard.Store(ge)
	return ge
}

// query runs query within b and reads its rows.
func (e *Executor) query(ctx context.Context, query string, args []any, b driver.Bounds) (res *driver.Result, err error) {
	nargs := len(args)
	defer func() { err = argFault(e.limitFault(queryFault(interruptFault(ctx, err))), nargs) }()
	ge := e.guardFor(b.Timeout)
	if len(ge.g.Settings) > 0 {
		// database/sql has no way to send settings with one query: fail
		// rather than run without them.
		return nil, fmt.Errorf("sqlexec: engine %s takes its run settings (%v) per query, which database/sql cannot send", e.engine, ge.g.Settings)
	}
	if e.setupErr != nil {
		return nil, e.setupErr
	}
	body := len(ge.g.Prefix)
	query = ge.g.Prefix + query
	args = e.driverArgs(args)
	if e.kept && ge.plain && !e.limitsHeld() {
		if err := e.texts.check(e.lex, query, body); err != nil {
			return nil, err
		}
		return e.queryKept(ctx, query, args, b)
	}
	for {
		st, fresh, err := e.statement(ctx, ge, query, body)
		if err != nil {
			return nil, err
		}
		res, started, err := e.attempt(ctx, ge, st, query, args, b)
		if st != nil {
			// A statement that failed, other than by its context, may have
			// been prepared against a schema changed since: prepare it anew.
			e.stmts.release(st, err != nil && ctx.Err() == nil)
		}
		switch {
		case err == nil:
			return res, nil
		case !started && st != nil && !fresh && ctx.Err() == nil:
			// A statement reused from the cache that fails to start is
			// prepared and started once more: it may have been prepared
			// against a schema that has changed since, which PostgreSQL
			// refuses once ("cached plan must not change result type")
			// where SQLite prepares again by itself. A statement prepared
			// by this call is not retried, so a query that is simply
			// wrong runs once.
			continue
		case !started:
			return nil, fmt.Errorf("sqlexec: query: %w", err)
		}
		return nil, err
	}
}

// attempt starts query once, on statement st when not nil, and reads its
// rows; started tells whether the query started, for a failure after that
// is the query's own and is not retried.
func (e *Executor) attempt(ctx context.Context, ge *guardEntry, st *stmtEntry, query string, args []any, b driver.Bounds) (res *driver.Result, started bool, err error) {
	if ge.plain && e.holdsConn() {
		c, err := e.conn(ctx, e.runs)
		if err != nil {
			return nil, false, err
		}
		defer c.Close()
		stop, err := e.watchConn(ctx, c)
		if err != nil {
			return nil, false, err
		}
		defer stop() // before c.Close, even on a panic
		var rows *sql.Rows
		if rows, err = c.QueryContext(ctx, query, args...); err == nil {
			started = true
			res, err = e.read(ctx, rows, b)
		}
		return res, started, withStop(err, stop())
	}
	if ge.plain {
		// No closure here: the plain path is every run's on a
		// read-only pool, and allocates nothing it does not need.
		var rows *sql.Rows
		if rows, err = startOn(ctx, e.runs, st, query, args); err == nil {
			started = true
			res, err = e.read(ctx, rows, b)
		}
		return res, started, err
	}
	err = e.guarded(ctx, ge.g, func(q querier) error {
		rows, err := startOn(ctx, q, st, query, args)
		if err != nil {
			return err
		}
		started = true
		res, err = e.read(ctx, rows, b)
		return err
	})
	return res, started, err
}

// statement checks query[body:], the text of a run past its guard's
// prefix (checkQuery), and returns the cached statement of query, held
// until released, and whether this call prepared it; nil (and no error)
// when no statements are kept or the cache is closed. A text whose
// statement is kept was checked when it was prepared, and is not checked
// again. It is prepared on the run pool before any connection is held for
// the run, so that a pool of one connection does not wait on itself.
func (e *Executor) statement(ctx context.Context, ge *guardEntry, query string, body int) (*stmtEntry, bool, error) {
	if e.stmts == nil || ge.plain && e.holdsConn() {
		// A plain run with limits or the interrupt runs on a connection
		// of its own, which a statement of the pool's cannot.
		return nil, false, checkQuery(e.lex, query[body:])
	}
	return e.stmts.acquire(ctx, e.runs, query, e.lex, body)
}

// querier is where a run's query starts: the pool, or the transaction of
// a guarded run.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// startOn starts query on q, through the cached statement st when there
// is one.
func startOn(ctx context.Context, q querier, st *stmtEntry, query string, args []any) (*sql.Rows, error) {
	if st == nil {
		return q.QueryContext(ctx, query, args...)
	}
	if tx, ok := q.(*sql.Tx); ok {
		// The statement is prepared on the held connection once and kept
		// there by database/sql for the next run that holds it.
		return tx.StmtContext(ctx, st.stmt).QueryContext(ctx, args...)
	}
	return st.stmt.QueryContext(ctx, args...)
}

// guarded runs fn under g: on a connection held for the run, in a
// transaction begun read-only in which g.Begin runs first; the transaction
// is then rolled back (a read commits nothing) and g.End runs on the
// connection, however fn ended. A connection on which the rollback or End
// fails is discarded, so that no writer of the pool gets it inside the
// transaction or read-only.
func (e *Executor) guarded(ctx context.Context, g engine.Guard, fn func(querier) error) error {
	conn, err := e.conn(ctx, e.runs)
	if err != nil {
		return err
	}
	defer conn.Close()
	stop, err := e.watchConn(ctx, conn)
	if err != nil {
		return err
	}
	defer stop() // before conn.Close, even if fn panics

	// rbErr: the rollback failed, conn may be in the transaction still.
	var stopErr, rbErr error
	err = func() error {
		txCtx := ctx
		if e.interrupt != nil {
			// database/sql rolls a transaction back by itself once its
			// context ends, while the run is still watched: an
			// interrupt reaching that ROLLBACK failed it, and left the
			// connection inside the transaction for the pool's next
			// user (a writer's statements then never committed). The
			// rollback is the run's own, once the watch stopped.
			if err := ctx.Err(); err != nil {
				return err
			}
			txCtx = context.WithoutCancel(ctx)
		}
		tx, err := conn.BeginTx(txCtx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			return err
		}
		// Rolled back once fn is done (database/sql also rolls it back
		// when ctx ends, unless watched).
		defer func() {
			if err := tx.Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
				rbErr = err
			}
		}()
		defer func() { stopErr = stop() }() // before the rollback, which no interrupt may reach
		for _, stmt := range g.Begin {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		return fn(tx)
	}()
	err = withStop(err, stopErr)
	if rbErr != nil {
		// A read-only run commits nothing, but its connection must not
		// go back to the pool inside the transaction: Raw's ErrBadConn
		// makes database/sql close it instead.
		discardConn(conn)
		return errors.Join(err, fmt.Errorf("sqlexec: end of run: rollback: %w", rbErr))
	}
	if len(g.End) > 0 {
		ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), endTimeout)
		defer cancel()
		for _, stmt := range g.End {
			if _, endErr := conn.ExecContext(ectx, stmt); endErr != nil {
				// Raw's ErrBadConn makes database/sql close the connection
				// instead of pooling it.
				discardConn(conn)
				return errors.Join(err, fmt.Errorf("sqlexec: end of run: %w", endErr))
			}
		}
	}
	return err
}

// read reads the rows within b and closes them: at most b.MaxRows of them
// (all when 0), failing once they weigh more than b.MaxBytes (when set).
//
// It allocates per run the Result, one array for its names and types,
// the cells it scans through, and the rows in blocks (see rowBlocks). A
// result of at most smallColumns columns has its Result, names, cells and
// first row in one allocation (smallResult).
func (e *Executor) read(ctx context.Context, rows *sql.Rows, b driver.Bounds) (*driver.Result, error) {
	if sink := sinkOf(ctx); sink != nil {
		return e.readEach(ctx, rows, b, sink)
	}
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		return nil, fmt.Errorf("sqlexec: column types: %w", err)
	}
	res, rb, cells := newResult(len(cts), b)
	for i, ct := range cts {
		res.Columns[i] = ct.Name()
		res.Types[i] = e.typeName(ct.DatabaseTypeName())
	}
	dest := make([]any, len(cells))
	for i := range cells {
		dest[i] = &cells[i]
	}
	for rb.more(res) && rows.Next() {
		row := rb.next(res)
		for i := range cells {
			cells[i].v = &row[i]
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("sqlexec: scan: %w", err)
		}
		if err := rb.add(res, row); err != nil {
			return nil, err
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlexec: rows: %w", err)
	}
	return finish(ctx, res)
}

// readDriver is read for the rows of a driver's statement (a kept
// statement, see KeepStatements): the values as the driver gives them,
// but a []byte, which the driver may reuse for the next row, as a string;
// ctx is checked before each row, where database/sql would close the rows
// of an ended context.
func (e *Executor) readDriver(ctx context.Context, rows sqldriver.Rows, b driver.Bounds) (*driver.Result, error) {
	if sink := sinkOf(ctx); sink != nil {
		return e.readDriverEach(ctx, rows, b, sink)
	}
	defer rows.Close()
	names := rows.Columns()
	res, rb, _ := newResult(len(names), b)
	copy(res.Columns, names)
	if tn, ok := rows.(sqldriver.RowsColumnTypeDatabaseTypeName); ok {
		for i := range res.Types {
			res.Types[i] = e.typeName(tn.ColumnTypeDatabaseTypeName(i))
		}
	}
	done := ctx.Done()
	dest := make([]sqldriver.Value, len(names))
	for rb.more(res) {
		select {
		case <-done:
			return nil, fmt.Errorf("sqlexec: %w", ctx.Err())
		default:
		}
		if err := rows.Next(dest); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("sqlexec: rows: %w", err)
		}
		row := rb.next(res)
		for i, v := range dest {
			row[i] = resultValue(v)
		}
		if err := rb.add(res, row); err != nil {
			return nil, err
		}
	}
	return finish(ctx, res)
}

// finish checks that ctx did not end the rows early, and names the types
// the driver left unnamed.
func finish(ctx context.Context, res *driver.Result) (*driver.Result, error) {
	if err := ctx.Err(); err != nil {
		// Some drivers end the rows quietly when ctx ends: a partial
		// result must not pass for a whole one.
		return nil, fmt.Errorf("sqlexec: %w", err)
	}
	fillTypes(res)
	return res, nil
}

// newResult allocates the Result of n columns (its Columns and Types
// made, to be filled), the blocks its rows are cut from, and n cells to
// scan through.
func newResult(n int, b driver.Bounds) (*driver.Result, *rowBlocks, []cell) {
	var (
		res   *driver.Result
		names []string
		cells []cell
		rb    *rowBlocks
	)
	if n <= smallColumns {
		// One allocation for the Result, its names and types, the cells,
		// the blocks and the first row.
		s := &smallResult{}
		res, names, cells, rb = &s.res, s.names[:2*n], s.cells[:n], &s.blocks
		res.Rows = s.rows[:0:1]
		rb.block, rb.grow = s.first[:n], 2
	} else {
		res, names, cells = &driver.Result{Rows: [][]any{}}, make([]string, 2*n), make([]cell, n)
		rb = &rowBlocks{grow: 1}
	}
	rb.n, rb.b = n, b
	res.Columns, res.Types = names[:n:n], names[n:2*n:2*n]
	return res, rb, cells
}

// rowBlocks cuts a result's rows from blocks, one row, then two, four, up
// to maxBlock, never more than b.MaxRows in all, not one slice per row;
// each row is its own slice of a block, capped at its length. It counts
// the rows' bytes against b.MaxBytes.
type rowBlocks struct {
	block []any // what is left of the current block
	grow  int   // rows in the next block
	n     int   // values a row
	size  int64 // the rows' bytes so far
	b     driver.Bounds
}

// more tells whether res may take another row.
func (rb *rowBlocks) more(res *driver.Result) bool {
	return rb.b.MaxRows <= 0 || len(res.Rows) < rb.b.MaxRows
}

// next returns the next row to fill.
func (rb *rowBlocks) next(res *driver.Result) []any {
	n := rb.n
	if len(rb.block) < n || n == 0 {
		k := rb.grow
		if rb.b.MaxRows > 0 {
			k = min(k, rb.b.MaxRows-len(res.Rows))
		}
		rb.block = make([]any, k*n)
		rb.grow = min(2*rb.grow, maxBlock)
	}
	row := rb.block[:n:n]
	rb.block = rb.block[n:]
	return row
}

// add appends the filled row to res, failing once the rows weigh more
// than b.MaxBytes.
func (rb *rowBlocks) add(res *driver.Result, row []any) error {
	if rb.b.MaxBytes > 0 {
		if rb.size += driver.RowBytes(row); rb.size > rb.b.MaxBytes {
			return fmt.Errorf("sqlexec: %w (%d bytes)", driver.ErrResultTooLarge, rb.b.MaxBytes)
		}
	}
	res.Rows = append(res.Rows, row)
	return nil
}

// maxBlock is the most rows read allocates at once.
const maxBlock = 64

// smallColumns is the widest result whose Result, names, types, cells and
// first row read allocates at once, as a smallResult.
const smallColumns = 4

// smallResult is the one allocation of a result of at most smallColumns
// columns: what read would otherwise allocate apart.
type smallResult struct {
	res    driver.Result
	names  [2 * smallColumns]string
	cells  [smallColumns]cell
	blocks rowBlocks
	rows   [1][]any
	first  [smallColumns]any
}

// cell is where read scans one value (a sql.Scanner): it stores the
// driver's value in *v as it is, but a []byte, which the driver may reuse
// for the next row, as a string, copied once (a *any destination would be
// given a copy of the bytes, to be copied again into a string), so that
// rows encode as JSON text rather than base64.
type cell struct{ v *any }

// Scan implements sql.Scanner.
func (c *cell) Scan(src any) error {
	*c.v = resultValue(src)
	return nil
}

// resultValue is the value a Result holds for the driver's value v: v
// itself, but a []byte, which the driver may reuse for the next row, as a
// string (text in JSON rather than base64).
func resultValue(v any) any {
	if raw, ok := v.([]byte); ok {
		return string(raw)
	}
	return v
}

// fillTypes names the types the driver left unnamed, from the values.
func fillTypes(res *driver.Result) {
	for i, t := range res.Types {
		if t != "" {
			continue
		}
		for _, row := range res.Rows {
			if name := typeOf(row[i]); name != "" {
				res.Types[i] = name
				break
			}
		}
	}
}

func typeOf(v any) string {
	switch v.(type) {
	case int64, int32, int, int16, int8, uint64, uint32, uint16, uint8:
		return "INTEGER"
	case float64, float32:
		return "REAL"
	case string:
		return "TEXT"
	case bool:
		return "BOOLEAN"
	case time.Time:
		return "TIMESTAMP"
	}
	return ""
}

// Exec implements driver.Executor: the statements run on the *sql.DB
// given to New (never the read-only pool of WithReadOnly), in one
// transaction when w.Tx is set. w.MaxBytes is counted on SQLite (see
// execWithin); on the other engines the Service measures the table once
// built.
func (e *Executor) Exec(ctx context.Context, stmts []driver.Statement, w driver.Write) (err error) {
	if e.setupErr != nil {
		return e.setupErr
	}
	if w.MaxBytes > 0 && e.sqlite {
		return e.execWithin(ctx, stmts, w.Tx, w.MaxBytes)
	}
	tx := w.Tx
	defer func() { err = e.limitFault(err) }()
	if e.hasLimits() {
		return e.execHeld(ctx, stmts, tx)
	}
	return e.execOn(ctx, e.db, stmts, tx)
}

// Load runs query, a statement of the host's own with its bind markers
// and args, on the *sql.DB given to New: for the host's own statements,
// such as loading data; the Service never calls it.
func (e *Executor) Load(ctx context.Context, query string, args []any) error {
	if _, err := e.db.ExecContext(ctx, query, e.driverArgs(args)...); err != nil {
		return fmt.Errorf("sqlexec: exec: %w", err)
	}
	return nil
}

// errNotQuery is the error of a Query whose text does not begin as a
// query does.
var errNotQuery = errors.New("sqlexec: Query runs only a statement that begins with SELECT, WITH, VALUES or '('")

// checkQuery refuses a text whose first token, past spaces and comments
// as the engine reads them (sql/sqltoken with the engine's Lexical),
// is not the word SELECT, WITH or VALUES (or a parenthesis): the engine's
// read-only transaction is the guard against writes inside a query, but
// MySQL and MariaDB commit DDL at once, which ends that transaction first,
// so a DROP or CREATE that reached Query would run. Comments that an
// engine executes (MySQL's /*! */, MariaDB's /*M! */) count as text, not
// comments, as does a comment left open; an optimizer hint (/*+ */) is a
// comment where it does not follow a statement's first keyword.
func checkQuery(lex engine.Lexical, q string) error {
	var sc sqltoken.Scanner
	sc.Reset(lex, q)
	for {
		t, ok := sc.Next()
		switch {
		case !ok:
			return errNotQuery
		case t.Kind == sqltoken.Comment:
			if t.Is(sqltoken.Unclosed) || t.Why == sqltoken.ExecutableComment && !strings.HasPrefix(t.Text(q), "/*+") {
				return errNotQuery
			}
			continue
		case t.Kind == sqltoken.Punct && q[t.Start] == '(':
			return nil
		case t.Kind == sqltoken.Word:
			if w := t.Text(q); isWord(w, "select") || isWord(w, "with") || isWord(w, "values") {
				return nil
			}
		}
		return errNotQuery
	}
}

// isWord tells whether w is the lower-case ASCII word kw in any case, as
// strings.ToLower(w) == kw does but without allocating; unlike
// strings.EqualFold, no other letter folds to an ASCII one (ſ is not s).
func isWord(w, kw string) bool {
	if len(w) != len(kw) {
		return false
	}
	for i := 0; i < len(w); i++ {
		if c := w[i]; c != kw[i] && c+('a'-'A') != kw[i] {
			return false
		}
	}
	return true
}

// sqliteDeclared are the type names SQLite declares for the columns of a
// table made by CREATE TABLE ... AS SELECT (a stored table), by the
// affinity of the expression, with the names it reports for the same
// affinity elsewhere: an integer column reads INTEGER whether the answer
// came from the source or from a stored table.
var sqliteDeclared = map[string]string{"INT": "INTEGER", "NUM": "NUMERIC"}

// typeName is the type name a Result reports for a column the driver
// names name.
func (e *Executor) typeName(name string) string {
	if e.sqlite {
		if n, ok := sqliteDeclared[name]; ok {
			return n
		}
	}
	return name
}

// discardConn makes database/sql close c once it is released rather than
// pool it: Raw's driver.ErrBadConn does.
func discardConn(c *sql.Conn) {
	_ = c.Raw(func(any) error { return sqldriver.ErrBadConn })
}
