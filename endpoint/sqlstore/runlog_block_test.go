package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// logModel is what a run log must list: every entry appended, newest
// first, the newest max of an endpoint.
func logModel(all []driver.RunLogEntry, project, id string, maxPer int) []driver.RunLogEntry {
	var out []driver.RunLogEntry
	for _, e := range all {
		if e.ProjectID == project && e.EndpointID == id {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b driver.RunLogEntry) int {
		return cmp.Or(b.At.Compare(a.At), cmp.Compare(b.Seq, a.Seq))
	})
	return out[:min(len(out), maxPer)]
}

// listAll pages through an endpoint's log, limit entries a page.
func listAll(t *testing.T, l driver.RunLog, project, id string, limit int) []driver.RunLogEntry {
	t.Helper()
	var out []driver.RunLogEntry
	before := ""
	for range 10000 {
		page, next, err := l.List(context.Background(), project, id, driver.LogPage{Limit: limit, Before: before})
		require.NoError(t, err)
		out = append(out, page...)
		if next == "" {
			return out
		}
		before = next
	}
	t.Fatal("List never ended")
	return nil
}

// keysOf lists the entries' keys, ids and key ids, as text.
func keysOf(es []driver.RunLogEntry) string {
	var b strings.Builder
	for _, e := range es {
		fmt.Fprintf(&b, "%d/%x %s %s\n", e.At.UnixNano(), e.Seq, e.ExecutionID, e.KeyID)
	}
	return b.String()
}

// appendRecorded appends batch to l and returns it with the sequence
// numbers l gave, so that a test knows every entry's key.
func appendRecorded(t *testing.T, l *runLog, batch []driver.RunLogEntry) []driver.RunLogEntry {
	t.Helper()
	first := l.seq.Load()
	require.NoError(t, l.AppendBatch(context.Background(), batch))
	out := slices.Clone(batch)
	for i := range out {
		out[i].Seq = l.seqHigh | (first+uint64(i)+1)&(1<<48-1)
	}
	return out
}

// TestRunLogBlocksOverlap: two processes' logs over one database append
// batches whose runs started out of order (so that their blocks overlap
// in time, within a process and across the two), with several keys; List
// pages through exactly the newest MaxPerEndpoint entries of each
// endpoint, newest first, at every page size, and the count bound's
// pruning never deletes one of them while it deletes what it may.
func TestRunLogBlocksOverlap(t *testing.T) {
	s, _ := openFile(t, tempFile(t))
	opts := RunLogOptions{MaxPerEndpoint: 50, Now: func() time.Time { return runLogNow.Add(time.Hour) }}
	logs := []*runLog{s.RunLog(opts).(*runLog), s.RunLog(opts).(*runLog)}
	if logs[0].seqHigh == logs[1].seqHigh {
		logs[1].seqHigh ^= 1 << 48
	}
	r := rand.New(rand.NewPCG(1, 2))
	var all []driver.RunLogEntry
	n := 0
	for round := range 40 {
		batch := make([]driver.RunLogEntry, 1+r.IntN(40))
		for i := range batch {
			n++
			e := entryCases()[1+r.IntN(2)]
			e.ExecutionID = fmt.Sprintf("run-%05d", n)
			e.ProjectID, e.EndpointID = []string{"1", "2"}[r.IntN(2)], []string{"a", "b"}[r.IntN(2)]
			e.KeyID = []string{"", "k1", "k2"}[r.IntN(3)]
			// Runs of the last few seconds, ending in any order; some of
			// the same instant.
			e.At = runLogNow.Add(time.Duration(round)*time.Second - time.Duration(r.IntN(3000))*time.Millisecond)
			batch[i] = e
		}
		all = append(all, appendRecorded(t, logs[round%2], batch)...)
		if round%5 != 4 {
			continue
		}
		for _, project := range []string{"1", "2"} {
			for _, id := range []string{"a", "b"} {
				want := keysOf(logModel(all, project, id, opts.MaxPerEndpoint))
				for _, limit := range []int{1, 7, 50, 1000} {
					for _, l := range logs {
						require.Equal(t, want, keysOf(listAll(t, l, project, id, limit)), "round %d, %s/%s, pages of %d", round, project, id, limit)
					}
				}
			}
		}
	}
	// A pruning of each endpoint now leaves what List shows, and at most
	// the blocks that straddle the bound besides.
	for _, project := range []string{"1", "2"} {
		for _, id := range []string{"a", "b"} {
			p, err := logs[0].pruning(context.Background())
			require.NoError(t, err)
			require.NoError(t, logs[0].prune(context.Background(), p, dueSet{endpoints: [][2]string{{project, id}}}))
			want := logModel(all, project, id, opts.MaxPerEndpoint)
			require.Equal(t, keysOf(want), keysOf(listAll(t, logs[1], project, id, 13)), "%s/%s after pruning", project, id)
			var stored int
			require.NoError(t, s.db.QueryRow(`SELECT COALESCE(SUM(entries), 0) FROM `+runLogTable+` WHERE project = ? AND endpoint_id = ?`, project, id).Scan(&stored))
			assert.Less(t, stored, len(logModel(all, project, id, 1<<30)), "%s/%s: pruning kept all", project, id)
		}
	}
}

// TestRunLogBlockPerEndpointAndKey: a batch is one row per endpoint and
// key, whose key_id column is the key its entries ran with (so a host
// finds a key's runs by it), whose key is its newest entry's and whose
// count and oldest key are its entries'.
func TestRunLogBlockPerEndpointAndKey(t *testing.T) {
	s := openMemory(t)
	l := s.RunLog(RunLogOptions{Now: func() time.Time { return runLogNow }}).(*runLog)
	var batch []driver.RunLogEntry
	for i := range 30 {
		e := entryCases()[1]
		e.ExecutionID = fmt.Sprintf("run-%d", i)
		e.ProjectID, e.EndpointID, e.KeyID = "1", []string{"a", "b", "c"}[i%3], []string{"", "k"}[i%2]
		e.At = runLogNow.Add(-time.Duration(i%7) * time.Second)
		batch = append(batch, e)
	}
	recorded := appendRecorded(t, l, batch)
	rows, err := s.db.Query(`SELECT endpoint_id, key_id, at_ns, seq, entries, oldest_at_ns, oldest_seq FROM ` + runLogTable + ` ORDER BY endpoint_id, key_id`)
	require.NoError(t, err)
	defer rows.Close()
	blocks := 0
	for rows.Next() {
		var (
			id          string
			keyID       sql.NullString
			newest, old logKey
			n           int
		)
		require.NoError(t, rows.Scan(&id, &keyID, &newest.at, &newest.seq, &n, &old.at, &old.seq))
		var mine []driver.RunLogEntry
		for _, e := range recorded {
			if e.EndpointID == id && e.KeyID == keyID.String {
				mine = append(mine, e)
			}
		}
		m := logModel(mine, "1", id, 1000)
		if n != len(m) || newest != (logKey{m[0].At.UnixNano(), int64(m[0].Seq)}) || old != (logKey{m[n-1].At.UnixNano(), int64(m[n-1].Seq)}) {
			t.Errorf("block %s/%q: %d entries from %v to %v, want %d", id, keyID.String, n, newest, old, len(m))
		}
		assert.NotEqual(t, keyID.Valid, keyID.String == "", "block %s: key_id %v, want NULL for no key", id, keyID)
		blocks++
	}
	require.Equal(t, 6, blocks)
}

// TestRunLogCorruptBlock: a block whose text or columns do not agree is an
// error of List naming the table, never a panic nor a wrong page.
func TestRunLogCorruptBlock(t *testing.T) {
	line := func(dAt, dSeq, rest string) string { return dAt + "\t" + dSeq + "\t" + rest + "\t\t\t\t\t\t\t\t\t\t\n" }
	good := blockMagic + line("0", "0", "b") + line("10", "1", "a")
	for _, c := range []struct {
		name, text string
		n          int64
		oldest     logKey
	}{
		{"no header", strings.TrimPrefix(good, blockMagic), 2, logKey{10, 1}},
		{"count", good, 3, logKey{10, 1}},
		{"count zero", good, 0, logKey{10, 1}},
		{"oldest", good, 2, logKey{10, 2}},
		{"newest", blockMagic + line("1", "0", "b") + line("9", "1", "a"), 2, logKey{10, 1}},
		{"order", blockMagic + line("0", "0", "b") + line("-10", "1", "a"), 2, logKey{30, 1}},
		{"same", blockMagic + line("0", "0", "b") + line("0", "0", "a"), 2, logKey{20, 2}},
		{"number", blockMagic + line("0", "0", "b") + line("x", "1", "a"), 2, logKey{10, 1}},
		{"fields", blockMagic + line("0", "0", "b") + "10\t1\ta\n", 2, logKey{10, 1}},
		{"more fields", blockMagic + line("0", "0", "b") + line("10", "1", "a\t"), 2, logKey{10, 1}},
		{"trailing", good + "x", 2, logKey{10, 1}},
		{"cut", good[:len(good)-1], 2, logKey{10, 1}},
		{"version", blockMagic + line("0", "0", "b\tx"), 1, logKey{20, 2}},
		{"rows", blockMagic + line("0", "0", "b\t\t\t1.5"), 1, logKey{20, 2}},
		{"duration", blockMagic + line("0", "0", "b\t\tNaN"), 1, logKey{20, 2}},
		{"flags", blockMagic + "0\t0\tb\t\t\t\t\t\t\t\t\t8\t\n", 1, logKey{20, 2}},
		{"text", blockMagic + line("0", "0", `"b`), 1, logKey{20, 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := openMemory(t)
			l := s.RunLog(RunLogOptions{Now: func() time.Time { return time.Unix(0, 30) }})
			_, err := s.db.Exec(`INSERT INTO `+runLogTable+` (project, endpoint_id, at_ns, seq, entries, oldest_at_ns, oldest_seq, entry) VALUES ('1', 'e', 20, 2, ?, ?, ?, ?)`,
				c.n, c.oldest.at, c.oldest.seq, c.text)
			require.NoError(t, err)
			got, _, err := l.List(context.Background(), "1", "e", driver.LogPage{Limit: 10})
			require.ErrorContains(t, err, runLogTable, "List = %v", got)
		})
	}
}

// FuzzRunLogBlock: decodeBlock takes any text and any row's columns
// without a panic, and what it takes lists back as it was packed.
func FuzzRunLogBlock(f *testing.F) {
	var sc appendScratch
	var seq atomic.Uint64
	e := entryCases()[1]
	e.ProjectID, e.EndpointID, e.At = "1", "a", time.Unix(0, 20)
	_, rows, err := sc.blocks([]driver.RunLogEntry{e, e}, 0, &seq)
	require.NoError(f, err)
	f.Add(rows[8].(string), int64(2), int64(20), int64(2), int64(20), int64(1))
	f.Add(blockMagic+"1\t1\t{}\n", int64(1), int64(1), int64(1), int64(1), int64(1))
	f.Add("{}", int64(1), int64(0), int64(0), int64(0), int64(0))
	f.Fuzz(func(t *testing.T, text string, n, at, seq, oldAt, oldSeq int64) {
		entries, err := decodeBlock(nil, text, logKey{at, seq}, logKey{oldAt, oldSeq}, "", n)
		if err != nil {
			require.ErrorIs(t, err, errCorruptBlock)
			require.Contains(t, err.Error(), runLogTable)
			return
		}
		if int64(len(entries)) != n || entries[0].key != (logKey{at, seq}) || entries[len(entries)-1].key != (logKey{oldAt, oldSeq}) {
			t.Fatalf("decoded %d entries of %d", len(entries), n)
		}
		for i, b := range entries {
			if i > 0 && !b.key.less(entries[i-1].key) {
				t.Fatalf("entry %d out of order", i)
			}
			if _, err := decodeBlockEntry(b, "1", "a"); err != nil && !strings.Contains(err.Error(), runLogTable) {
				t.Fatalf("entry error %v does not name the table", err)
			}
		}
	})
}

// openV6 returns a SQLite file database at schema version 6 whose run log
// holds the rows of openV5.
func openV6(t *testing.T, n int) (*sql.DB, []driver.RunLogEntry) {
	t.Helper()
	db, entries := openV5(t, n)
	for _, stmt := range migrations(engine.SQLite)[5] {
		_, err := db.Exec(stmt)
		require.NoError(t, err, "%s", stmt)
	}
	_, err := db.Exec(`INSERT INTO ` + schemaTable + ` (version) VALUES (6)`)
	require.NoError(t, err)
	return db, entries
}

// TestMigrateRunLogToVersion7: the rows of version 6 (one entry each) list
// as before after version 7, and with the blocks appended after them,
// which overlap them in time; the count bound prunes both.
func TestMigrateRunLogToVersion7(t *testing.T) {
	db, entries := openV6(t, 300)
	s := migrated(t, db)
	got, want := schemaVersions(t, db), allVersions()
	require.True(t, slices.Equal(got, want), "versions %v, want %v", got, want)
	ddl := runLogDDL(t, db)
	require.Contains(t, ddl, "WITHOUT ROWID", "the run log after version 7")
	require.True(t, strings.HasSuffix(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(ddl), "WITHOUT ROWID")), ")"), "the run log after version 7")
	l := s.RunLog(RunLogOptions{MaxPerEndpoint: 400, Now: func() time.Time { return runLogNow }}).(*runLog)
	checkLog(t, l, entries)
	// Among the old entries' instants (one a second over the last 600).
	batch := newBatch(func(i int) time.Time { return runLogNow.Add(-time.Duration(i)*time.Second - 500*time.Millisecond) })
	all := append(slices.Clone(entries), appendRecorded(t, l, batch)...)
	for _, id := range []string{"a", "b"} {
		want := keysOf(logModel(all, "1", id, 400))
		require.Equal(t, want, keysOf(listAll(t, l, "1", id, 37)), "List(%s) after the new batch", id)
	}
	require.Less(t, storedEntries(t, db), len(all))
}

// TestMigrateRunLogToVersion7CutShort: on SQLite, a migration to version 7
// that fails (a view of the run log stops the rename) leaves version 6 as
// it was; once the view is gone, Migrate completes and keeps every row.
func TestMigrateRunLogToVersion7CutShort(t *testing.T) {
	db, entries := openV6(t, 40)
	const view = `endpointkit_test_run_log_view7`
	_, err := db.Exec(`CREATE VIEW ` + view + ` AS SELECT entry FROM ` + runLogTable)
	require.NoError(t, err)
	s, err := New(db, engine.SQLite)
	require.NoError(t, err)
	if err := s.Migrate(context.Background()); err == nil || !strings.Contains(err.Error(), "version 7") {
		t.Fatalf("Migrate with the view: %v, want the migration to version 7 to fail", err)
	}
	got, want := schemaVersions(t, db), allVersions()[:6]
	require.True(t, slices.Equal(got, want), "versions after a failed migration %v, want %v", got, want)
	require.NotContains(t, runLogDDL(t, db), "oldest_seq", "the failed migration left")
	_, err = db.Exec(`DROP VIEW ` + view)
	require.NoError(t, err)
	require.NoError(t, s.Migrate(context.Background()))
	checkLog(t, s.RunLog(RunLogOptions{Now: func() time.Time { return runLogNow }}), entries)
}

// TestMigrateRunLogToVersion7Rerun: on PostgreSQL and MySQL, whose version
// 7 adds columns (MySQL committing each at once), a migration cut short
// after some of them runs again to the end, and the rows written before
// list after it.
func TestMigrateRunLogToVersion7Rerun(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			testdb.Require(t, e.env)
			db := e.open(t)
			d := e.dialect.(engine.Store)
			// Version 7 cut short after its first statement.
			migrateTo(t, db, d, 6, migrations(d)[6][0])
			_, err := db.Exec(rebind(d, `INSERT INTO `+runLogTable+` (project, endpoint_id, at_ns, seq, entry, key_id) VALUES (?, ?, ?, ?, ?, ?)`),
				"1", "a", runLogNow.UnixNano(), 1, `{"execution_id":"old","status":200}`, "k")
			require.NoError(t, err)
			s, err := New(db, e.dialect)
			require.NoError(t, err)
			require.NoError(t, s.Migrate(context.Background()), "Migrate after a cut")
			l := s.RunLog(RunLogOptions{Now: func() time.Time { return runLogNow }})
			ne := driver.RunLogEntry{ExecutionID: "new", ProjectID: "1", EndpointID: "a", At: runLogNow.Add(time.Second), Status: 200}
			require.NoError(t, l.Append(context.Background(), ne))
			got, _, err := l.List(context.Background(), "1", "a", driver.LogPage{Limit: 10})
			require.NoError(t, err)
			require.Len(t, got, 2, "List")
			require.Equal(t, "new", got[0].ExecutionID, "List")
			require.Equal(t, "old", got[1].ExecutionID, "List")
			require.Equal(t, "k", got[1].KeyID, "List")
		})
	}
}

// FuzzRunLogBlockEntry: an entry packed into a block reads back as its
// JSON form of version 6 does (invalid UTF-8 as U+FFFD), every field.
func FuzzRunLogBlockEntry(f *testing.F) {
	for _, e := range entryCases() {
		rows := -1
		if e.Rows != nil {
			rows = *e.Rows
		}
		f.Add(e.ExecutionID, e.ErrorCode, e.Refresh, e.TokenKeyID, e.Version, e.DurationMS, rows, e.Status, e.Cached, e.Token, e.At.UnixNano())
	}
	f.Fuzz(func(t *testing.T, id, code, refresh, kid string, version int, duration float64, rows, status int, cached, token bool, at int64) {
		e := driver.RunLogEntry{ExecutionID: id, ErrorCode: code, Refresh: refresh, TokenKeyID: kid, Version: version, DurationMS: duration,
			Status: status, Cached: cached, Token: token, Materialized: rows%2 == 0, At: time.Unix(0, at), ProjectID: "1", EndpointID: "a"}
		if rows >= 0 {
			e.Rows = &rows
			read := int64(rows) - 1<<40
			e.BytesRead = &read
		}
		var sc appendScratch
		var seq atomic.Uint64
		n, vals, err := sc.blocks([]driver.RunLogEntry{e, e}, 1<<62, &seq)
		jsonText, jsonErr := appendEntry(nil, e)
		require.Equal(t, jsonErr == nil, err == nil, "packing: %v; JSON form: %v", err, jsonErr)
		if err != nil {
			return
		}
		require.Equal(t, 1, n)
		newest := logKey{vals[2].(int64), vals[3].(int64)}
		oldest := logKey{vals[5].(int64), vals[6].(int64)}
		got, err := decodeBlock(nil, vals[8].(string), newest, oldest, "", vals[4].(int64))
		require.NoError(t, err, "decodeBlock(%q)", vals[8])
		require.Len(t, got, 2, "decodeBlock(%q)", vals[8])
		want := decoded(t, jsonText)
		for _, b := range got {
			g, err := decodeBlockEntry(b, "1", "a")
			require.NoError(t, err, "decodeBlockEntry(%q)", b.text)
			require.Equal(t, at, g.At.UnixNano())
			g.At, g.ProjectID, g.EndpointID, g.Seq = time.Time{}, "", "", 0
			require.Equal(t, want, g, "packed %+v\nread back", e)
		}
	})
}
