package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
)

// prepared caches the store's prepared statements. Parsing and planning a
// statement costs SQLite more than running the indexed lookup that follows
// (half of an endpoint Get), so each fixed statement is prepared once, on
// first use rather than in New: the tables may not exist before Migrate.
// database/sql re-prepares a statement on each connection that runs it.
type prepared struct {
	mu     sync.Mutex
	stmts  map[string]*sql.Stmt
	closed bool
}

// ErrClosed is returned by a Store used after its Close.
var ErrClosed = errors.New("sqlstore: store is closed")

func (p *prepared) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// stmt returns the prepared form of query. Only reads outside a
// transaction use it: preparing needs a connection of its own, and with
// db.SetMaxOpenConns(1) a transaction holds the only one.
func (s *Store) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	p := &s.prep
	p.mu.Lock()
	st, ok := p.stmts[query]
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if ok {
		return st, nil
	}
	// Prepared without the lock, so that a slow prepare (waiting for a
	// connection) holds up no other statement; a racing twin is dropped.
	st, err := s.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: preparing a statement (has Migrate run?): %w", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		st.Close()
		return nil, ErrClosed
	}
	if twin, ok := p.stmts[query]; ok {
		st.Close()
		return twin, nil
	}
	if p.stmts == nil {
		p.stmts = make(map[string]*sql.Stmt)
	}
	p.stmts[query] = st
	return st, nil
}

// Close releases the store's prepared statements. It does not close the
// *sql.DB, which the caller owns; close that after the Store. A Store must
// not be used after Close.
func (s *Store) Close() error {
	p := &s.prep
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	var errs []error
	for _, st := range p.stmts {
		errs = append(errs, st.Close())
	}
	p.stmts = nil
	return errors.Join(errs...)
}

// row is a *sql.Row, or the error of preparing its statement.
type row struct {
	r   *sql.Row
	err error
}

// Scan implements scanner.
func (r row) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	return r.r.Scan(dest...)
}

// queryRow runs a prepared single-row read.
func (s *Store) queryRow(ctx context.Context, query string, args ...any) row {
	st, err := s.stmt(ctx, query)
	if err != nil {
		return row{err: err}
	}
	return row{r: st.QueryRowContext(ctx, args...)}
}

// query runs a prepared read.
func (s *Store) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := s.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// exec runs a prepared write of one statement, outside any transaction.
func (s *Store) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := s.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}
