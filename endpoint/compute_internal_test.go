package endpoint

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestResultKeyAllocations: a SQL run's key costs one allocation, its
// string; the buffer it is written in stays on the stack (it moved to the
// heap while the parts were written through a pointer).
func TestResultKeyAllocations(t *testing.T) {
	s := &Service{}
	ep := &driver.Endpoint{ProjectID: "1", ID: "0192f1a2-7c3e-7d4a-9b1c-000000000001"}
	c := &compiled{vars: []variable.Variable{{CodeName: "country"}, {CodeName: "min_amount"}}}
	values := map[string]any{"country": "US", "min_amount": int64(10)}
	opts := runOptions{version: 2, limit: 100}
	require.NotEqual(t, "", s.resultKey(ep, c, nil, values, opts, time.Time{}), "no key")
	assert.Equal(t, float64(1), testing.AllocsPerRun(100, func() { s.resultKey(ep, c, nil, values, opts, time.Time{}) }), "resultKey")
}

// TestFlightAllocations: a run that no other run joins allocates nothing
// in its flight: no channel to wait on, its record from the flight's pool.
func TestFlightAllocations(t *testing.T) {
	var g flightGroup
	ctx := context.Background()
	res := &RunResult{}
	fn := func() (*RunResult, error) { return res, nil }
	if got, _, shared, _ := g.do(ctx, "k", fn); shared || got != res { // makes the map
		t.Errorf("a run no other joined: shared %v, the answer fn returned %v; want its own answer, unshared", shared, got == res)
	}
	if n := testing.AllocsPerRun(100, func() { g.do(ctx, "k", fn) }); n != 0 { //nolint:errcheck // fn does not fail
		t.Errorf("an unshared flight: %v allocations, want 0", n)
	}
}

// TestFlightJoined: the runs that join a flight under way wait for it and
// get each a copy of its answer, its results as JSON and their count; the
// computing run gets the answer it computed. The channel they wait on is
// made by the first of them, and closed when the flight ends.
func TestFlightJoined(t *testing.T) {
	var g flightGroup
	ctx := context.Background()
	res := &RunResult{Name: "computed", Columns: []string{"n"}, Types: []string{"INTEGER"}, Results: [][]any{{int64(1)}, {int64(2)}}}
	var calls atomic.Int64
	started, release := make(chan struct{}), make(chan struct{})
	leader := make(chan *RunResult, 1)
	go func() {
		got, _, _, _ := g.do(ctx, "k", func() (*RunResult, error) {
			calls.Add(1)
			close(started)
			<-release
			return res, nil
		})
		leader <- got
	}()
	<-started
	wait, results, rows, shared := joinRuns(ctx, &g, 5, func() (*RunResult, error) {
		calls.Add(1) // a run that came after the flight ended
		return res, nil
	})
	// At least one run has joined once the flight's channel exists.
	untilWaiting(&g, func(n int) bool { return n > 0 })
	close(release)
	wait()
	joined := 0
	for i := range results {
		assert.Equal(t, 2, rows[i], "run %d", i)
		if !shared[i] {
			if results[i] != res {
				t.Errorf("run %d computed alone but answered %v, not what it computed", i, results[i])
			}
			continue
		}
		joined++
		got := results[i]
		raw, ok := got.Results.(json.RawMessage)
		if got == res || !ok || string(raw) != "[[1],[2]]" || got.Name != "computed" || &got.Columns[0] == &res.Columns[0] || got.Types[0] != "INTEGER" {
			t.Errorf("run %d joined and answered %+v (results %T), want its own copy of the answer with its rows as JSON", i, got, got.Results)
		}
	}
	if <-leader != res {
		t.Error("the flight's computing run did not get the answer it computed")
	}
	if joined == 0 || calls.Load() != int64(1+len(results)-joined) {
		t.Errorf("%d runs joined, %d computations; want at least one joined, and one computation for the flight and each run that did not join", joined, calls.Load())
	}
}

// TestInsightDecodedOnce: the decoded insight query is cached with the
// version at save, and runs use that very value instead of decoding again.
func TestInsightDecodedOnce(t *testing.T) {
	ctx := context.Background()
	s, exec := newNoRows(t)
	q := Query{Kind: KindTrends, Insight: []byte(`{"kind": "TrendsQuery", "series": [{"kind": "EventsNode", "event": "$pageview"}],
		"breakdownFilter": {"breakdown": "$browser", "breakdown_type": "event"}}`)}
	ep, err := s.Create(ctx, "1", CreateRequest{Name: "t", Query: &q})
	require.NoError(t, err)
	c, _, _, _ := s.cache.get(cacheKey{"1", ep.ID, 1})
	if c == nil || c.insight == nil || len(c.insight.Breakdowns) != 1 || c.insight.Breakdowns[0].Property != "$browser" {
		t.Fatalf("cached after create: %+v", c)
	}
	saved := *c.insight
	for _, vars := range []map[string]any{nil, {"$browser": "Chrome", "date_from": "2025-05-01"}} {
		_, err := s.Run(ctx, "1", "t", RunRequest{Variables: vars})
		require.NoError(t, err)
		again, _, _, _ := s.cache.get(cacheKey{"1", ep.ID, 1})
		if again != c {
			t.Fatal("a run replaced the cached compiled version")
		}
	}
	if exec.Queries() != 2 || len(c.insight.Properties) != len(saved.Properties) || c.insight.DateRange != saved.DateRange {
		t.Fatalf("queries %d; the cached query was changed by a run: %+v", exec.Queries(), c.insight)
	}
}

// TestCacheFillIsTheWholeEncoding: the rows a streamed run encodes for the
// result cache, one at a time, are the JSON encodeResults writes of them
// whole, byte for byte, by appendRowJSON or encoding/json: a float
// column's integral values as floats (256.0), an integer there as it is,
// HTML characters as they are, escapes, invalid UTF-8, NULL, booleans,
// bytes and times; and no rows is "[]".
func TestCacheFillIsTheWholeEncoding(t *testing.T) {
	s := &Service{cfg: Config{MaxCachedAnswerBytes: 1 << 20}}
	kinds := []ColumnKind{KindInteger, KindFloat, KindString, KindString, KindString}
	at := time.Date(2025, 1, 2, 3, 4, 5, 600, time.UTC)
	rows := [][]any{
		{int64(1), 256.0, "<b>&</b>", nil, []byte("xy")},
		{int64(-2), 2.5, "\"quoted\"", at, "é"},
		{int64(3), float32(4), "", nil, nil},
		{int64(4), int64(7), "tab\t\x00 \xff \u2028", true, 1e21},
		{int64(5), 1e-7, "日本", false, -0.0},
		{int64(math.MaxInt64), -3.0, nil, nil, 123456789.125},
	}
	f := s.newCacheFill("k", kinds)
	for _, r := range rows {
		f.add(r)
	}
	require.NoError(t, f.err)
	want, ok := encodeResults(rows, kinds)
	require.True(t, ok)
	assert.Equal(t, string(want), string(append(f.buf, ']')))
	assert.Equal(t, 256.0, rows[0][1], "the rows are left as they were")

	for _, r := range rows[3:] {
		_, ok := appendRowJSON(nil, r, kinds)
		assert.True(t, ok, "%v: written without encoding/json", r)
	}
	empty := s.newCacheFill("k", kinds)
	assert.Equal(t, "[]", string(append(empty.buf, ']')))
}

// TestCacheFillBounded: a fill holds at most MaxCachedAnswerBytes; past it,
// it lets go of what it held and says why (ErrAnswerNotCached); a value
// JSON cannot carry drops it too.
func TestCacheFillBounded(t *testing.T) {
	const limit = 1000
	s := &Service{cfg: Config{MaxCachedAnswerBytes: limit}}
	f := s.newCacheFill("k", []ColumnKind{KindInteger, KindString})
	for i := range 200 {
		f.add([]any{int64(i), "a value of some length"})
		if f.err != nil {
			break
		}
		assert.LessOrEqual(t, cap(f.buf), limit, "the buffer never grows past the bound")
	}
	require.ErrorIs(t, f.err, ErrAnswerNotCached)
	assert.Contains(t, f.err.Error(), "max_cached_answer_bytes (1000 bytes)")
	assert.Nil(t, f.buf)
	f.add([]any{int64(1), "x"})
	assert.Nil(t, f.buf, "a dropped fill stays dropped")

	nan := s.newCacheFill("k", []ColumnKind{KindFloat})
	nan.add([]any{math.NaN()})
	require.ErrorIs(t, nan.err, ErrAnswerNotCached)
	assert.True(t, errors.Is(nan.err, notCachedNotJSON))
}

// TestCastValueKeepsItsKindsValues: a value already of its column kind's
// Go type is cast without an allocation (every cell of every answer and
// export row is cast), and comes back equal.
func TestCastValueKeepsItsKindsValues(t *testing.T) {
	for _, tc := range []struct {
		k ColumnKind
		v any
	}{
		{KindInteger, int64(1_000_000)},
		{KindFloat, 1.25e6},
		{KindDecimal, "99220.50"},
		{KindString, "user-12345"},
		{KindBoolean, true},
		{KindTime, "2025-05-01 12:00:00"},
	} {
		var got any
		var ok bool
		allocs := testing.AllocsPerRun(100, func() { got, ok = castValue(tc.k, tc.v) })
		require.True(t, ok, "%s %v", tc.k, tc.v)
		require.Equal(t, tc.v, got, "%s", tc.k)
		require.Zero(t, allocs, "casting %T %v to %q allocates", tc.v, tc.v, tc.k)
	}
}

// TestTableOfOldLayoutDoesNotServe: a stored table built under a key
// without materialize's Layout (before an upgrade that stores tables
// differently) does not serve a run, which goes inline until a refresh
// builds the table anew; the table of the current key serves.
func TestTableOfOldLayoutDoesNotServe(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	built := now.Add(-time.Minute)
	c := &compiled{vars: []variable.Variable{{CodeName: "from", Type: variable.Date}}}
	e := &driver.Endpoint{CurrentVersion: 3, IsMaterialized: true}
	e.MaterializationState.Table = "ek_mat_1"
	e.MaterializationState.At = &built
	// The key as releases before Layout wrote it.
	e.MaterializationState.Built = "v3;" + bucketKey(e.MaterializationBuckets) + "tail=" + e.MaterializationTailColumn + ";" + c.varsKey()
	s := &Service{}
	_, _, ok := s.servingTable(e, c, now)
	assert.False(t, ok, "a table of the old layout serves")

	e.MaterializationState.Built = tableKey(e, c)
	table, at, ok := s.servingTable(e, c, now)
	require.True(t, ok, "the table of the current key does not serve")
	assert.Equal(t, "ek_mat_1", table)
	assert.Equal(t, built, at)
}

// TestTailTableServesThroughItsRefresh: a table with a live tail serves
// for Config.RefreshTimeout beyond its freshness period, so that runs do
// not go inline while the refresh the scheduler starts at the start of
// the day builds the next one, yet it is stale (RefreshStale refreshes
// it) once the period has passed; a table without a tail stops serving
// at its period.
func TestTailTableServesThroughItsRefresh(t *testing.T) {
	now := time.Date(2025, 6, 1, 0, 3, 0, 0, time.UTC)
	c := &compiled{vars: []variable.Variable{{CodeName: "from", Type: variable.Date}}}
	s := &Service{cfg: Config{RefreshTimeout: 5 * time.Minute}}
	for _, tc := range []struct {
		tail         string
		age          time.Duration
		serves, past bool
	}{
		{"timestamp", 24*time.Hour - time.Second, true, false},
		{"timestamp", 24*time.Hour + 4*time.Minute, true, true},
		{"timestamp", 24*time.Hour + 6*time.Minute, false, true},
		{"", 24*time.Hour - time.Second, true, false},
		{"", 24*time.Hour + time.Second, false, true},
	} {
		built := now.Add(-tc.age)
		e := &driver.Endpoint{CurrentVersion: 1, IsMaterialized: true, MaterializationTailColumn: tc.tail}
		e.MaterializationState.Table, e.MaterializationState.At = "ek_mat_1", &built
		e.MaterializationState.Built = tableKey(e, c)
		_, _, ok := s.servingTable(e, c, now)
		assert.Equal(t, tc.serves, ok, "tail %q, %v old: serves", tc.tail, tc.age)
		assert.Equal(t, !tc.past, s.withinPeriod(e, c, now), "tail %q, %v old: within its period", tc.tail, tc.age)
	}
}

// TestTailGraceServesOnlyItsOwnTable: the grace past the freshness period
// serves the table of the current key alone: one of an older version,
// other buckets, another tail column or none, or not materialized any
// more does not serve, in its period or its grace, and the grace is
// DefaultRefreshTimeout when refreshes are not bounded (a negative
// RefreshTimeout).
func TestTailGraceServesOnlyItsOwnTable(t *testing.T) {
	now := time.Date(2025, 6, 1, 0, 3, 0, 0, time.UTC)
	c := &compiled{vars: []variable.Variable{{CodeName: "from", Type: variable.Date}}}
	current := func(age time.Duration) *driver.Endpoint {
		built := now.Add(-age)
		e := &driver.Endpoint{CurrentVersion: 2, IsMaterialized: true, MaterializationTailColumn: "timestamp"}
		e.MaterializationState.Table, e.MaterializationState.At = "ek_mat_1", &built
		e.MaterializationState.Built = tableKey(e, c)
		return e
	}
	s := &Service{cfg: Config{RefreshTimeout: -1}}
	for _, age := range []time.Duration{time.Hour, 24*time.Hour + 9*time.Minute} {
		_, _, ok := s.servingTable(current(age), c, now)
		require.True(t, ok, "the current table, %v old, does not serve", age)
		for name, change := range map[string]func(e *driver.Endpoint){
			"a newer version":      func(e *driver.Endpoint) { e.CurrentVersion = 3 },
			"other buckets":        func(e *driver.Endpoint) { e.MaterializationBuckets = map[string]engine.Bucket{"from": engine.Hour} },
			"another tail column":  func(e *driver.Endpoint) { e.MaterializationTailColumn = "created_at" },
			"no tail column":       func(e *driver.Endpoint) { e.MaterializationTailColumn = "" },
			"not materialized now": func(e *driver.Endpoint) { e.IsMaterialized = false },
		} {
			e := current(age)
			change(e)
			_, _, ok := s.servingTable(e, c, now)
			assert.False(t, ok, "after %s, the table %v old serves", name, age)
		}
	}
	_, _, ok := s.servingTable(current(24*time.Hour+11*time.Minute), c, now)
	assert.False(t, ok, "a table past its period and DefaultRefreshTimeout serves")
}
