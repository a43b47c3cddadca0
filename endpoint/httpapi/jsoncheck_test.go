package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckJSON(t *testing.T) {
	many := func(n int, dupAt int) string {
		var b strings.Builder
		b.WriteString("{")
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			k := i
			if i == dupAt {
				k = 3
			}
			fmt.Fprintf(&b, `"k%d": %d`, k, i)
		}
		b.WriteString("}")
		return b.String()
	}
	cases := []struct {
		name   string
		body   string
		detail string // "" when the body passes
		attr   string
	}{
		{"object", `{"variables": {"from": "2025-05-01", "to": "2025-05-02"}, "limit": 1}`, "", ""},
		{"every kind of value", `{"a": [1, -2.5e+3, 0, true, false, null, "s", {}, [], {"b": [{"c": 1}]}], "d": "\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00"}`, "", ""},
		{"same key in sibling objects", `{"a": {"x": 1}, "b": {"x": 2}, "c": [{"x": 1}, {"x": 2}]}`, "", ""},
		{"keys differing in case", `{"variables": {"from": 1, "From": 2}}`, "", ""},
		{"key equal to a value", `{"a": "b", "b": "a"}`, "", ""},
		{"a literal U+FFFD", `{"a": "` + "\uFFFD" + `", "b": "\ufffd"}`, "", ""},
		{"50 distinct keys", many(50, -1), "", ""},
		{"deep but fine", strings.Repeat(`{"a":`, 500) + "1" + strings.Repeat("}", 500), "", ""},

		{"top-level duplicate", `{"name": "a", "name": "b"}`, `Duplicate key "name" in the request body at byte 14`, "name"},
		{"nested duplicate", `{"variables": {"from": "x", "to": "y", "from": "z"}}`, `Duplicate key "from" in 'variables' at byte 39`, "variables.from"},
		{"duplicate in an array's object", `{"query": {"series": [{"event": "a"}, {"event": "b", "event": "c"}]}}`, `Duplicate key "event" in 'query.series.1'`, "query.series.1.event"},
		{"escaped duplicate", `{"ab": 1, "\u0061b": 2}`, `Duplicate key "ab"`, "ab"},
		{"escaped slash duplicate", `{"a/b": 1, "a\/b": 2}`, `Duplicate key "a/b"`, "a/b"},
		{"duplicate past the linear scan", many(40, 30), `Duplicate key "k3"`, "k3"},
		{"duplicate empty key", `{"": 1, "": 2}`, `Duplicate key ""`, ""},
		{"duplicate after a closed object", `{"a": {"b": 1, "c": 2}, "d": 1, "a": 2}`, `Duplicate key "a" in the request body`, "a"},

		{"invalid UTF-8 in a value", "{\"a\": \"x\xffy\"}", "not valid UTF-8: byte 0xff at byte 8", ""},
		{"invalid UTF-8 in a key", "{\"\xc3\": 1}", "byte 0xc3 at byte 2", ""},
		{"overlong encoding", "{\"a\": \"\xc0\xaf\"}", "byte 0xc0 at byte 7", ""},
		{"encoded surrogate", "{\"a\": \"\xed\xa0\x80\"}", "byte 0xed at byte 7", ""},
		{"lone high surrogate", `{"a": "\ud800"}`, `at byte 7: \ud800 is half of a UTF-16 surrogate pair`, ""},
		{"lone low surrogate", `{"a": "x\udc00"}`, `at byte 8: \udc00 is half`, ""},
		{"high then not low", `{"a": "\ud83d\u0041"}`, `\ud83d is half`, ""},
		{"high at the end", `{"a": "\ud83d`, `\ud83d is half`, ""},
		{"surrogate in a key", `{"\udfff": 1}`, `\udfff is half`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := checkJSON([]byte(c.body))
			if c.detail == "" {
				require.NoError(t, err)
				return
			}
			var e *endpoint.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, 400, e.Status)
			assert.Equal(t, CodeParseError, e.Code)
			assert.ErrorIs(t, e, endpoint.ErrInvalid)
			assert.Contains(t, e.Detail, c.detail)
			assert.Equal(t, c.attr, e.Attr)
		})
	}
}

// TestCheckJSONLeavesSyntaxToEncodingJSON: a body that is not JSON passes
// the check, so that encoding/json's message explains it.
func TestCheckJSONLeavesSyntaxToEncodingJSON(t *testing.T) {
	for _, body := range []string{``, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `{} {}`, `01`, `1.`, `1e`, `-`, `tru`, `nul`, `"\x"`, `"\u12"`, "\"a\x01\"", `{"a":1 "b":2}`, `[}`, `{]`, strings.Repeat("[", maxDepth+1)} {
		assert.NoError(t, checkJSON([]byte(body)), "%q", body)
		assert.False(t, json.Valid([]byte(body)), "%q is not JSON: json.Valid([]byte(body)) is true", body)
	}
}

// TestCheckJSONReuse: a checker taken back from the pool after a failure
// or a large body holds nothing of it.
func TestCheckJSONReuse(t *testing.T) {
	var big strings.Builder
	big.WriteString("{")
	for i := range 3000 {
		fmt.Fprintf(&big, `"k%d": [{"a": 1}], `, i)
	}
	big.WriteString(`"k7": 0}`)
	for range 3 {
		require.Error(t, checkJSON([]byte(`{"a": {"b": 1, "b": 2}}`)))
		require.Error(t, checkJSON([]byte(`{"a": {"b": [{"c": 1, "c": `)))
		require.NoError(t, checkJSON([]byte(`{"a": {"b": [{"c": 1, "d"`)), "malformed: left to encoding/json")
		err := checkJSON([]byte(big.String()))
		require.ErrorContains(t, err, `Duplicate key "k7"`)
		require.NoError(t, checkJSON([]byte(`{"a": 1, "b": {"a": 1, "b": 1}, "c": [{"a": 1}]}`)))
	}
}

func TestDuplicatePathIsCut(t *testing.T) {
	long := strings.Repeat("k", 500)
	body := `{"` + long + `": {"` + long + `": 1, "` + long + `": 2}}`
	err := checkJSON([]byte(body))
	var e *endpoint.Error
	require.ErrorAs(t, err, &e, "errors.As(err, &e) is false")
	a, b := len(e.Detail), 250
	assert.True(t, (a < b), "%v: len(e.Detail) = %v, want < %v", e.Detail, a, b)
	if a, b := utf8.RuneCountInString(e.Attr), maxEchoed+1; !(a <= b) {
		t.Errorf("utf8.RuneCountInString(e.Attr) = %v, want <= %v", a, b)
	}
}

// refCheck is a reference for checkJSON, on encoding/json's token walk: it
// reports the first repeated key (hasDup), or whether a string decoded to U+FFFD
// that the text does not spell; ok is false when the text is malformed
// before either.
func refCheck(body []byte) (dup string, hasDup, replaced, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // 1e999 is valid JSON, whatever a float64 holds
	type obj struct {
		keys   map[string]bool
		object bool
		atKey  bool
	}
	var stack []*obj
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return "", false, false, true
		}
		if err != nil {
			return "", false, false, false
		}
		var top *obj
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		isKey := top != nil && top.object && top.atKey
		if top != nil && top.object {
			if _, isDelim := tok.(json.Delim); !isDelim || tok == json.Delim('{') || tok == json.Delim('[') {
				top.atKey = !top.atKey
			}
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				stack = append(stack, &obj{keys: map[string]bool{}, object: v == '{', atKey: true})
			default:
				stack = stack[:len(stack)-1]
			}
		case string:
			if strings.ContainsRune(v, utf8.RuneError) {
				return "", false, true, true
			}
			if isKey {
				if top.keys[v] {
					return v, true, false, true
				}
				top.keys[v] = true
			}
		}
	}
}

// FuzzCheckJSON checks checkJSON against encoding/json: invalid UTF-8 is
// refused exactly when the body holds some; on a body encoding/json accepts,
// a duplicate is refused exactly when its token walk sees a key repeated,
// naming that key, a surrogate is refused only where encoding/json replaces
// a character, and a body with neither passes. What checkJSON says of a
// body encoding/json refuses does not matter: it is refused either way.
func FuzzCheckJSON(f *testing.F) {
	for _, s := range []string{
		`{"a": 1}`, `{"a": 1, "a": 2}`, `{"a": {"b": [1, {"c": 1, "c": 2}]}}`, `{"\u0061": 1, "a": 2}`,
		`{"a": "\ud800"}`, `{"a": "\ud83d\ude00"}`, "{\"a\": \"\xff\"}", `[{"a":1},{"a":1}]`, `{"a":{"a":{"a":1}}}`,
		`{"x": "\"", "x\"": 1}`, `{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,"p":16,"q":17,"a":18}`,
		`{"a": "\ufffd"}`, "{\"a\": \"\uFFFD\"}", `{`, `}`, `"\u00`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		err := checkJSON(body)
		var e *endpoint.Error
		if err != nil && !errors.As(err, &e) {
			t.Fatalf("%q: error %v is not an *endpoint.Error", body, err)
		}
		if !utf8.Valid(body) {
			require.NotNil(t, e, "%q: invalid UTF-8 not refused: %v", body, err)
			require.Contains(t, e.Detail, "not valid UTF-8", "%q: invalid UTF-8 not refused: %v", body, err)
			return
		}
		if !json.Valid(body) {
			return
		}
		dup, hasDup, replaced, ok := refCheck(body)
		require.True(t, ok, "%q: json.Valid but the token walk failed", body)
		switch {
		case e != nil && strings.Contains(e.Detail, "Duplicate key"):
			if !hasDup || e.Attr != clipPath(dup) && !strings.HasSuffix(e.Attr, "."+clip(dup, maxEchoRunes)) {
				t.Fatalf("%q: checkJSON refused %q (attr %q), encoding/json repeats %q", body, e.Detail, e.Attr, dup)
			}
		case e != nil && strings.Contains(e.Detail, "surrogate"):
			require.True(t, replaced, "%q: surrogate refused but encoding/json replaced nothing", body)
		case e != nil:
			t.Fatalf("%q: unexpected error %v", body, err)
		default:
			require.False(t, hasDup, "%q: duplicate %q not found", body, dup)
			if replaced && !bytes.Contains(body, []byte("\uFFFD")) && !bytes.Contains(bytes.ToLower(body), []byte(`\ufffd`)) {
				t.Fatalf("%q: encoding/json replaced a character that checkJSON let through", body)
			}
		}
	})
}

// benchBodies are a run request and an endpoint definition of typical size.
var benchBodies = map[string][]byte{
	"run": []byte(`{"variables": {"event": "purchase", "from": "2025-05-01", "to": "2025-05-08", "country": ["US", "GB", "FR"]}, "limit": 100, "offset": 0}`),
	"create": []byte(`{"name": "weekly_signups", "description": "Sign-ups per week, by country", "query": {"kind": "TrendsQuery", "series": [` +
		strings.Repeat(`{"kind": "EventsNode", "event": "$pageview", "math": "dau", "properties": [{"key": "$browser", "value": ["Chrome", "Firefox"], "operator": "exact", "type": "event"}]}, `, 10) +
		`{"kind": "EventsNode", "event": "signup"}], "interval": "week", "dateRange": {"date_from": "-90d"}, "breakdownFilter": {"breakdown": "$country", "breakdown_type": "event"}}, "is_active": true}`),
}

// BenchmarkCheckJSON compares checkJSON with a token walk of encoding/json
// doing the same duplicate check (refCheck), and with json.Valid alone.
func BenchmarkCheckJSON(b *testing.B) {
	for name, body := range benchBodies {
		require.NoError(b, checkJSON(body))
		b.Run(name+"/checkJSON", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				require.NoError(b, checkJSON(body))
			}
		})
		b.Run(name+"/tokenWalk", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				_, _, _, ok := refCheck(body)
				require.True(b, ok, "not ok")
			}
		})
		b.Run(name+"/json.Valid", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				require.True(b, json.Valid(body), "not valid")
			}
		})
	}
}
