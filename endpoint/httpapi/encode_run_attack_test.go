package httpapi

import (
	"encoding/json"
	"errors"
	"math"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/stretchr/testify/assert"
)

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
