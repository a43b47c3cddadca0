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

// Executor is an endpoint.Executor over a *sql.DB. It is safe for
// concurrent use, as *sql.DB is.
type Executor struct {
	db     *sql.DB
	engine engine.Engine
}

// New returns an Executor that runs queries on db, whose engine is e (it
// decides the SQL the Service writes).
func New(db *sql.DB, e engine.Engine) *Executor {
	return &Executor{db: db, engine: e}
}

var _ endpoint.TxExecutor = (*Executor)(nil)

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

// Query implements endpoint.Executor. Columns are the result's column
// names and Types their database type names (sql.ColumnType's
// DatabaseTypeName). Engines that type expressions only per value, as
// SQLite does for count(*), report no name; such a column is named after
// the Go type of its first non-NULL value (INTEGER, REAL, TEXT,
// BOOLEAN, TIMESTAMP), or "" when every value is NULL. Values are those of
// the driver, with []byte turned into string so that rows encode as JSON
// text rather than base64.
func (e *Executor) Query(ctx context.Context, query string, args []any) (*endpoint.Result, error) {
	rows, err := e.db.QueryContext(ctx, query, e.driverArgs(args)...)
	if err != nil {
		return nil, fmt.Errorf("sqlexec: query: %w", err)
	}
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
	for rows.Next() {
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
