package sqlstore

import (
	"container/heap"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

// A block is what one row of the run log holds since schema version 7:
// the entries of one endpoint that ran with one key (column key_id, NULL
// for another credential) from one AppendBatch, newest first, as text
// (every engine's long text type takes it). The row's key (at_ns, seq) is
// its newest entry's, and its column entries the number of entries. The
// text is blockMagic, then a line per entry:
//
//	<at_ns> TAB <seq> TAB <entry> LF
//
// where <entry> is the JSON object of appendEntry. JSON escapes every
// control character inside its strings, so a TAB or a LF is always a
// separator. A row of version 6 (entries NULL) is a block of one entry, its
// text the JSON object.
const blockMagic = "B1\n"

// logKey orders the entries of a log: by instant, then sequence number.
type logKey struct{ at, seq int64 }

func (a logKey) less(b logKey) bool { return a.at < b.at || a.at == b.at && a.seq < b.seq }

// blockEntry is an entry of a block before its JSON is decoded.
type blockEntry struct {
	key   logKey
	keyID string
	text  string // the entry's JSON object
}

// appendBlockEntry appends the line of e, whose instant and sequence
// number are at and seq, to a block.
func appendBlockEntry(b []byte, at, seq int64, e driver.RunLogEntry) ([]byte, error) {
	b = strconv.AppendInt(b, at, 10)
	b = append(b, '\t')
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, '\t')
	b, err := appendEntry(b, e)
	return append(b, '\n'), err
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
	prev := logKey{}
	for i := range n {
		line, after, ok := strings.Cut(rest, "\n")
		if !ok {
			return dst, corrupt("entry %d of %d: no end of line", i+1, n)
		}
		rest = after
		var f [3]string
		for j := range 2 {
			var ok bool
			if f[j], line, ok = strings.Cut(line, "\t"); !ok {
				return dst, corrupt("entry %d of %d: %d fields, want 3", i+1, n, j+1)
			}
		}
		f[2] = line
		at, err1 := strconv.ParseInt(f[0], 10, 64)
		seq, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil {
			return dst, corrupt("entry %d of %d: instant %q, sequence %q", i+1, n, f[0], f[1])
		}
		k := logKey{at, seq}
		switch {
		case i == 0 && k != newest:
			return dst, corrupt("newest entry (%d, %d), row key (%d, %d)", at, seq, newest.at, newest.seq)
		case i > 0 && !k.less(prev):
			return dst, corrupt("entry %d of %d out of order", i+1, n)
		}
		prev = k
		if !strings.HasPrefix(f[2], "{") {
			return dst, corrupt("entry %d of %d: not a JSON object", i+1, n)
		}
		dst = append(dst, blockEntry{key: k, keyID: keyID, text: f[2]})
	}
	if rest != "" {
		return dst, corrupt("%d bytes after %d entries", len(rest), n)
	}
	if prev != oldest {
		return dst, corrupt("oldest entry (%d, %d), row says (%d, %d)", prev.at, prev.seq, oldest.at, oldest.seq)
	}
	return dst, nil
}

// decodeBlockEntry decodes an entry's JSON object into the entry of
// project and endpoint id.
func decodeBlockEntry(b blockEntry, project, id string) (driver.RunLogEntry, error) {
	var r entryRow
	if err := json.Unmarshal([]byte(b.text), &r); err != nil {
		return driver.RunLogEntry{}, fmt.Errorf("sqlstore: run log entry in %s: %w", runLogTable, err)
	}
	e := r.entry()
	e.ProjectID, e.EndpointID, e.Seq = project, id, uint64(b.key.seq)
	e.At = time.Unix(0, b.key.at).UTC()
	e.KeyID = b.keyID
	return e, nil
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
	rows, err := st.QueryContext(ctx, project, id, since)
	if err != nil {
		return fmt.Errorf("sqlstore: run log: %w", err)
	}
	defer rows.Close()
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
	for rows.Next() {
		var (
			k                logKey
			n, oldAt, oldSeq sql.NullInt64
			keyID            sql.NullString
			text             string
		)
		if err := rows.Scan(&k.at, &k.seq, &n, &oldAt, &oldSeq, &keyID, &text); err != nil {
			return fmt.Errorf("sqlstore: run log: %w", err)
		}
		if more, err := drain(k, false); err != nil || !more {
			return err
		}
		var entries []blockEntry
		if n.Valid {
			if entries, err = decodeBlock(nil, text, k, logKey{oldAt.Int64, oldSeq.Int64}, keyID.String, n.Int64); err != nil {
				return fmt.Errorf("%w (project %q, endpoint %q)", err, project, id)
			}
		} else {
			// A row of schema version 6 or earlier.
			entries = []blockEntry{{key: k, keyID: keyID.String, text: text}}
		}
		heap.Push(&h, &blockCursor{entries: entries})
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlstore: run log: %w", err)
	}
	_, err = drain(logKey{}, true)
	return err
}
