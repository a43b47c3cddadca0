package sqlexec

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

// DefaultSQLiteLength is the SQLITE_LIMIT_LENGTH that WithSQLiteLimits
// sets on every connection a run or Exec uses unless SQLiteLimits.Length
// says otherwise: 16 MiB, the largest string, blob or table row one
// statement may build. SQLite's own default is a billion bytes, which lets
// one small query (printf('%.*c', 999999999, 'x')) allocate a gigabyte per
// call before any time limit can stop it.
const DefaultSQLiteLength = 16 << 20

// sqliteLimitLength is SQLITE_LIMIT_LENGTH, the id sqlite3_limit takes.
const sqliteLimitLength = 0

// SQLiteLimits are the per-connection limits (sqlite3_limit) that
// WithSQLiteLimits sets on SQLite.
type SQLiteLimits struct {
	// Length is SQLITE_LIMIT_LENGTH, in bytes: the longest string or blob
	// a statement may build, and the largest row it may write. 0 means
	// DefaultSQLiteLength; a negative value leaves the connection's own.
	// A query past it fails with SQLite's "string or blob too big", which
	// the Service answers as a 400 naming this limit (ErrSQLiteLength).
	Length int
}

// LimitFunc sets limit id of the SQLite connection c to newVal and returns
// its previous value: modernc.org/sqlite's Limit has this signature. It is
// taken as an argument so that this package links no SQLite driver.
type LimitFunc func(c *sql.Conn, id, newVal int) (int, error)

// ErrSQLiteLength is the error (within a *driver.QueryError) of a run that
// built a value or row longer than SQLiteLimits.Length.
var ErrSQLiteLength = errors.New("sqlexec: the query built a string, blob or row over the SQLite length limit (sqlexec.SQLiteLimits.Length)")

// WithSQLiteLimits makes the Executor set l on each SQLite connection a
// run or an Exec uses, before the statement runs, with limit
// (modernc.org/sqlite's Limit):
//
//	x := sqlexec.New(db, engine.SQLite, sqlexec.WithSQLiteLimits(sqlite.Limit, sqlexec.SQLiteLimits{}))
//
// It bounds what one statement allocates: SQLite checks the length limit
// before it grows a value, so a query asking for a gigabyte string fails
// at once instead of allocating it. SQLite has no heap limit per
// connection (sqlite3_hard_heap_limit64 is per process, and
// modernc.org/sqlite is built without the memory statistics it needs), so
// this limit, the run's time limit and the number of runs at once are
// what bound a run's memory.
//
// The limit is set on the connection the run holds: a run on a read-only
// pool (WithReadOnly) then holds one connection and prepares its text on
// it rather than through the statement cache, which costs SQLite one
// parse per run.
func WithSQLiteLimits(limit LimitFunc, l SQLiteLimits) Option {
	return func(o *options) {
		if l.Length == 0 {
			l.Length = DefaultSQLiteLength
		}
		if l.Length < 0 {
			// Nothing to set: runs take the plain path, on no connection
			// held for them.
			o.limit, o.connLimit, o.limits = nil, nil, SQLiteLimits{}
			return
		}
		o.limit, o.connLimit, o.limits = limit, nil, l
	}
}

// ConnLimitFunc is a LimitFunc on the driver's own connection, as
// sql.Conn.Raw gives it: sqliteinterrupt.Limit for modernc.org/sqlite.
type ConnLimitFunc func(driverConn any, id, newVal int) (int, error)

// WithSQLiteConnLimits is WithSQLiteLimits through the driver's own
// connections (sqliteinterrupt.Limit for modernc.org/sqlite):
//
//	x := sqlexec.New(db, engine.SQLite, sqlexec.WithReadOnly(runs),
//		sqlexec.WithSQLiteConnLimits(sqliteinterrupt.Limit, sqlexec.SQLiteLimits{}))
//
// The limits are set once on each connection of a run pool opened with
// KeepStatements, the first time a run takes it, and kept with it for
// its life: runs on such a pool keep their statements and hold no
// connection of their own for the limits, so the length limit costs a
// run nothing. A pool that does not keep statements has them set on the
// connection each run or Exec holds, as WithSQLiteLimits does. Given
// after WithSQLiteLimits, it replaces it, and the other way round.
func WithSQLiteConnLimits(limit ConnLimitFunc, l SQLiteLimits) Option {
	return func(o *options) {
		if l.Length == 0 {
			l.Length = DefaultSQLiteLength
		}
		if l.Length < 0 {
			o.limit, o.connLimit, o.limits = nil, nil, SQLiteLimits{}
			return
		}
		o.limit, o.connLimit, o.limits = nil, limit, l
	}
}

// hasLimits tells whether the Executor sets limits on its connections.
func (e *Executor) hasLimits() bool { return e.limit != nil || e.connLimit != nil }

// limitsHeld tells whether a plain run must hold a connection of its own
// for the limits: with a LimitFunc, which only a *sql.Conn reaches, or
// with a ConnLimitFunc on a run pool that does not keep statements (a
// kept connection has them set once, see keptLimits).
func (e *Executor) limitsHeld() bool { return e.limit != nil || e.connLimit != nil && !e.kept }

// applyLimits sets the Executor's limits on c.
func (e *Executor) applyLimits(c *sql.Conn) error {
	if !e.hasLimits() || e.limits.Length < 0 {
		return nil
	}
	if e.connLimit != nil {
		return c.Raw(func(dc any) error {
			if kc, ok := dc.(*keptConn); ok {
				return e.keptLimits(kc)
			}
			return e.setConnLimits(dc)
		})
	}
	if _, err := e.limit(c, sqliteLimitLength, e.limits.Length); err != nil {
		return fmt.Errorf("sqlexec: SQLite length limit: %w", err)
	}
	return nil
}

// setConnLimits sets the Executor's limits on dc, a driver's connection,
// with its ConnLimitFunc.
func (e *Executor) setConnLimits(dc any) error {
	if _, err := e.connLimit(dc, sqliteLimitLength, e.limits.Length); err != nil {
		return fmt.Errorf("sqlexec: SQLite length limit: %w", err)
	}
	return nil
}

// keptLimits sets the Executor's limits on kc, a kept connection held for
// a run, once for its life (WithSQLiteConnLimits); nothing without a
// ConnLimitFunc. kc is held (database/sql gives it to one user at a time),
// so its mark needs no lock.
func (e *Executor) keptLimits(kc *keptConn) error {
	if e.connLimit == nil || kc.limited == e.limits.Length {
		return nil
	}
	if err := e.setConnLimits(kc.Conn); err != nil {
		return err
	}
	kc.limited = e.limits.Length
	return nil
}

// conn holds a connection of pool with the Executor's limits set on it.
func (e *Executor) conn(ctx context.Context, pool *sql.DB) (*sql.Conn, error) {
	c, err := pool.Conn(ctx)
	if err != nil {
		return nil, err
	}
	if err := e.applyLimits(c); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// execHeld is Exec on one connection of the writing pool, held with the
// Executor's limits set on it.
func (e *Executor) execHeld(ctx context.Context, stmts []driver.Statement, tx bool) error {
	c, err := e.conn(ctx, e.db)
	if err != nil {
		return fmt.Errorf("sqlexec: exec: %w", err)
	}
	defer c.Close()
	return e.execOn(ctx, c, stmts, tx)
}

// execOn runs stmts on c, in one transaction when tx is set.
func (e *Executor) execOn(ctx context.Context, c execTarget, stmts []driver.Statement, tx bool) error {
	if !tx {
		for _, st := range stmts {
			if _, err := c.ExecContext(ctx, st.SQL(), e.driverArgs(st.Args())...); err != nil {
				return fmt.Errorf("sqlexec: exec: %w", err)
			}
		}
		return nil
	}
	t, err := c.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlexec: begin: %w", err)
	}
	for _, st := range stmts {
		if _, err := t.ExecContext(ctx, st.SQL(), e.driverArgs(st.Args())...); err != nil {
			_ = t.Rollback()
			return fmt.Errorf("sqlexec: exec: %w", err)
		}
	}
	if err := t.Commit(); err != nil {
		return fmt.Errorf("sqlexec: commit: %w", err)
	}
	return nil
}

// execTarget is what runs statements: the *sql.DB, or one of its
// connections (*sql.Conn) where a session setting must hold.
type execTarget interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	BeginTx(ctx context.Context, opts *sql.TxOptions) (*sql.Tx, error)
}

// limitFault returns err as a *driver.QueryError naming the length limit
// when SQLite refused a value over it (SQLITE_TOOBIG) on an Executor that
// sets it, and err unchanged otherwise.
func (e *Executor) limitFault(err error) error {
	if err == nil || !e.hasLimits() || e.limits.Length < 0 {
		return err
	}
	var c interface{ Code() int }
	if !errors.As(err, &c) || c.Code()&0xff != sqliteTooBig {
		return err
	}
	return &driver.QueryError{
		Message: fmt.Sprintf("the query built a string, blob or row longer than %d bytes, the SQLite length limit (sqlexec.SQLiteLimits.Length)", e.limits.Length),
		Err:     errors.Join(ErrSQLiteLength, err),
	}
}

// sqliteFull is SQLITE_FULL, the error of a write past max_page_count.
const sqliteFull = 13

// execWithin is Exec with a byte bound on SQLite: it runs stmts on one
// connection of the writing pool whose PRAGMA max_page_count lets the
// database file grow by at most maxBytes (in whole pages) while they
// run, and restores it after: SQLite checks the bound as it allocates
// each page, so a statement that would write more fails with SQLITE_FULL
// at the bound, which is returned wrapping driver.ErrWriteLimit; the
// pages it wrote go back to the file's free list with its rollback.
// Pages on the free list are reused first and do not count.
func (e *Executor) execWithin(ctx context.Context, stmts []driver.Statement, tx bool, maxBytes int64) (err error) {
	defer func() { err = e.limitFault(err) }()
	c, err := e.conn(ctx, e.db)
	if err != nil {
		return fmt.Errorf("sqlexec: exec: %w", err)
	}
	defer c.Close()
	var prev, pages, size int64
	for q, dst := range map[string]*int64{"PRAGMA max_page_count": &prev, "PRAGMA page_count": &pages, "PRAGMA page_size": &size} {
		if err := c.QueryRowContext(ctx, q).Scan(dst); err != nil {
			return fmt.Errorf("sqlexec: %s: %w", q, err)
		}
	}
	bound := pages + (maxBytes+size-1)/size
	if bound >= prev {
		// Within the connection's own bound already.
		return e.execOn(ctx, c, stmts, tx)
	}
	if _, err := c.ExecContext(ctx, fmt.Sprintf("PRAGMA max_page_count = %d", bound)); err != nil {
		return fmt.Errorf("sqlexec: PRAGMA max_page_count: %w", err)
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), endTimeout)
		defer cancel()
		if _, rerr := c.ExecContext(rctx, fmt.Sprintf("PRAGMA max_page_count = %d", prev)); rerr != nil {
			// A connection left bounded must not serve another writer.
			discardConn(c)
			err = errors.Join(err, fmt.Errorf("sqlexec: restoring max_page_count: %w", rerr))
		}
	}()
	err = e.execOn(ctx, c, stmts, tx)
	var code interface{ Code() int }
	if err != nil && errors.As(err, &code) && code.Code()&0xff == sqliteFull {
		return fmt.Errorf("sqlexec: the statements grew the database past %d bytes: %w (%w)", maxBytes, driver.ErrWriteLimit, err)
	}
	return err
}
