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

// TestRunAnswerAttack is an outsider's table of values a run answer may
// hold: replyRun must write each exactly as reply (encodeJSON) would, or
// decline it so that reply writes or refuses it; what it writes must be
// JSON.
func TestRunAnswerAttack(t *testing.T) {
	var nilPtr *int
	var nilMap map[string]any
	one := 1
	odd := time.FixedZone("odd", 5*3600+30*60+15)
	neg := time.FixedZone("neg", -(23*3600 + 59*60 + 59))
	bad := time.FixedZone("bad", 24*3600)
	at := time.Date(2026, 11, 26, 18, 0, 0, 1, time.UTC)
	cells := map[string]any{
		"empty json.Number":     json.Number(""),
		"invalid json.Number":   json.Number("abc"),
		"json.Number 01":        json.Number("01"),
		"json.Number injection": json.Number(`1,"x":2`),
		"json.Number -0.5e+3":   json.Number("-0.5e+3"),
		"uint64 max":            uint64(math.MaxUint64),
		"int8":                  int8(-3),
		"typed nil pointer":     nilPtr,
		"typed nil map":         nilMap,
		"pointer":               &one,
		"nil []byte":            []byte(nil),
		"empty []byte":          []byte{},
		"map with NaN":          map[string]any{"a": []any{math.NaN()}},
		"time odd zone":         at.In(odd),
		"time -23:59:59":        at.In(neg),
		"time +24:00":           at.In(bad),
		"time year 10000":       time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		"time year -1":          time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		"invalid UTF-8 string":  "a\xffb",
		"U+2028 string":         "a\u2028b<>&",
		"cell RawMessage":       json.RawMessage(` { "a" : 1 } `),
		"cell empty RawMessage": json.RawMessage{},
		"float32 max":           float32(math.MaxFloat32),
		"float -0":              math.Copysign(0, -1),
		"float 1e21":            1e21,
		"float 1e-7":            1e-7,
	}
	for name, v := range cells {
		checkRunAttack(t, name, &endpoint.RunResult{Columns: []string{"c"}, Results: [][]any{{v}}})
	}
	raws := map[string]json.RawMessage{
		"whitespace only":     json.RawMessage(" \n\t "),
		"empty":               json.RawMessage{},
		"spaced":              json.RawMessage(" [ [ 1 , \"a b\" ] ]\n"),
		"invalid UTF-8":       json.RawMessage("[[\"a\xffb\"]]"),
		"U+2028":              json.RawMessage("[[\"a\u2028b\u2029<>&\"]]"),
		"escaped quote":       json.RawMessage(`[["a\" ]b\\", " x "]]`),
		"trailing garbage":    json.RawMessage(`[[1]] x`),
		"two values":          json.RawMessage(`[1] [2]`),
		"not rows":            json.RawMessage(`{"k": "v"}`),
		"null":                json.RawMessage(`null`),
		"large, no spaces":    json.RawMessage(`[["` + string(make([]byte, 0)) + longString(3*flushAt) + `"]]`),
		"large, with a space": json.RawMessage(`[ ["` + longString(3*flushAt) + `" ] ]`),
	}
	for name, raw := range raws {
		checkRunAttack(t, "RawMessage "+name, &endpoint.RunResult{Columns: []string{"c"}, Results: raw})
	}
	checkRunAttack(t, "typed nil rows", &endpoint.RunResult{Results: [][]any(nil)})
	checkRunAttack(t, "nil row", &endpoint.RunResult{Results: [][]any{nil, {}}})
	checkRunAttack(t, "NaN elapsed", &endpoint.RunResult{Statistics: &endpoint.Statistics{ElapsedMS: math.NaN()}})
	checkRunAttack(t, "odd-zone refresh", &endpoint.RunResult{LastRefresh: ptrTo(at.In(odd)), EndpointVersionCreatedAt: ptrTo(at.In(bad))})
}

func longString(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a' + byte(i%26)
	}
	return string(b)
}

func ptrTo[T any](v T) *T { return &v }

// checkRunAttack fails unless replyRun answers r as encodeJSON writes it,
// or declines it when encodeJSON refuses it (or when it cannot tell).
func checkRunAttack(t *testing.T, name string, r *endpoint.RunResult) {
	t.Helper()
	want, werr := encodeJSON(r)
	rec := httptest.NewRecorder()
	if ok, _ := replyRun(rec, r); !ok {
		if assert.Equal(t, 0, rec.Body.Len(), "%s: declined, but wrote %q", name, rec.Body.String()) {
			assert.Empty(t, rec.Header(), "%s: declined, but wrote %q", name, rec.Body.String())
		}
		return
	}
	got := rec.Body.Bytes()
	switch {
	case werr != nil:
		t.Errorf("%s: written %q, but encoding/json refuses it: %v", name, got, werr)
	case string(got) != string(want):
		t.Errorf("%s:\n got  %q\n want %q", name, got, want)
	case !json.Valid(got):
		t.Errorf("%s: not JSON: %q", name, got)
	}
}

// TestValidNumberAgrees checks validNumber against encoding/json's own
// check of a json.Number.
func TestValidNumberAgrees(t *testing.T) {
	for _, s := range []string{"0", "-0", "1", "-12", "01", "-01", "1.", ".5", "1.5", "1e", "1e+", "1e5", "1E-5", "-0.5e+3",
		"+1", "-", "abc", "1 ", " 1", "0x10", "1_0", "Inf", "NaN", "1.5.5", "00", "0e0", "9999999999999999999999"} {
		_, err := json.Marshal(json.Number(s))
		got := validNumber(s)
		assert.Equal(t, err == nil, got, "validNumber(%q) = %v, encoding/json: %v", s, got, err)
	}
	assert.False(t, validNumber(""), "validNumber(\"\") is true: encoding/json writes it as 0, appendValue as nothing")
}

// TestAppendValueNumbersAndNilBytes checks that every format writes a
// json.Number and a nil []byte as encoding/json does: "" as 0, a text that
// is not a number refused (never written as JSON of its own), nil as null
// (an empty CSV field).
func TestAppendValueNumbersAndNilBytes(t *testing.T) {
	for _, tc := range []struct {
		v          any
		json, csv  string
		notANumber bool
	}{
		{json.Number(""), "0", "0", false},
		{json.Number("-1.5e3"), "-1.5e3", "-1.5e3", false},
		{json.Number("abc"), "", "", true},
		{json.Number(`1,"x":2`), "", "", true},
		{[]byte(nil), "null", "", false},
		{[]byte{}, `""`, "", false},
	} {
		for _, inJSON := range []bool{true, false} {
			got, err := appendValue(nil, tc.v, inJSON)
			var invalid invalidNumberError
			if tc.notANumber {
				assert.ErrorAs(t, err, &invalid, "appendValue(%#v, %v) = %q", tc.v, inJSON, got)
				continue
			}
			want := tc.json
			if !inJSON {
				want = tc.csv
			}
			if assert.NoError(t, err, "appendValue(%#v, %v) = %q, %v; want %q", tc.v, inJSON, got, err, want) {
				assert.Equal(t, want, string(got), "appendValue(%#v, %v) = %q, %v; want %q", tc.v, inJSON, got, err, want)
			}
		}
	}
}

// TestReplyNotANumber checks that a run answer holding a json.Number that
// is not a number is a 502 naming it, not a 500.
func TestReplyNotANumber(t *testing.T) {
	h := &handler{}
	err := h.reply(httptest.NewRecorder(), httptest.NewRequest("POST", "/", nil), 200,
		&endpoint.RunResult{Results: [][]any{{json.Number("abc")}}})
	var e *endpoint.Error
	if !errors.As(err, &e) || e.Status != 502 || e.Code != CodeResultNotEncodable || !strings.Contains(e.Detail, `"abc"`) {
		t.Errorf("reply = %v, want a 502 %s naming \"abc\"", err, CodeResultNotEncodable)
	}
}
