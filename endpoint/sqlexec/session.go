package sqlexec

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/endpointkit/endpointkit/sql/engine"
)

// Open opens a pool on dsn with the database/sql driver driverName, as
// sql.Open does, whose every connection is put in the session that engine
// e's SQL assumes before it serves a query (see Connector): on PostgreSQL
// and MySQL, the UTC time zone. Use it for the analytics database of New
// unless the DSN or the server already sets the session so.
//
// Options add statements of the host's own to every connection's session
// (WithSession), such as the memory bounds of the engine's sessions.
func Open(driverName, dsn string, e engine.Engine, opts ...OpenOption) (*sql.DB, error) {
	var o openOptions
	for _, opt := range opts {
		opt(&o)
	}
	if o.keeping {
		if err := checkKeep(e); err != nil {
			return nil, err
		}
	}
	probe, err := sql.Open(driverName, dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlexec: open: %w", err)
	}
	stmts := slices.Concat(sessionOf(e), o.session)
	if len(stmts) == 0 && !o.keeping {
		return probe, nil
	}
	drv := probe.Driver()
	if err := probe.Close(); err != nil {
		return nil, fmt.Errorf("sqlexec: open: %w", err)
	}
	var c driver.Connector = dsnConnector{drv: drv, dsn: dsn}
	if dc, ok := drv.(driver.DriverContext); ok {
		if c, err = dc.OpenConnector(dsn); err != nil {
			return nil, fmt.Errorf("sqlexec: open: %w", err)
		}
	}
	if len(stmts) > 0 {
		c = &sessionConnector{Connector: c, stmts: stmts}
	}
	if o.keeping {
		c = &keepingConnector{Connector: c, max: o.keep}
	}
	return sql.OpenDB(c), nil
}

// OpenOption changes how Open opens a pool.
type OpenOption func(*openOptions)

type openOptions struct {
	session []string
	// keeping is whether connections keep their statements
	// (KeepStatements), up to keep of them.
	keeping bool
	keep    int
}

// WithSession runs stmts, statements of the host's own that take no
// arguments, on every new connection after the engine's session
// statements: a connection whose statement fails is closed and its error
// returned. Use it for the bounds an engine sets per session, for example
// on PostgreSQL "SET work_mem = '32MB'" (memory of each sort or hash
// before it spills to disk), and on MySQL "SET SESSION max_execution_time
// = 30000", "SET SESSION tmp_table_size = 33554432" and "SET SESSION
// max_heap_table_size = 33554432" (in-memory temporary tables, which then
// go to disk). Settings only a superuser may change (PostgreSQL's
// temp_file_limit) belong on the database user instead (ALTER ROLE ... SET).
func WithSession(stmts ...string) OpenOption {
	return func(o *openOptions) { o.session = append(o.session, stmts...) }
}

// Connector returns a connector that opens connections with c and runs
// engine e's session statements (engine.Session) on each before handing it
// to database/sql, so that every query of the pool sees the session the
// engine's SQL assumes, whatever the server's defaults. It costs one
// statement per new connection and nothing per query. A connection whose
// session cannot be set is closed and its error returned. For an engine
// without session statements it returns c.
func Connector(c driver.Connector, e engine.Engine) driver.Connector {
	stmts := sessionOf(e)
	if stmts == nil {
		return c
	}
	return &sessionConnector{Connector: c, stmts: stmts}
}

// sessionOf returns the engine's session statements, nil when it has
// none.
func sessionOf(e engine.Engine) []string {
	if s, ok := e.(engine.Session); ok {
		if stmts := s.Session(); len(stmts) > 0 {
			return stmts
		}
	}
	return nil
}

// sessionConnector is Connector's connector.
type sessionConnector struct {
	driver.Connector
	stmts []string
}

// Connect implements driver.Connector.
func (s *sessionConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := s.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	for _, q := range s.stmts {
		if err := execConn(ctx, conn, q); err != nil {
			conn.Close()
			return nil, fmt.Errorf("sqlexec: session %q: %w", q, err)
		}
	}
	return conn, nil
}

// Close closes the wrapped connector when it has resources of its own, as
// sql.DB.Close expects of a connector.
func (s *sessionConnector) Close() error {
	if c, ok := s.Connector.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// execConn runs q, which takes no arguments, on conn.
func execConn(ctx context.Context, conn driver.Conn, q string) error {
	if ex, ok := conn.(driver.ExecerContext); ok {
		_, err := ex.ExecContext(ctx, q, nil)
		if !errors.Is(err, driver.ErrSkip) {
			return err
		}
	}
	var (
		st  driver.Stmt
		err error
	)
	if p, ok := conn.(driver.ConnPrepareContext); ok {
		st, err = p.PrepareContext(ctx, q)
	} else {
		st, err = conn.Prepare(q)
	}
	if err != nil {
		return err
	}
	defer st.Close()
	if sc, ok := st.(driver.StmtExecContext); ok {
		_, err = sc.ExecContext(ctx, nil)
		return err
	}
	_, err = st.Exec(nil) //nolint:staticcheck // the fallback for drivers without StmtExecContext
	return err
}

// dsnConnector opens connections of a driver that has no connectors of
// its own, as sql.Open does for it.
type dsnConnector struct {
	drv driver.Driver
	dsn string
}

func (c dsnConnector) Connect(context.Context) (driver.Conn, error) { return c.drv.Open(c.dsn) }

func (c dsnConnector) Driver() driver.Driver { return c.drv }
