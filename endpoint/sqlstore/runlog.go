package sqlstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math/bits"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/sql/engine"
)

// logPruneEvery is how many appends to one endpoint's log (by this
// process) pass at least between two prunings of it, and half of
// MaxPerEndpoint when that is more (logPruneSlack): the log may hold that
// many entries over its bound for a while (List never shows them), and a
// busy endpoint is not pruned every few runs.
const logPruneEvery = 32

// logPruneSlack divides MaxPerEndpoint into the appends between two
// prunings of an endpoint's log (when more than logPruneEvery). A pruning
// finds a key no newer than the oldest entry the bound keeps by reading
// the keys and counts of the newest blocks that hold the bound's entries
// (1,000 by default), and then deletes the blocks wholly older: the fewer
// prunings, the fewer of those reads an entry pays for.
const logPruneSlack = 2

// logAgePruneEvery is how long (on the log's clock) passes between two
// deletions of the entries older than MaxAge by a process: the deletion
// reads the whole table, and List leaves old entries out anyway.
const logAgePruneEvery = time.Minute

// RunLogOptions configure Store.RunLog.
type RunLogOptions struct {
	// MaxAge and MaxPerEndpoint bound what is kept; 0 means
	// driver.DefaultLogMaxAge and driver.DefaultLogMaxPerEndpoint.
	MaxAge         time.Duration
	MaxPerEndpoint int
	// Now is the clock that ages entries; nil means time.Now. Give the
	// Service's clock.
	Now func() time.Time
}

// RunLog returns an driver.RunLog in the store's database, shared by
// the processes that share it. A row holds the entries of one endpoint
// that ran with one key from one AppendBatch (a block, see
// runlog_block.go; one entry for Append), keyed by its newest entry; List
// merges the blocks newest first. List never returns more than the newest
// MaxPerEndpoint entries of an endpoint, nor any older than MaxAge; the
// blocks wholly beyond those bounds are deleted every 32nd append (or
// every MaxPerEndpoint/2, when more) to an endpoint's log by a process
// (per endpoint) and, by age (a block whose newest entry is older than
// MaxAge), at the first append of a process and then at most once a
// minute; a block that straddles a bound waits for the next pruning, its
// entries beyond it never listed.
func (s *Store) RunLog(opts RunLogOptions) driver.RunLog {
	if opts.MaxAge <= 0 {
		opts.MaxAge = driver.DefaultLogMaxAge
	}
	if opts.MaxPerEndpoint <= 0 {
		opts.MaxPerEndpoint = driver.DefaultLogMaxPerEndpoint
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	var r [2]byte
	_, _ = rand.Read(r[:])
	d := s.dialect
	const where = ` WHERE project = ? AND endpoint_id = ?`
	l := &runLog{
		s: s, opts: opts,
		// Entries of one instant from one process keep their order; two
		// processes differ in the high bits, so their rows never collide.
		seqHigh: uint64(binary.BigEndian.Uint16(r[:])&0x7fff) << 48,
		pending: map[[2]string]int{},
		// An endpoint's blocks from the newest (see walk), down to those
		// whose newest entry is older than MaxAge.
		// whose newest entry is older than MaxAge, a few at a time (a
		// network engine sends a result's rows whether they are read or
		// not). The bare bounds on at_ns (implied by the OR after them)
		// make the key's range what the engine seeks.
		blocks: rebind(d, `SELECT at_ns, seq, entries, oldest_at_ns, oldest_seq, key_id, entry FROM `+runLogTable+where+
			` AND at_ns >= ? AND at_ns <= ? AND (at_ns < ? OR at_ns = ? AND seq < ?) ORDER BY at_ns DESC, seq DESC LIMIT ?`),
		// The same without the entries, for the count bound's pruning.
		spans: rebind(d, `SELECT at_ns, seq, entries, oldest_at_ns, oldest_seq FROM `+runLogTable+where+
			` ORDER BY at_ns DESC, seq DESC`),
		pruneCount: rebind(d, `DELETE FROM `+runLogTable+where+` AND at_ns <= ? AND (at_ns < ? OR seq < ?)`),
		pruneAge:   rebind(d, `DELETE FROM `+runLogTable+` WHERE at_ns < ?`),
		deleteAll:  rebind(d, `DELETE FROM `+runLogTable+where),
	}
	for i := range l.insert {
		l.insert[i] = insertRows(d, 1<<i)
	}
	return l
}

var _ driver.BatchRunLog = (*runLog)(nil)

type runLog struct {
	s         *Store
	opts      RunLogOptions
	seqHigh   uint64
	seq       atomic.Uint64
	agePruned atomic.Int64 // Unix nanoseconds of the latest pruning by age; 0: none yet
	mu        sync.Mutex
	pending   map[[2]string]int // appends per endpoint since its last pruning

	// insert[i] is the INSERT of 1<<i blocks.
	insert                                         [logInsertShift + 1]string
	blocks, spans, pruneCount, pruneAge, deleteAll string
}

// logInsertRows is how many blocks (rows) one INSERT of AppendBatch
// writes at most: the engine parses and plans one statement per that many
// rows, not per row. A batch holds a block per endpoint and key, a few
// usually.
const logInsertRows = 1 << logInsertShift

const logInsertShift = 6

// logInsertValues is how many values a row of the INSERT binds.
const logInsertValues = 9

// insertRows is the INSERT of n run log blocks, for d.
func insertRows(d engine.Store, n int) string {
	verb := `INSERT INTO `
	if d.SingleWriter() {
		// SQLite: a failed row rolls the transaction back, as
		// AppendBatch would, so that the statement keeps no journal of
		// its own to undo itself alone (a file once it passes 64 KiB).
		verb = `INSERT OR ROLLBACK INTO `
	}
	var b strings.Builder
	b.WriteString(verb + runLogTable + ` (project, endpoint_id, at_ns, seq, entries, oldest_at_ns, oldest_seq, key_id, entry) VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?)")
	}
	return rebind(d, b.String())
}

// insertChunk is the largest power of two of blocks, at most
// logInsertRows, that an INSERT writes out of n: a batch of any size is
// written by prepared statements of a few sizes only (at most one of each
// below logInsertRows), never planned afresh.
func insertChunk(n int) int {
	c := logInsertRows
	for c > n {
		c >>= 1
	}
	return c
}

// Append implements driver.RunLog.
func (l *runLog) Append(ctx context.Context, e driver.RunLogEntry) error {
	return l.AppendBatch(ctx, []driver.RunLogEntry{e})
}

// AppendBatch implements driver.BatchRunLog: the entries of each endpoint
// go into one row (a block, see runlog_block.go), all of them inserted in
// one transaction (one write of the store's file on SQLite, however many
// runs they record), by prepared statements, and the endpoints' logs are
// pruned as Append prunes them: in the same transaction on SQLite, whose
// one writer makes a commit (and its sync of the file) the cost that
// counts; after the commit elsewhere, where a range deletion held to the
// end of the insertion would hold its locks longer.
func (l *runLog) AppendBatch(ctx context.Context, entries []driver.RunLogEntry) error {
	if len(entries) == 0 {
		return nil
	}
	sc := appendScratchPool.Get().(*appendScratch)
	defer appendScratchPool.Put(sc)
	blocks, rows, err := sc.blocks(entries, l.seqHigh, &l.seq)
	if err != nil {
		return fmt.Errorf("sqlstore: run log: %w", err)
	}
	// The statements are prepared before the transaction, which may hold
	// the only connection (SQLite in memory).
	var inserts []*sql.Stmt
	for n := blocks; n > 0; {
		c := insertChunk(n)
		st, err := l.s.stmt(ctx, l.insert[bits.Len(uint(c))-1])
		if err != nil {
			return fmt.Errorf("sqlstore: run log: %w", err)
		}
		inserts = append(inserts, st)
		n -= c
	}
	due := l.due(entries)
	inTx := l.s.dialect.SingleWriter()
	var pr *pruning
	if inTx && due.any() {
		if pr, err = l.pruning(ctx); err != nil {
			l.undue(due)
			return err
		}
	}
	// The INSERT comes first, a write itself: no write to take the lock.
	err = l.s.tx(ctx, false, func(tx *sql.Tx) error {
		for _, st := range inserts {
			n := insertChunk(len(rows) / logInsertValues)
			if _, err := tx.StmtContext(ctx, st).ExecContext(ctx, rows[:logInsertValues*n]...); err != nil {
				return err
			}
			rows = rows[logInsertValues*n:]
		}
		if pr != nil {
			pr.tx = tx
			return l.prune(ctx, pr, due)
		}
		return nil
	})
	if err != nil {
		l.undue(due)
		return fmt.Errorf("sqlstore: run log: %w", err)
	}
	if inTx || !due.any() {
		return nil
	}
	if pr, err = l.pruning(ctx); err != nil {
		return err
	}
	return l.prune(ctx, pr, due)
}

// dueSet is the pruning that an AppendBatch owes: the endpoints whose log
// had logPruneEvery appends since its last pruning, and, when age is true,
// the deletion of the entries older than olderThan (Unix nanoseconds).
type dueSet struct {
	endpoints [][2]string
	age       bool
	olderThan int64
}

func (d dueSet) any() bool { return len(d.endpoints) > 0 || d.age }

// due counts entries against their endpoints' pruning intervals, and
// returns the pruning now due. undue gives it back when the write failed.
func (l *runLog) due(entries []driver.RunLogEntry) (due dueSet) {
	every := max(logPruneEvery, l.opts.MaxPerEndpoint/logPruneSlack)
	l.mu.Lock()
	for _, e := range entries {
		k := [2]string{e.ProjectID, e.EndpointID}
		l.pending[k]++
		if l.pending[k] >= every {
			delete(l.pending, k)
			due.endpoints = append(due.endpoints, k)
		}
	}
	l.mu.Unlock()
	now := l.opts.Now()
	last := l.agePruned.Load()
	if (last == 0 || now.Sub(time.Unix(0, last)) >= logAgePruneEvery || now.UnixNano() < last) && l.agePruned.CompareAndSwap(last, now.UnixNano()) {
		due.age, due.olderThan = true, now.Add(-l.opts.MaxAge).UnixNano()
	}
	return due
}

func (l *runLog) undue(due dueSet) {
	every := max(logPruneEvery, l.opts.MaxPerEndpoint/logPruneSlack)
	l.mu.Lock()
	for _, k := range due.endpoints {
		l.pending[k] += every
	}
	l.mu.Unlock()
	if due.age {
		l.agePruned.Store(0)
	}
}

// pruning holds the prepared statements of a pruning, and the transaction
// they run in (nil: each on its own).
type pruning struct {
	spans, count, age *sql.Stmt
	tx                *sql.Tx
}

func (l *runLog) pruning(ctx context.Context) (*pruning, error) {
	var p pruning
	for _, x := range []struct {
		st **sql.Stmt
		q  string
	}{{&p.spans, l.spans}, {&p.count, l.pruneCount}, {&p.age, l.pruneAge}} {
		st, err := l.s.stmt(ctx, x.q)
		if err != nil {
			return nil, fmt.Errorf("sqlstore: run log: pruning: %w", err)
		}
		*x.st = st
	}
	return &p, nil
}

func (p *pruning) stmt(ctx context.Context, st *sql.Stmt) *sql.Stmt {
	if p.tx == nil {
		return st
	}
	return p.tx.StmtContext(ctx, st)
}

// prune deletes, for each endpoint of due, the blocks whose entries are
// all beyond the count bound (see pruneBound; List leaves out the rest),
// and when due says so the blocks whose newest entry is beyond the age
// bound.
func (l *runLog) prune(ctx context.Context, p *pruning, due dueSet) error {
	for _, k := range due.endpoints {
		bound, ok, err := l.pruneBound(ctx, p.stmt(ctx, p.spans), k[0], k[1])
		if err == nil && ok {
			_, err = p.stmt(ctx, p.count).ExecContext(ctx, k[0], k[1], bound.at, bound.at, bound.seq)
		}
		if err != nil {
			return fmt.Errorf("sqlstore: run log: pruning: %w", err)
		}
	}
	if due.age {
		if _, err := p.stmt(ctx, p.age).ExecContext(ctx, due.olderThan); err != nil {
			return fmt.Errorf("sqlstore: run log: pruning: %w", err)
		}
	}
	return nil
}

// pruneBound returns a key no newer than the oldest entry of an endpoint
// that the count bound keeps, ok false when the log may hold fewer
// entries than the bound: the oldest entry of the newest blocks (by their
// newest entry) that hold MaxPerEndpoint entries together. Every entry of
// a block whose newest is older is beyond the bound: at least
// MaxPerEndpoint entries are newer. It reads the blocks' keys and counts
// only, never their entries; where the blocks overlap in time (several
// processes), it may keep a block more than it must.
func (l *runLog) pruneBound(ctx context.Context, spans *sql.Stmt, project, id string) (bound logKey, ok bool, err error) {
	rows, err := spans.QueryContext(ctx, project, id)
	if err != nil {
		return bound, false, err
	}
	defer rows.Close()
	total := int64(0)
	for rows.Next() {
		var (
			newest           logKey
			n, oldAt, oldSeq sql.NullInt64
		)
		if err := rows.Scan(&newest.at, &newest.seq, &n, &oldAt, &oldSeq); err != nil {
			return bound, false, err
		}
		oldest := newest
		if n.Valid {
			// A block; a row of version 6 holds one entry.
			oldest = logKey{oldAt.Int64, oldSeq.Int64}
		}
		if total == 0 || oldest.less(bound) {
			bound = oldest
		}
		if total += max(n.Int64, 1); total >= int64(l.opts.MaxPerEndpoint) {
			return bound, true, rows.Close()
		}
	}
	return bound, false, rows.Err()
}

// List implements driver.RunLog: it reads the endpoint's blocks from the
// newest (walk), and stops at the entry after the page, at the count
// bound or at the age bound.
func (l *runLog) List(ctx context.Context, project, id string, page driver.LogPage) ([]driver.RunLogEntry, string, error) {
	before := logKey{1<<63 - 1, 1<<63 - 1}
	if page.Before != "" {
		at, seq, err := driver.ParseCursor(page.Before)
		if err != nil {
			return nil, "", err
		}
		before = logKey{at, int64(seq)}
	}
	limit := page.Limit
	if limit <= 0 {
		limit = l.opts.MaxPerEndpoint
	}
	st, err := l.s.stmt(ctx, l.blocks)
	if err != nil {
		return nil, "", fmt.Errorf("sqlstore: run log: %w", err)
	}
	since := l.opts.Now().Add(-l.opts.MaxAge).UnixNano()
	var out []driver.RunLogEntry
	err = walk(ctx, st, project, id, since, func(rank int, b blockEntry) (bool, error) {
		if rank >= l.opts.MaxPerEndpoint || b.key.at < since {
			return false, nil
		}
		if !b.key.less(before) {
			return true, nil
		}
		if len(out) == limit {
			out = append(out, driver.RunLogEntry{}) // a next page: no need to decode it
			return false, nil
		}
		e, err := decodeBlockEntry(b, project, id)
		out = append(out, e)
		return err == nil, err
	})
	if err != nil {
		return nil, "", err
	}
	if len(out) > limit {
		out = out[:limit]
		return out, driver.Cursor(out[limit-1]), nil
	}
	return out, "", nil
}

// DeleteEndpoint implements driver.RunLog.
func (l *runLog) DeleteEndpoint(ctx context.Context, project, id string) error {
	if _, err := l.s.exec(ctx, l.deleteAll, project, id); err != nil {
		return fmt.Errorf("sqlstore: run log: %w", err)
	}
	l.mu.Lock()
	delete(l.pending, [2]string{project, id})
	l.mu.Unlock()
	return nil
}

// entryV6 is the stored form (column entry) of a driver.RunLogEntry that
// schema version 6 and earlier wrote, one row an entry, without what other
// columns hold (project, endpoint, instant, sequence, key id), which List
// still reads. It is a frozen copy of that format, on purpose not derived
// from endpoint.RunLogEntry (the API's JSON, which may change) nor put in
// driver (whose records hold no JSON): rows written then decode as they
// were written.
type entryV6 struct {
	ExecutionID  string    `json:"execution_id"`
	At           time.Time `json:"at"`
	Version      int       `json:"version"`
	DurationMS   float64   `json:"duration_ms"`
	Rows         *int      `json:"rows"`
	RowsRead     *int64    `json:"rows_read"`
	BytesRead    *int64    `json:"bytes_read"`
	Status       int       `json:"status"`
	ErrorCode    string    `json:"error_code,omitempty"`
	Refresh      string    `json:"refresh"`
	Cached       bool      `json:"is_cached"`
	Materialized bool      `json:"endpoint_materialized"`
	Token        bool      `json:"token"`
	TokenKeyID   string    `json:"token_kid,omitempty"`
}

func (r entryV6) entry() driver.RunLogEntry {
	return driver.RunLogEntry{
		ExecutionID: r.ExecutionID, At: r.At, Version: r.Version, DurationMS: r.DurationMS,
		Rows: r.Rows, RowsRead: r.RowsRead, BytesRead: r.BytesRead, Status: r.Status, ErrorCode: r.ErrorCode,
		Refresh: r.Refresh, Cached: r.Cached, Materialized: r.Materialized, Token: r.Token, TokenKeyID: r.TokenKeyID,
	}
}
