package httpapi

import (
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkAppendRunResult fails unless appendRunResult writes r as
// encodeJSON does, or declines it exactly when wantOK is false.
func checkAppendRunResult(t *testing.T, name string, r *endpoint.RunResult, wantOK bool) {
	t.Helper()
	got, ok := appendRunResult(nil, r)
	if !assert.Equal(t, wantOK, ok, "%s: ok", name) {
		return
	}
	want, err := encodeJSON(r)
	if !ok {
		return
	}
	if !assert.NoError(t, err, "%s: written, but encoding/json refuses it", name) {
		return
	}
	assert.Equal(t, string(want), string(got), "%s:\n got  %s\n want %s", name, got, want)
}

func TestAppendRunResult(t *testing.T) {
	at := time.Date(2025, 5, 1, 12, 30, 0, 123456789, time.UTC)
	paris := time.Date(2025, 5, 1, 12, 30, 0, 0, time.FixedZone("CEST", 2*3600))
	n, m := int64(12), int64(0)
	full := func() *endpoint.RunResult {
		return &endpoint.RunResult{
			Name: "by_event", EndpointVersion: 3,
			Columns: []string{"event", "n", "avg <&> \"q\""}, Types: []string{"TEXT", "INTEGER", "REAL"},
			Results: [][]any{
				{"purchase", int64(110), 1.5},
				{"a\u2028b\x00\x1f\t\n\\\"é\xff", int64(-1), 1e-7},
				{nil, int32(7), float32(0.1)},
				{true, false, 1e21},
				{json.Number("12.50"), []byte("bin"), at},
				{int(3), paris, 0.0},
				{map[string]any{"k": []any{1, "<x>"}}, []any{"y"}, uint8(9)},
			},
			HasMore: true, EndpointMaterialized: true, EndpointMaterializedAt: &at,
			InlineReason: "older version asked", ExecutionID: "0197-abc",
			EndpointVersionCreatedAt: &paris, IsCached: false, LastRefresh: &at,
			Statistics: &endpoint.Statistics{ElapsedMS: 0.123, RowsRead: &n, BytesRead: &m},
		}
	}
	checkAppendRunResult(t, "full", full(), true)
	checkAppendRunResult(t, "zero", &endpoint.RunResult{}, true)
	checkAppendRunResult(t, "no rows", &endpoint.RunResult{Columns: []string{}, Types: []string{}, Results: [][]any{}}, true)
	checkAppendRunResult(t, "nil row", &endpoint.RunResult{Results: [][]any{nil, {}}}, true)
	checkAppendRunResult(t, "nil rows", &endpoint.RunResult{Results: [][]any(nil)}, true)
	checkAppendRunResult(t, "cached", &endpoint.RunResult{IsCached: true, Results: json.RawMessage(` [ ["a" , 1],[ null ] ] `)}, true)
	checkAppendRunResult(t, "statistics without reads", &endpoint.RunResult{Statistics: &endpoint.Statistics{ElapsedMS: 1e-9}}, true)

	r := full()
	r.Debug = &endpoint.DebugInfo{SQL: "SELECT 1"}
	checkAppendRunResult(t, "debug", r, false)
	r = full()
	r.Results = [][]any{{math.NaN()}}
	checkAppendRunResult(t, "NaN", r, false)
	r = full()
	r.Results = [][]any{{math.Inf(-1)}}
	checkAppendRunResult(t, "infinity", r, false)
	r = full()
	r.Statistics.ElapsedMS = math.Inf(1)
	checkAppendRunResult(t, "infinite elapsed", r, false)
	r = full()
	y := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	r.LastRefresh = &y
	checkAppendRunResult(t, "year 10000", r, false)
	r = full()
	odd := time.Date(2025, 1, 1, 0, 0, 0, 0, time.FixedZone("", 24*3600))
	r.EndpointMaterializedAt = &odd
	checkAppendRunResult(t, "offset of 24 hours", r, false)
	r = full()
	r.Results = [][]any{{odd}}
	checkAppendRunResult(t, "offset of 24 hours in a row", r, false)
	r = full()
	r.Results = map[string]any{"series": 1}
	checkAppendRunResult(t, "insight", r, false)
	r = full()
	r.Results = json.RawMessage(`[1,`)
	checkAppendRunResult(t, "broken cached rows", r, false)
}

// TestReplyRun checks that an answer written by replyRun is the one reply
// writes, headers included, and that a declined one writes nothing.
func TestReplyRun(t *testing.T) {
	res := &endpoint.RunResult{Name: "x", Columns: []string{"a"}, Types: []string{"TEXT"}, Results: [][]any{{"<b>"}}}
	fast := httptest.NewRecorder()
	ok, _ := replyRun(fast, res)
	require.True(t, ok, "declined")
	slow := httptest.NewRecorder()
	h := &handler{}
	require.NoError(t, h.reply(slow, httptest.NewRequest("POST", "/", nil), 200, res))
	if assert.Equal(t, slow.Body.String(), fast.Body.String(), "fast %d %s, reply %d %s", fast.Code, fast.Body, slow.Code, slow.Body) {
		assert.Equal(t, slow.Code, fast.Code, "fast %d %s, reply %d %s", fast.Code, fast.Body, slow.Code, slow.Body)
	}
	for _, k := range []string{"Content-Type", "X-Content-Type-Options"} {
		assert.Equal(t, slow.Header().Get(k), fast.Header().Get(k), "%s: fast", k)
	}
	declined := httptest.NewRecorder()
	if ok, _ := replyRun(declined, &endpoint.RunResult{Results: [][]any{{math.NaN()}}}); ok {
		t.Fatal("NaN written")
	}
	if declined.Body.Len() != 0 || len(declined.Header()) != 0 {
		t.Errorf("a declined answer wrote %q %v", declined.Body, declined.Header())
	}
}

// FuzzAppendRunResult checks appendRunResult against encodeJSON on
// answers built from arbitrary values.
func FuzzAppendRunResult(f *testing.F) {
	f.Add("by_event", "é\u2028<>&\"", int64(7), 1.5, int64(1746100000), int32(3600), true, []byte(` [1, "a"] `))
	f.Add("", "\xff\x00", int64(-1), 1e-300, int64(-99999999999), int32(-86399), false, []byte(`{}`))
	f.Fuzz(func(t *testing.T, name, s string, i int64, fl float64, unix int64, offset int32, flag bool, raw []byte) {
		at := time.Unix(unix, int64(offset)).In(time.FixedZone("z", int(offset)))
		r := &endpoint.RunResult{
			Name: name, EndpointVersion: int(i), Columns: []string{s, name}, Types: []string{s},
			Results: [][]any{{s, i, fl, flag, nil, at, []byte(s), json.Number("1")}},
			HasMore: flag, InlineReason: s, ExecutionID: name, LastRefresh: &at, EndpointMaterializedAt: &at,
			Statistics: &endpoint.Statistics{ElapsedMS: fl, RowsRead: &i},
		}
		if _, err := appendTimeText(nil, at, true); timeEncodable(at) != (err == nil) {
			t.Errorf("timeEncodable(%s) = %v, but appendTimeText says %v", at, timeEncodable(at), err)
		}
		_, err := encodeJSON(r)
		checkAppendRunResult(t, "rows", r, err == nil)
		r.Results = json.RawMessage(raw)
		_, err = encodeJSON(r)
		checkAppendRunResult(t, "cached", r, err == nil)
		if err == nil && len(raw) > 0 {
			// Large enough to be written in pieces: as one.
			big := []byte{'['}
			for len(big) < 3*flushAt {
				big = append(append(big, raw...), " ,\n"...)
			}
			r.Results = json.RawMessage(append(big, "0 ]"...))
			checkReplyRun(t, "large cached", r)
			r.Results = slices.Repeat([][]any{{s, i, at}}, 1+3*flushAt/(len(s)+40))
			checkReplyRun(t, "large rows", r)
		}
	})
}

// pieces is a ResponseWriter that keeps every Write apart and fails those
// after failAfter, when it is not zero.
type pieces struct {
	httptest.ResponseRecorder
	writes    []int
	failAfter int
}

func (p *pieces) Write(b []byte) (int, error) {
	if p.failAfter > 0 && len(p.writes) >= p.failAfter {
		return 0, errors.New("the client went away")
	}
	p.writes = append(p.writes, len(b))
	return p.ResponseRecorder.Write(b)
}

// checkReplyRun fails unless replyRun writes r as encodeJSON does.
func checkReplyRun(t *testing.T, name string, r *endpoint.RunResult) *pieces {
	t.Helper()
	want, err := encodeJSON(r)
	require.NoError(t, err, "%s", name)
	w := &pieces{ResponseRecorder: *httptest.NewRecorder()}
	ok, _ := replyRun(w, r)
	require.True(t, ok, "%s: declined", name)
	got := w.Body.String()
	assert.Equal(t, string(want), got, "%s: replyRun wrote %d bytes, encodeJSON %d; they differ", name, len(got), len(want))
	return w
}

// TestReplyRunStreams checks that a large answer is written in pieces as
// it is encoded, none much larger than flushAt, and that a cached answer
// without spaces is written from the cache's bytes as they are.
func TestReplyRunStreams(t *testing.T) {
	cell := strings.Repeat("x", 1000)
	rows := slices.Repeat([][]any{{cell, int64(7), 1.5}}, 4000) // about 4 MB
	res := &endpoint.RunResult{Name: "big", Columns: []string{"s", "n", "f"}, Types: []string{"TEXT", "INTEGER", "REAL"}, Results: rows}
	w := checkReplyRun(t, "rows", res)
	got := len(w.writes)
	assert.GreaterOrEqual(t, got, int(4<<20/(2*flushAt)), "rows: %d writes, want one every %d bytes or so", got, flushAt)
	for _, n := range w.writes {
		require.LessOrEqual(t, n, flushAt+len(cell)+64, "rows: a write of")
	}
	raw, err := json.Marshal(rows)
	require.NoError(t, err)
	res.Results = json.RawMessage(raw)
	w = checkReplyRun(t, "cached, compact", res)
	assert.True(t, slices.Contains(w.writes, len(raw)), "cached, compact: writes %v, want one of the whole %d bytes, from the cache", w.writes, len(raw))
	spaced, err := json.MarshalIndent(rows[:100], " ", "\t")
	require.NoError(t, err)
	res.Results = json.RawMessage(spaced)
	checkReplyRun(t, "cached, indented", res)
}

// TestReplyRunHoldsNoCopy checks that writing a 4 MB answer allocates a
// small part of it: the answer is not encoded whole before it is sent.
func TestReplyRunHoldsNoCopy(t *testing.T) {
	rows := slices.Repeat([][]any{{strings.Repeat("x", 1000), int64(7)}}, 4000)
	res := &endpoint.RunResult{Name: "big", Columns: []string{"s", "n"}, Types: []string{"TEXT", "INTEGER"}, Results: rows}
	w := &pieces{ResponseRecorder: *httptest.NewRecorder(), failAfter: 1 << 30}
	replyRun(w, res) // warm the pool
	w.Body = nil
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 4 {
		w.writes = w.writes[:0]
		ok, _ := replyRun(w, res)
		require.True(t, ok, "declined")
	}
	runtime.ReadMemStats(&after)
	got, most := (after.TotalAlloc-before.TotalAlloc)/4, uint64(512<<10)
	assert.LessOrEqual(t, got, most, "replyRun allocated")
}

// TestReplyRunClientGone checks that a write that fails ends the answer
// (nothing more is encoded or written) and is handed back to be logged.
func TestReplyRunClientGone(t *testing.T) {
	rows := slices.Repeat([][]any{{strings.Repeat("x", 1000)}}, 4000)
	w := &pieces{ResponseRecorder: *httptest.NewRecorder(), failAfter: 2}
	ok, werr := replyRun(w, &endpoint.RunResult{Results: rows})
	require.True(t, ok, "declined")
	assert.ErrorIs(t, werr, errWrite, "replyRun's werr")
	assert.Len(t, w.writes, 2)
}

// TestHeaderKeysCanonical checks the header keys set without Header.Set
// are the canonical ones Set would have written.
func TestHeaderKeysCanonical(t *testing.T) {
	for _, k := range []string{RequestIDHeader, "Content-Type", "X-Content-Type-Options"} {
		assert.Equal(t, k, http.CanonicalHeaderKey(k))
	}
}

// TestAppendRunResultKnowsEveryField fails when RunResult gains a field:
// appendRunResult writes the fields by name, so a new one must be written
// there too (an omitempty one would pass the other tests unseen).
func TestAppendRunResultKnowsEveryField(t *testing.T) {
	var got []string
	rt := reflect.TypeOf(endpoint.RunResult{})
	for i := range rt.NumField() {
		if f := rt.Field(i); f.IsExported() {
			got = append(got, f.Tag.Get("json"))
		}
	}
	want := []string{"name", "endpoint_version", "columns", "types", "results", "hasMore",
		"endpoint_materialized", "endpoint_materialized_at,omitempty", "inline_reason,omitempty",
		"execution_id", "endpoint_version_created_at", "is_cached", "last_refresh", "statistics",
		"debug,omitempty"}
	assert.True(t, slices.Equal(got, want), "RunResult's fields are %q; appendRunResult writes %q: write the new ones there", got, want)
	st := reflect.TypeOf(endpoint.Statistics{})
	assert.Equal(t, 3, st.NumField(), "Statistics has")
}
