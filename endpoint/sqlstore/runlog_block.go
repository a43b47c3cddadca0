package sqlstore

import (
	"container/heap"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

// A block is what one row of the run log holds since schema version 7:
// the entries of one endpoint that ran with one key (column key_id, NULL
// for another credential) from one AppendBatch, newest first, as text
// (every engine's long text type takes it). The row's key (at_ns, seq) is
// its newest entry's, and its columns entries, oldest_at_ns and
// oldest_seq the number of entries and the oldest one's key. The text is
// blockMagic, then a line per entry of tab-separated fields:
//
//	at  seq  execution_id  version  duration_ms  rows  rows_read  bytes_read
//	status  error_code  refresh  flags  token_kid
//
// at and seq are what the entry's key is less than the one before it (the
// row's for the first; decimal, signed, wrapping as int64 does); a number left empty is zero,
// or nil for rows, rows_read and bytes_read; flags is the sum of 1
// (cached), 2 (materialized) and 4 (token). A text is as it is when it is
// printable ASCII without a TAB, a backslash or a leading double quote,
// and a JSON string otherwise (invalid UTF-8 becoming U+FFFD, as the JSON
// form of version 6 does). No field holds a TAB or a LF, so that they are
// always separators. A row of version 6 (entries NULL) is a block of one
// entry, its text the JSON object of entryV6.
const blockMagic = "B1\n"

// blockFields is how many fields a line of a block has.
const blockFields = 13

// logKey orders the entries of a log: by instant, then sequence number.
type logKey struct{ at, seq int64 }

func (a logKey) less(b logKey) bool { return a.at < b.at || a.at == b.at && a.seq < b.seq }

// blockEntry is an entry of a block before its fields are decoded.
type blockEntry struct {
	key   logKey
	keyID string
	text  string // its fields after at and seq; or its JSON object
	json  bool   // a row of version 6
}

// appendBlockEntry appends the line of e, whose key is k, to a block whose
// previous entry's key is prev (the newest's for the first).
func appendBlockEntry(b []byte, k, prev logKey, e *driver.RunLogEntry) ([]byte, error) {
	b = strconv.AppendInt(b, prev.at-k.at, 10)
	b = append(b, '\t')
	b = strconv.AppendInt(b, prev.seq-k.seq, 10)
	b = append(b, '\t')
	b = appendBlockText(b, e.ExecutionID)
	b = append(b, '\t')
	if e.Version != 0 {
		b = strconv.AppendInt(b, int64(e.Version), 10)
	}
	b = append(b, '\t')
	if e.DurationMS != 0 {
		if math.IsNaN(e.DurationMS) || math.IsInf(e.DurationMS, 0) {
			return b, errors.New("run log entry: duration_ms " + strconv.FormatFloat(e.DurationMS, 'g', -1, 64) + " is not a finite number")
		}
		b = strconv.AppendFloat(b, e.DurationMS, 'g', -1, 64)
	}
	b = append(b, '\t')
	if e.Rows != nil {
		b = strconv.AppendInt(b, int64(*e.Rows), 10)
	}
	b = append(b, '\t')
	if e.RowsRead != nil {
		b = strconv.AppendInt(b, *e.RowsRead, 10)
	}
	b = append(b, '\t')
	if e.BytesRead != nil {
		b = strconv.AppendInt(b, *e.BytesRead, 10)
	}
	b = append(b, '\t')
	if e.Status != 0 {
		b = strconv.AppendInt(b, int64(e.Status), 10)
	}
	b = append(b, '\t')
	b = appendBlockText(b, e.ErrorCode)
	b = append(b, '\t')
	b = appendBlockText(b, e.Refresh)
	b = append(b, '\t')
	if flags := boolInt(e.Cached) | boolInt(e.Materialized)<<1 | boolInt(e.Token)<<2; flags != 0 {
		b = strconv.AppendInt(b, flags, 10)
	}
	b = append(b, '\t')
	b = appendBlockText(b, e.TokenKeyID)
	return append(b, '\n'), nil
}

// appendBlockText appends s as a field of a block.
func appendBlockText(b []byte, s string) []byte {
	if len(s) > 0 && s[0] == '"' {
		return appendJSONString(b, s)
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '\\' {
			return appendJSONString(b, s)
		}
	}
	return append(b, s...)
}

// errCorruptBlock is wrapped by the error of a block that does not decode.
var errCorruptBlock = errors.New("sqlstore: run log: corrupt block in " + runLogTable)

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errCorruptBlock}, args...)...)
}

// decodeBlock splits the text of a block whose row says it holds n
// entries from newest to oldest, of key id keyID, into its entries,
// newest first, appended to dst. It checks the framing, the count and
// that the keys descend from newest to oldest; the
// entries' JSON is decoded later, by decodeBlockEntry, for those listed.
func decodeBlock(dst []blockEntry, text string, newest, oldest logKey, keyID string, n int64) ([]blockEntry, error) {
	rest, ok := strings.CutPrefix(text, blockMagic)
	if !ok {
		return dst, corrupt("no block header")
	}
	if n < 1 || n > int64(len(rest)) {
		return dst, corrupt("%d entries in %d bytes", n, len(rest))
	}
	prev, k := newest, logKey{}
	for i := range n {
		line, after, ok := strings.Cut(rest, "\n")
		if !ok {
			return dst, corrupt("entry %d of %d: no end of line", i+1, n)
		}
		rest = after
		dAt, line, ok1 := strings.Cut(line, "\t")
		dSeq, line, ok2 := strings.Cut(line, "\t")
		if !ok1 || !ok2 || strings.Count(line, "\t") != blockFields-3 {
			return dst, corrupt("entry %d of %d: not %d fields", i+1, n, blockFields)
		}
		at, err1 := strconv.ParseInt(dAt, 10, 64)
		seq, err2 := strconv.ParseInt(dSeq, 10, 64)
		if err1 != nil || err2 != nil {
			return dst, corrupt("entry %d of %d: key steps %q, %q", i+1, n, dAt, dSeq)
		}
		k = logKey{prev.at - at, prev.seq - seq}
		switch {
		case i == 0 && k != newest:
			return dst, corrupt("newest entry (%d, %d), row key (%d, %d)", k.at, k.seq, newest.at, newest.seq)
		case i > 0 && !k.less(prev):
			return dst, corrupt("entry %d of %d out of order", i+1, n)
		}
		prev = k
		dst = append(dst, blockEntry{key: k, keyID: keyID, text: line})
	}
	if rest != "" {
		return dst, corrupt("%d bytes after %d entries", len(rest), n)
	}
	if k != oldest {
		return dst, corrupt("oldest entry (%d, %d), row says (%d, %d)", k.at, k.seq, oldest.at, oldest.seq)
	}
	return dst, nil
}

// decodeBlockEntry decodes an entry's fields into the entry of project
// and endpoint id.
func decodeBlockEntry(b blockEntry, project, id string) (driver.RunLogEntry, error) {
	var e driver.RunLogEntry
	if b.json {
		var r entryV6
		if err := json.Unmarshal([]byte(b.text), &r); err != nil {
			return e, fmt.Errorf("sqlstore: run log entry in %s: %w", runLogTable, err)
		}
		e = r.entry()
	} else {
		var err error
		if e, err = decodeBlockFields(b.text); err != nil {
			return e, fmt.Errorf("%w: entry (%d, %d): %v", errCorruptBlock, b.key.at, b.key.seq, err)
		}
	}
	e.ProjectID, e.EndpointID, e.Seq = project, id, uint64(b.key.seq)
	e.At = time.Unix(0, b.key.at).UTC()
	e.KeyID = b.keyID
	return e, nil
}

// decodeBlockFields decodes the fields of a line after at and seq.
func decodeBlockFields(line string) (e driver.RunLogEntry, err error) {
	var f [blockFields - 2]string
	for i := range len(f) - 1 {
		f[i], line, _ = strings.Cut(line, "\t")
	}
	f[len(f)-1] = line
	num := func(s string, bits int) int64 {
		if s == "" || err != nil {
			return 0
		}
		var v int64
		v, err = strconv.ParseInt(s, 10, bits)
		return v
	}
	opt := func(s string) *int64 {
		if s == "" {
			return nil
		}
		v := num(s, 64)
		return &v
	}
	text := func(s string) string {
		if err != nil || s == "" || s[0] != '"' {
			return s
		}
		var out string
		err = json.Unmarshal([]byte(s), &out)
		return out
	}
	e.ExecutionID = text(f[0])
	e.Version = int(num(f[1], strconv.IntSize))
	if f[2] != "" {
		if e.DurationMS, err = strconv.ParseFloat(f[2], 64); err == nil && (math.IsNaN(e.DurationMS) || math.IsInf(e.DurationMS, 0)) {
			err = errors.New("duration_ms is not a finite number")
		}
	}
	if f[3] != "" {
		rows := int(num(f[3], strconv.IntSize))
		e.Rows = &rows
	}
	e.RowsRead, e.BytesRead = opt(f[4]), opt(f[5])
	e.Status = int(num(f[6], strconv.IntSize))
	e.ErrorCode, e.Refresh = text(f[7]), text(f[8])
	flags := num(f[9], 64)
	if flags&^7 != 0 {
		return e, fmt.Errorf("flags %d", flags)
	}
	e.Cached, e.Materialized, e.Token = flags&1 != 0, flags&2 != 0, flags&4 != 0
	e.TokenKeyID = text(f[10])
	return e, err
}

// blockCursor is a block being merged: its entries from pos on.
type blockCursor struct {
	entries []blockEntry
	pos     int
}

// blockHeap is a max-heap of blocks by their next entry.
type blockHeap []*blockCursor

func (h blockHeap) Len() int { return len(h) }
func (h blockHeap) Less(i, j int) bool {
	return h[j].entries[h[j].pos].key.less(h[i].entries[h[i].pos].key)
}
func (h blockHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *blockHeap) Push(x any)   { *h = append(*h, x.(*blockCursor)) }
func (h *blockHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// walk calls visit with the entries of an endpoint's log, newest first,
// of the blocks whose newest entry is at since (Unix nanoseconds) or
// later, each with its rank (0 for the newest), until visit returns false
// or the entries end. It reads the blocks by their newest entry, newest
// first, and merges them: blocks of several processes may overlap in time,
// and an entry is visited once no block left to read can hold a newer one
// (the next block's newest is older). The ranks are exact for every entry
// at since or later (every newer entry is then in a block read).
func walk(ctx context.Context, st *sql.Stmt, project, id string, since int64, visit func(rank int, b blockEntry) (bool, error)) error {
	var h blockHeap
	rank := 0
	// drain visits the entries newer than next (all of them when last).
	drain := func(next logKey, last bool) (bool, error) {
		for len(h) > 0 {
			c := h[0]
			e := c.entries[c.pos]
			if !last && !next.less(e.key) {
				return true, nil
			}
			if c.pos++; c.pos == len(c.entries) {
				heap.Pop(&h)
			} else {
				heap.Fix(&h, 0)
			}
			more, err := visit(rank, e)
			if err != nil || !more {
				return false, err
			}
			rank++
		}
		return true, nil
	}
	// The blocks come walkFirst at a time, then walkGrowth times as many
	// as the time before (up to walkMost), each query after the last
	// block of the one before.
	after, chunk := logKey{1<<63 - 1, 1<<63 - 1}, walkFirst
	for {
		more, read, err := walkChunk(ctx, st, project, id, since, after, chunk, func(k logKey, entries []blockEntry) (bool, error) {
			if more, err := drain(k, false); err != nil || !more {
				return false, err
			}
			after = k
			heap.Push(&h, &blockCursor{entries: entries})
			return true, nil
		})
		if err != nil || !more {
			return err
		}
		if read < chunk {
			break
		}
		chunk = min(chunk*walkGrowth, walkMost)
	}
	_, err := drain(logKey{}, true)
	return err
}

// How many blocks walk reads a query.
const (
	walkFirst  = 8
	walkGrowth = 4
	walkMost   = 1024
)

// walkChunk reads up to chunk blocks older than after, and hands each to
// fn until it returns false (more false then). read is how many it read.
func walkChunk(ctx context.Context, st *sql.Stmt, project, id string, since int64, after logKey, chunk int, fn func(logKey, []blockEntry) (bool, error)) (more bool, read int, err error) {
	rows, err := st.QueryContext(ctx, project, id, since, after.at, after.at, after.at, after.seq, chunk)
	if err != nil {
		return false, 0, fmt.Errorf("sqlstore: run log: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		read++
		var (
			k                logKey
			n, oldAt, oldSeq sql.NullInt64
			keyID            sql.NullString
			text             string
		)
		if err := rows.Scan(&k.at, &k.seq, &n, &oldAt, &oldSeq, &keyID, &text); err != nil {
			return false, read, fmt.Errorf("sqlstore: run log: %w", err)
		}
		var entries []blockEntry
		if n.Valid {
			if entries, err = decodeBlock(nil, text, k, logKey{oldAt.Int64, oldSeq.Int64}, keyID.String, n.Int64); err != nil {
				return false, read, fmt.Errorf("%w (project %q, endpoint %q)", err, project, id)
			}
		} else {
			// A row of schema version 6 or earlier.
			entries = []blockEntry{{key: k, keyID: keyID.String, text: text, json: true}}
		}
		if more, err := fn(k, entries); err != nil || !more {
			return false, read, err
		}
	}
	if err := rows.Err(); err != nil {
		return false, read, fmt.Errorf("sqlstore: run log: %w", err)
	}
	return true, read, nil
}
