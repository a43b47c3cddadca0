package sqlstore

import (
	"cmp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

// appendScratch is what an AppendBatch packs its blocks in, kept for the
// next (appendScratchPool): a batch of 1,024 entries fills some 200 KiB of
// text, which the engine's driver copies when the INSERT runs.
type appendScratch struct {
	groups []logGroup
	index  map[logGroupKey]int32
	items  []logItem
	placed []logItem
	starts []int
	buf    []byte
	rows   []any
}

var appendScratchPool = sync.Pool{New: func() any { return new(appendScratch) }}

// logGroupKey is what the entries of a block share.
type logGroupKey struct{ project, id, keyID string }

type logGroup struct {
	key  logGroupKey
	n    int
	rank int // in the order of the table's key
}

// logItem is an entry of a batch, with its sequence number.
type logItem struct {
	at, seq int64
	i       int32 // in the batch
	group   int32
}

// blocks packs entries into blocks, one per endpoint and key (in the
// order of the table's key, so that their rows go into it one after the
// other), and returns their number and the INSERT's values, valid until
// sc is used again. It assigns the entries' sequence numbers, in order,
// from seq (high bits seqHigh).
func (sc *appendScratch) blocks(entries []driver.RunLogEntry, seqHigh uint64, seq *atomic.Uint64) (int, []any, error) {
	sc.groups = sc.groups[:0]
	clear(sc.index)
	sc.items = slices.Grow(sc.items[:0], len(entries))[:len(entries)]
	for i := range entries {
		e := &entries[i]
		k := logGroupKey{e.ProjectID, e.EndpointID, e.KeyID}
		g, ok := sc.index[k]
		if !ok {
			g = int32(len(sc.groups))
			sc.groups = append(sc.groups, logGroup{key: k})
			if sc.index == nil {
				sc.index = map[logGroupKey]int32{}
			}
			sc.index[k] = g
		}
		sc.groups[g].n++
		sc.items[i] = logItem{e.At.UnixNano(), int64(seqHigh | seq.Add(1)&(1<<48-1)), int32(i), g}
	}
	// The groups in key order: each one's place among the items.
	order := make([]int32, len(sc.groups))
	for j := range order {
		order[j] = int32(j)
	}
	slices.SortFunc(order, func(a, b int32) int {
		x, y := sc.groups[a].key, sc.groups[b].key
		return cmp.Or(strings.Compare(x.project, y.project), strings.Compare(x.id, y.id), strings.Compare(x.keyID, y.keyID))
	})
	sc.starts = slices.Grow(sc.starts[:0], len(order)+1)[:len(order)+1]
	next := make([]int, len(sc.groups))
	at := 0
	for r, g := range order {
		sc.groups[g].rank = r
		sc.starts[r], next[g] = at, at
		at += sc.groups[g].n
	}
	sc.starts[len(order)] = at
	sc.placed = slices.Grow(sc.placed[:0], len(entries))[:len(entries)]
	for _, it := range sc.items {
		sc.placed[next[it.group]] = it
		next[it.group]++
	}
	// Each block newest first: the batch comes oldest first mostly (by
	// sequence number always), so reversed it is in order but for runs
	// that ended out of the order they started in.
	newer := func(a, b logItem) int { return cmp.Or(cmp.Compare(b.at, a.at), cmp.Compare(b.seq, a.seq)) }
	for r := range order {
		part := sc.placed[sc.starts[r]:sc.starts[r+1]]
		slices.Reverse(part)
		if !slices.IsSortedFunc(part, newer) {
			slices.SortFunc(part, newer)
		}
	}
	// Every block's text goes into one buffer, read as one string (never
	// written after until the INSERT ran): a block's argument is a part of
	// it, not a string of its own.
	buf := sc.buf[:0]
	var spans [][2]int
	for r := range order {
		start := len(buf)
		buf = append(buf, blockMagic...)
		part := sc.placed[sc.starts[r]:sc.starts[r+1]]
		prev := logKey{part[0].at, part[0].seq}
		for _, it := range part {
			k := logKey{it.at, it.seq}
			var err error
			if buf, err = appendBlockEntry(buf, k, prev, &entries[it.i]); err != nil {
				sc.buf = buf
				return 0, nil, err
			}
			prev = k
		}
		spans = append(spans, [2]int{start, len(buf)})
	}
	sc.buf = buf
	all := unsafe.String(unsafe.SliceData(buf), len(buf))
	rows := sc.rows[:0]
	for r, g := range order {
		part := sc.placed[sc.starts[r]:sc.starts[r+1]]
		newest, oldest := part[0], part[len(part)-1]
		k := sc.groups[g].key
		// A block without a key binds NULL.
		var keyID any
		if k.keyID != "" {
			keyID = k.keyID
		}
		rows = append(rows, k.project, k.id, newest.at, newest.seq, int64(len(part)), oldest.at, oldest.seq, keyID, all[spans[r][0]:spans[r][1]])
	}
	sc.rows = rows
	clear(sc.rows[len(rows):cap(rows)])
	return len(order), rows, nil
}
