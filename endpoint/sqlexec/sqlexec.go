// Package sqlexec runs endpoint queries on a database/sql database: it is
// the endpoint.Executor for SQLite, PostgreSQL, MySQL and any other engine
// with a database/sql driver.
package sqlexec

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/engine"
)

// DefaultStatements is how many prepared statements an Executor keeps
// unless WithStatements says otherwise.
const DefaultStatements = 256

// Executor is an endpoint.Executor over a *sql.DB. It is safe for
// concurrent use, as *sql.DB is.
//
// Queries run as prepared statements, kept by their SQL text (a saved
// endpoint's rendered SQL is the same on every run that binds the same
// number of values), so that the engine parses each text once rather than
// on every run. At most WithStatements of them are kept, the least
// recently used closed first. Close closes them; the *sql.DB stays the
// caller's to close.
type Executor struct {
	db     *sql.DB
	engine engine.Engine
	stmts  *stmtCache // nil: every query is parsed again
}

// Option changes how New builds an Executor.
type Option func(*options)

type options struct{ statements int }

// WithStatements sets how many prepared statements the Executor keeps: 0
// means DefaultStatements, a negative n keeps none (each query is prepared
// by the driver as database/sql does by default).
func WithStatements(n int) Option {
	return func(o *options) { o.statements = n }
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
	e := &Executor{db: db, engine: eng}
	if o.statements > 0 {
		e.stmts = newStmtCache(o.statements)
	}
	return e
}

var (
	_ endpoint.TxExecutor = (*Executor)(nil)
	_ endpoint.RowCapper  = (*Executor)(nil)
)

// Engine implements endpoint.Executor.
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

// Query implements endpoint.Executor. Columns are the result's column
// names and Types their database type names (sql.ColumnType's
// DatabaseTypeName). Engines that type expressions only per value, as
// SQLite does for count(*), report no name; such a column is named after
// the Go type of its first non-NULL value (INTEGER, REAL, TEXT,
// BOOLEAN, TIMESTAMP), or "" when every value is NULL. Values are those of
// the driver, with []byte turned into string so that rows encode as JSON
// text rather than base64.
func (e *Executor) Query(ctx context.Context, query string, args []any) (*endpoint.Result, error) {
	return e.query(ctx, query, args, -1)
}

// QueryCapped implements endpoint.RowCapper: it is Query reading at most
// max rows (at least 1).
func (e *Executor) QueryCapped(ctx context.Context, query string, args []any, limit int) (*endpoint.Result, error) {
	return e.query(ctx, query, args, max(limit, 1))
}

// CapsRows implements endpoint.RowCapper: it holds for SQLite, which
// computes rows only as they are read, so that a query ended after its
// first rows costs what a LIMIT would. A client-server engine sends (or
// its driver drains) the rest of the rows when they are closed early, so
// there the Service's paging wrapper is cheaper.
func (e *Executor) CapsRows() bool { return e.engine.StopsEarly() }

// query runs query and reads at most max rows (all when max < 0).
func (e *Executor) query(ctx context.Context, query string, args []any, max int) (*endpoint.Result, error) {
	rows, st, err := e.start(ctx, query, e.driverArgs(args))
	if err != nil {
		return nil, fmt.Errorf("sqlexec: query: %w", err)
	}
	res, err := read(ctx, rows, max)
	if st != nil {
		// A statement that failed, other than by its context, may have
		// been prepared against a schema changed since: prepare it anew.
		e.stmts.release(st, err != nil && ctx.Err() == nil)
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

// start runs query and returns its rows and the cached statement they come
// from, which the caller releases once it has read them (nil when the query
// ran unprepared).
//
// A statement reused from the cache that fails to start is dropped and the
// query is prepared and started once more: the statement may have been
// prepared against a schema that has changed since, which PostgreSQL
// refuses once ("cached plan must not change result type") where SQLite
// prepares again by itself. A statement prepared by this call is not
// retried, so a query that is simply wrong runs once.
func (e *Executor) start(ctx context.Context, query string, args []any) (*sql.Rows, *stmtEntry, error) {
	if e.stmts == nil {
		rows, err := e.db.QueryContext(ctx, query, args...)
		return rows, nil, err
	}
	for {
		st, fresh, err := e.stmts.acquire(ctx, e.db, query)
		if err != nil {
			return nil, nil, err
		}
		if st == nil {
			// The cache is closed.
			rows, err := e.db.QueryContext(ctx, query, args...)
			return rows, nil, err
		}
		rows, err := st.stmt.QueryContext(ctx, args...)
		if err == nil {
			return rows, st, nil
		}
		e.stmts.release(st, ctx.Err() == nil)
		if fresh || ctx.Err() != nil {
			return nil, nil, err
		}
	}
}

// read reads at most max rows of rows (all when max < 0) and closes them.
func read(ctx context.Context, rows *sql.Rows, max int) (*endpoint.Result, error) {
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		return nil, fmt.Errorf("sqlexec: column types: %w", err)
	}
	res := &endpoint.Result{
		Columns: make([]string, len(cts)),
		Types:   make([]string, len(cts)),
		Rows:    [][]any{},
	}
	for i, ct := range cts {
		res.Columns[i] = ct.Name()
		res.Types[i] = ct.DatabaseTypeName()
	}
	dest := make([]any, len(cts))
	for len(res.Rows) != max && rows.Next() {
		row := make([]any, len(cts))
		for i := range row {
			dest[i] = &row[i]
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("sqlexec: scan: %w", err)
		}
		for i, v := range row {
			if b, ok := v.([]byte); ok {
				row[i] = string(b)
			}
		}
		res.Rows = append(res.Rows, row)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlexec: rows: %w", err)
	}
	if err := ctx.Err(); err != nil {
		// Some drivers end the rows quietly when ctx ends: a partial
		// result must not pass for a whole one.
		return nil, fmt.Errorf("sqlexec: %w", err)
	}
	fillTypes(res)
	return res, nil
}

// fillTypes names the types the driver left unnamed, from the values.
func fillTypes(res *endpoint.Result) {
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

// Exec implements endpoint.Executor.
func (e *Executor) Exec(ctx context.Context, query string, args []any) error {
	if _, err := e.db.ExecContext(ctx, query, e.driverArgs(args)...); err != nil {
		return fmt.Errorf("sqlexec: exec: %w", err)
	}
	return nil
}

// ExecTx implements endpoint.TxExecutor.
func (e *Executor) ExecTx(ctx context.Context, stmts []string) error {
	tx, err := e.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlexec: begin: %w", err)
	}
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("sqlexec: exec: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlexec: commit: %w", err)
	}
	return nil
}
