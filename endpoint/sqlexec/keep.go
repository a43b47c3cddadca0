package sqlexec

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/internal/lru"
	"github.com/endpointkit/endpointkit/sql/engine"
)

// KeepStatements makes every connection of the pool Open opens keep the
// statements its runs prepare, up to n of them (n <= 0: DefaultStatements),
// the least recently used closed first, and close them before the
// connection closes. An Executor whose run pool keeps statements (New's,
// or WithReadOnly's pool), unless WithStatements keeps none, runs a plain
// query (one that needs neither a held transaction nor limits set on its
// connection) on a kept statement of the connection it gets, through the
// driver directly: without database/sql's statement and rows, and without
// the goroutine database/sql starts for every query under a context that
// can end, which cost a cheap query on SQLite more than the query itself
// (BenchmarkQuerySQLite's kept side). The driver still watches the context
// while the query starts, and the Executor checks it between rows, where
// database/sql closes the rows of an ended context.
//
// The connections the driver returns are wrapped: code that asks for the
// driver's own connection (sql.Conn.Raw), such as modernc.org/sqlite's
// Limit, gets the wrapper. WithSQLiteLimits therefore needs a pool that
// does not keep statements; an Executor given both fails every run with
// ErrLimitsOnKeptPool rather than run without its limits.
//
// KeepStatements is for SQLite (engine.SQLite), where what it saves is
// most of a cheap query's cost: Open fails with ErrKeepStatementsEngine
// for any other engine. On PostgreSQL, pgx makes every statement it
// prepares on a connection with the same text one server statement, so a
// kept statement and database/sql's of the same text (a run with a time
// limit is guarded, and runs through database/sql) keep each other alive:
// after a schema change the one closed is prepared again as the same
// stale statement, and the run fails ("cached plan must not change result
// type") where the Executor would prepare it anew; and on a client-server
// engine the round trip costs far more than what it saves.
func KeepStatements(n int) OpenOption {
	return func(o *openOptions) { o.keep = max(n, 0); o.keeping = true }
}

// ErrLimitsOnKeptPool is the error of the runs of an Executor given
// WithSQLiteLimits and a run pool opened with KeepStatements, whose
// connections the LimitFunc cannot reach.
var ErrLimitsOnKeptPool = errors.New("sqlexec: WithSQLiteLimits needs the driver's own connections, but the run pool was opened with KeepStatements, which wraps them")

// ErrKeepStatementsEngine is Open's error when KeepStatements is given for
// an engine other than SQLite.
var ErrKeepStatementsEngine = errors.New("sqlexec: KeepStatements is for SQLite only")

// checkKeep refuses KeepStatements for engine e when it is not embedded
// (engine.Engine.Embedded: SQLite).
func checkKeep(e engine.Engine) error {
	if e == nil || !e.Embedded() {
		return fmt.Errorf("%w, not engine %v", ErrKeepStatementsEngine, e)
	}
	return nil
}

// keepingConnector is KeepStatements' connector: its connections keep
// their statements.
type keepingConnector struct {
	sqldriver.Connector
	max int
}

// Connect implements sqldriver.Connector.
func (k *keepingConnector) Connect(ctx context.Context) (sqldriver.Conn, error) {
	c, err := k.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return newKeptConn(c, k.max), nil
}

// Driver implements sqldriver.Connector: the driver, marked as one whose
// connections keep their statements (see keeps).
func (k *keepingConnector) Driver() sqldriver.Driver {
	return keepingDriver{Driver: k.Connector.Driver(), max: k.max}
}

// Close closes the wrapped connector when it has resources of its own, as
// sql.DB.Close expects of a connector.
func (k *keepingConnector) Close() error {
	if c, ok := k.Connector.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// keepingDriver is the driver a keeping pool reports (sql.DB.Driver).
type keepingDriver struct {
	sqldriver.Driver
	max int
}

// Open implements sqldriver.Driver.
func (d keepingDriver) Open(name string) (sqldriver.Conn, error) {
	c, err := d.Driver.Open(name)
	if err != nil {
		return nil, err
	}
	return newKeptConn(c, d.max), nil
}

// keeps tells whether db's connections keep their statements (a pool
// opened with KeepStatements).
func keeps(db *sql.DB) bool {
	if db == nil {
		return false
	}
	_, ok := db.Driver().(keepingDriver)
	return ok
}

// keptConn is a connection that keeps the statements its runs prepare.
// database/sql uses a connection from one goroutine at a time, and closes
// it when none uses it, so its statements need no lock.
type keptConn struct {
	sqldriver.Conn
	stmts *lru.Cache[string, sqldriver.Stmt]
	// closeErr is the first error of closing a statement the cache let
	// go, which Close returns.
	closeErr error
	// interrupt stops the connection's statement (WithInterrupt), found
	// on its first run.
	interrupt func()
	// limited is the length limit set on the connection
	// (WithSQLiteConnLimits), 0 before its first run.
	limited int
}

func newKeptConn(c sqldriver.Conn, max int) *keptConn {
	if max == 0 {
		max = DefaultStatements
	}
	k := &keptConn{Conn: c}
	k.stmts = lru.New(int64(max), k.closeStmt)
	return k
}

// closeStmt closes a statement the cache let go.
func (c *keptConn) closeStmt(_ string, s sqldriver.Stmt) {
	if err := s.Close(); err != nil && c.closeErr == nil {
		c.closeErr = fmt.Errorf("sqlexec: closing a kept statement: %w", err)
	}
}

// Close implements sqldriver.Conn: the kept statements first, then the
// connection.
func (c *keptConn) Close() error {
	c.stmts.RemoveFunc(func(string, sqldriver.Stmt) bool { return true }) // closes each
	return errors.Join(c.closeErr, c.Conn.Close())
}

// statement returns the kept statement of query, prepared now when there
// is none (fresh).
func (c *keptConn) statement(ctx context.Context, query string) (s sqldriver.Stmt, fresh bool, err error) {
	if s, ok := c.stmts.Get(query); ok {
		return s, false, nil
	}
	if s, err = c.PrepareContext(ctx, query); err != nil {
		return nil, false, err
	}
	c.stmts.Add(query, s, 1) // max is at least 1: always kept
	return s, true, nil
}

// drop closes the kept statement of query, as after a failure: it may
// have been prepared against a schema that has changed since.
func (c *keptConn) drop(query string) { c.stmts.Remove(query) }

// The optional interfaces of database/sql/driver, passed to the wrapped
// connection, or answered as database/sql does without them.

// PrepareContext implements sqldriver.ConnPrepareContext.
func (c *keptConn) PrepareContext(ctx context.Context, query string) (sqldriver.Stmt, error) {
	if p, ok := c.Conn.(sqldriver.ConnPrepareContext); ok {
		return p.PrepareContext(ctx, query)
	}
	return c.Conn.Prepare(query)
}

// BeginTx implements sqldriver.ConnBeginTx.
func (c *keptConn) BeginTx(ctx context.Context, opts sqldriver.TxOptions) (sqldriver.Tx, error) {
	if b, ok := c.Conn.(sqldriver.ConnBeginTx); ok {
		return b.BeginTx(ctx, opts)
	}
	if opts.ReadOnly || opts.Isolation != 0 {
		return nil, errors.New("sqlexec: the driver's connections take no transaction options")
	}
	return c.Conn.Begin() //nolint:staticcheck // the fallback for drivers without ConnBeginTx
}

// ExecContext implements sqldriver.ExecerContext.
func (c *keptConn) ExecContext(ctx context.Context, query string, args []sqldriver.NamedValue) (sqldriver.Result, error) {
	if x, ok := c.Conn.(sqldriver.ExecerContext); ok {
		return x.ExecContext(ctx, query, args)
	}
	return nil, sqldriver.ErrSkip
}

// QueryContext implements sqldriver.QueryerContext.
func (c *keptConn) QueryContext(ctx context.Context, query string, args []sqldriver.NamedValue) (sqldriver.Rows, error) {
	if q, ok := c.Conn.(sqldriver.QueryerContext); ok {
		return q.QueryContext(ctx, query, args)
	}
	return nil, sqldriver.ErrSkip
}

// Ping implements sqldriver.Pinger.
func (c *keptConn) Ping(ctx context.Context) error {
	if p, ok := c.Conn.(sqldriver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

// ResetSession implements sqldriver.SessionResetter.
func (c *keptConn) ResetSession(ctx context.Context) error {
	if r, ok := c.Conn.(sqldriver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

// IsValid implements sqldriver.Validator.
func (c *keptConn) IsValid() bool {
	if v, ok := c.Conn.(sqldriver.Validator); ok {
		return v.IsValid()
	}
	return true
}

// CheckNamedValue implements sqldriver.NamedValueChecker.
func (c *keptConn) CheckNamedValue(nv *sqldriver.NamedValue) error {
	if ch, ok := c.Conn.(sqldriver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	return sqldriver.ErrSkip
}

// namedValues converts args as database/sql converts a query's arguments
// for the driver: a sql.NamedArg gives its name, the statement's or the
// connection's NamedValueChecker converts a value when it has one, and
// sqldriver.DefaultParameterConverter (which calls a sqldriver.Valuer) when it
// has none or skips it; the number of arguments is checked against the
// statement's.
func namedValues(c *keptConn, s sqldriver.Stmt, args []any) ([]sqldriver.NamedValue, error) {
	if want := s.NumInput(); want >= 0 && want != len(args) {
		return nil, fmt.Errorf("sql: expected %d arguments, got %d", want, len(args))
	}
	checker, _ := s.(sqldriver.NamedValueChecker)
	if checker == nil {
		checker = c
	}
	nvs := make([]sqldriver.NamedValue, len(args))
	for i, a := range args {
		nv := &nvs[i]
		nv.Ordinal, nv.Value = i+1, a
		if na, ok := a.(sql.NamedArg); ok {
			nv.Name, nv.Value = na.Name, na.Value
		}
		err := checker.CheckNamedValue(nv)
		if errors.Is(err, sqldriver.ErrSkip) {
			nv.Value, err = sqldriver.DefaultParameterConverter.ConvertValue(nv.Value)
		}
		if err != nil {
			return nil, fmt.Errorf("sql: converting argument %s type: %w", describeArg(nv), err)
		}
	}
	return nvs, nil
}

// describeArg names an argument in an error as database/sql does: $1, or
// with name "x".
func describeArg(nv *sqldriver.NamedValue) string {
	if nv.Name == "" {
		return fmt.Sprintf("$%d", nv.Ordinal)
	}
	return fmt.Sprintf("with name %q", nv.Name)
}

// queryKept runs query, a plain run's, on a kept statement of a
// connection of the run pool, and reads its rows within b. A kept
// statement that fails to start is prepared again and started once more,
// as Query does with its own (it may have been prepared against a schema
// that has changed since); a statement that fails is not kept.
//
// A connection the driver finds broken (driver.ErrBadConn) before the
// query started is discarded, and the query runs once more on another, as
// database/sql retries it.
func (e *Executor) queryKept(ctx context.Context, query string, args []any, b driver.Bounds) (res *driver.Result, err error) {
	for retried := false; ; retried = true {
		var started bool
		res, started, err = e.queryKeptOnce(ctx, query, args, b)
		if err == nil || started || retried || !errors.Is(err, sqldriver.ErrBadConn) || ctx.Err() != nil {
			return res, err
		}
	}
}

// queryKeptOnce is queryKept on one connection; started tells whether the
// query started.
func (e *Executor) queryKeptOnce(ctx context.Context, query string, args []any, b driver.Bounds) (res *driver.Result, started bool, err error) {
	c, err := e.runs.Conn(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("sqlexec: query: %w", err)
	}
	defer c.Close()
	// An error that is driver.ErrBadConn makes database/sql close the
	// connection rather than pool it.
	err = c.Raw(func(dc any) error {
		kc, ok := dc.(*keptConn)
		if !ok {
			return fmt.Errorf("sqlexec: query: the run pool's connection is a %T, not one that keeps statements", dc)
		}
		if err := e.keptLimits(kc); err != nil {
			return err
		}
		slot, err := e.watchDriverConn(ctx, kc, true)
		if err != nil {
			return err
		}
		removed := false
		defer func() {
			if !removed { // runKept panicked: the slot is not left watched
				e.watched.remove(slot) //nolint:errcheck // the panic goes on
			}
		}()
		// A watched run is interrupted by the watch when ctx ends: the
		// driver is given ctx without its end (detached), so that it does
		// not start a goroutine of its own to watch it for every query
		// (modernc.org/sqlite does, with a channel and a progress handler:
		// most of what a cheap query cost beyond the query itself, see
		// BenchmarkServerChain). An interrupt the watch sends before the
		// statement starts, which SQLite drops, is sent again at its next
		// look (runWatch.look).
		dctx := ctx
		if slot >= 0 {
			dctx = context.WithoutCancel(ctx)
		}
		res, started, err = e.runKept(ctx, dctx, kc, query, args, b)
		// Before the connection goes back to the pool.
		removed = true
		return withStop(err, e.watched.remove(slot))
	})
	return res, started, err
}

// runKept is queryKept on the held connection kc; the driver starts the
// query under dctx, ctx itself or ctx detached from its end when the
// Executor's watch interrupts kc at ctx's end (queryKeptOnce).
func (e *Executor) runKept(ctx, dctx context.Context, kc *keptConn, query string, args []any, b driver.Bounds) (*driver.Result, bool, error) {
	for retried := false; ; retried = true {
		if err := ctx.Err(); err != nil {
			return nil, false, fmt.Errorf("sqlexec: query: %w", err)
		}
		s, fresh, err := kc.statement(dctx, query)
		if err != nil {
			return nil, false, fmt.Errorf("sqlexec: query: %w", err)
		}
		nvs, err := namedValues(kc, s, args)
		if err != nil {
			return nil, false, fmt.Errorf("sqlexec: query: %w", err)
		}
		rows, err := queryStmt(dctx, s, nvs)
		if err != nil {
			if ctx.Err() == nil && !errors.Is(err, sqldriver.ErrBadConn) {
				kc.drop(query)
				if !fresh && !retried {
					continue
				}
			}
			return nil, false, fmt.Errorf("sqlexec: query: %w", err)
		}
		res, err := e.readDriver(ctx, rows, b)
		if err != nil && ctx.Err() == nil {
			kc.drop(query)
		}
		return res, true, err
	}
}

// queryStmt starts s with args, under ctx.
func queryStmt(ctx context.Context, s sqldriver.Stmt, args []sqldriver.NamedValue) (sqldriver.Rows, error) {
	if q, ok := s.(sqldriver.StmtQueryContext); ok {
		return q.QueryContext(ctx, args)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	values := make([]sqldriver.Value, len(args))
	for i, a := range args {
		if a.Name != "" {
			return nil, errors.New("sqlexec: the driver's statements take no named arguments")
		}
		values[i] = a.Value
	}
	return s.Query(values) //nolint:staticcheck // the fallback for drivers without StmtQueryContext
}

// checkedTexts remembers the texts of runs checkQuery accepted, up to a
// number, the least recently used forgotten first, so that a kept
// statement's text is checked once, as Query's prepared ones are. It is
// safe for concurrent use.
type checkedTexts struct {
	mu    sync.RWMutex            // read-locked by a hit, which moves nothing (lru.Cache.Peek)
	texts *lru.Cache[string, int] // the text and where its checked body begins
}

func newCheckedTexts(max int) *checkedTexts {
	return &checkedTexts{texts: lru.New[string, int](int64(max), nil)}
}

// check is checkQuery(lex, query[body:]), once for each query and body.
func (c *checkedTexts) check(lex engine.Lexical, query string, body int) error {
	c.mu.RLock()
	b, ok := c.texts.Peek(query)
	c.mu.RUnlock()
	if ok && b == body {
		return nil
	}
	if err := checkQuery(lex, query[body:]); err != nil {
		return err
	}
	c.mu.Lock()
	c.texts.Add(query, body, 1)
	c.mu.Unlock()
	return nil
}
