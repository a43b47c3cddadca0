package variable

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type coerceCase struct {
	raw    any
	want   any    // the coerced value, compared with reflect.DeepEqual (so its Go type counts)
	reason string // when set, Coerce must fail with this Reason
}

func runCoerce(t *testing.T, v Variable, cases []coerceCase) {
	t.Helper()
	now := mustTime(t, "2025-03-31T15:47:12.5Z")
	for _, tc := range cases {
		got, err := v.Coerce(tc.raw, now)
		if tc.reason != "" {
			if !assert.Error(t, err, "%s: Coerce(%#v) = %#v, want error %q", v.Type, tc.raw, got, tc.reason) {
				continue
			}
			var ve *ValueError
			if !assert.ErrorAs(t, err, &ve, "%s: Coerce(%#v)", v.Type, tc.raw) {
				continue
			}
			assert.ErrorIs(t, err, ErrInvalidValue, "%s: Coerce(%#v) error does not wrap ErrInvalidValue", v.Type, tc.raw)
			if ve.Reason != tc.reason || ve.CodeName != v.CodeName || ve.Type != v.Type || !sameValue(ve.Value, tc.raw) {
				t.Errorf("%s: Coerce(%#v) error = %#v, want Reason %q and the variable's code_name, type and raw value", v.Type, tc.raw, ve, tc.reason)
			}
			if got != nil {
				t.Errorf("%s: Coerce(%#v) returned %#v beside its error", v.Type, tc.raw, got)
			}
			continue
		}
		if !assert.NoError(t, err, "%s: Coerce(%#v)", v.Type, tc.raw) {
			continue
		}
		assert.Equal(t, tc.want, got, "%s: Coerce(%#v)", v.Type, tc.raw)
	}
}

// sameValue is reflect.DeepEqual, except that NaN equals NaN.
func sameValue(a, b any) bool {
	if fa, ok := a.(float64); ok && math.IsNaN(fa) {
		fb, ok := b.(float64)
		return ok && math.IsNaN(fb)
	}
	if fa, ok := a.(float32); ok && fa != fa {
		fb, ok := b.(float32)
		return ok && fb != fb
	}
	return reflect.DeepEqual(a, b)
}

// rejectedByAll are rejections every type shares.
var rejectedByAll = []coerceCase{
	{raw: nil, reason: "null is not a value"},
	{raw: json.RawMessage(`null`), reason: "null is not a value"},
	{raw: map[string]any{"a": "b"}, reason: "an object is not a value"},
	{raw: json.RawMessage(`{"a":"b"}`), reason: "an object is not a value"},
	{raw: json.RawMessage(`{`), reason: "not valid JSON"},
	{raw: json.RawMessage(``), reason: "not valid JSON"},
	{raw: json.RawMessage(`"a" "b"`), reason: "not valid JSON"},
	{raw: json.RawMessage(`1 ]`), reason: "not valid JSON"},
	{raw: json.RawMessage(`"a`), reason: "not valid JSON"},
	{raw: json.RawMessage(`1 x`), reason: "not valid JSON"},
	{raw: []byte(`"a"`), reason: "unsupported Go type []byte (use json.RawMessage for JSON text)"},
	{raw: struct{}{}, reason: "unsupported Go type struct {}"},
	{raw: complex(1, 2), reason: "unsupported Go type complex128"},
	{raw: map[string]string{}, reason: "unsupported Go type map[string]string"},
	{raw: new(string), reason: "unsupported Go type *string"},
}

func TestCoerceString(t *testing.T) {
	v := Variable{CodeName: "country", Type: String}
	runCoerce(t, v, append([]coerceCase{
		{raw: "US", want: "US"},
		{raw: "", want: ""},
		{raw: "' OR 1=1 --", want: "' OR 1=1 --"},
		{raw: "a\x00b", reason: "the text holds a NUL character (\\u0000), which databases cannot store in text"},
		{raw: json.RawMessage(`"US"`), want: "US"},
		{raw: json.RawMessage(` "\u00e9" `), want: "é"},
		{raw: json.RawMessage(`12`), want: "12"},
		{raw: json.RawMessage(`1.50`), want: "1.50"}, // the text as sent
		{raw: json.RawMessage(`true`), want: "true"},
		{raw: json.Number("007"), want: "007"},
		{raw: float64(12), want: "12"},
		{raw: 1.5, want: "1.5"},
		{raw: 1e21, want: "1e+21"},
		{raw: 1e-7, want: "1e-7"},
		{raw: float32(0.1), want: "0.1"},
		{raw: 42, want: "42"},
		{raw: int8(-8), want: "-8"},
		{raw: uint64(math.MaxUint64), want: "18446744073709551615"},
		{raw: false, want: "false"},
		{raw: math.NaN(), reason: "not a finite number"},
		{raw: math.Inf(1), reason: "not a finite number"},
		{raw: []any{"a"}, reason: "an array is not a single value"},
		{raw: []string{"a"}, reason: "an array is not a single value"},
		{raw: json.RawMessage(`["a"]`), reason: "an array is not a single value"},
		{raw: time.Now(), reason: "not a string, number or boolean"},
	}, rejectedByAll...))
}

func TestCoerceNumber(t *testing.T) {
	v := Variable{CodeName: "amount", Type: Number}
	runCoerce(t, v, append([]coerceCase{
		{raw: "12", want: int64(12)},
		{raw: "-12", want: int64(-12)},
		{raw: "+12", want: int64(12)},
		{raw: "007", want: int64(7)},
		{raw: "12.0", want: int64(12)},
		{raw: "1e3", want: int64(1000)},
		{raw: "1E3", want: int64(1000)},
		{raw: "12.5", want: 12.5},
		{raw: "-0.25", want: -0.25},
		{raw: "1e-3", want: 0.001},
		{raw: "1e-400", want: int64(0)}, // underflows to zero, which is whole
		{raw: "9223372036854775807", want: int64(math.MaxInt64)},
		{raw: "-9223372036854775808", want: int64(math.MinInt64)},
		{raw: "1e300", want: 1e300},
		{raw: json.Number("42"), want: int64(42)},
		{raw: json.Number("4.2"), want: 4.2},
		{raw: json.RawMessage(`42`), want: int64(42)},
		{raw: json.RawMessage(`"42"`), want: int64(42)},
		{raw: json.RawMessage(`9007199254740993`), want: int64(9007199254740993)}, // exact beyond 2^53
		{raw: float64(42), want: int64(42)},
		{raw: float64(-0.0), want: int64(0)},
		{raw: 42.5, want: 42.5},
		{raw: 1e18, want: int64(1e18)},
		{raw: 1e19, want: 1e19}, // beyond int64: stays a float
		{raw: float32(0.1), want: 0.1},
		{raw: float32(3), want: int64(3)},
		{raw: 7, want: int64(7)},
		{raw: int16(-7), want: int64(-7)},
		{raw: int32(7), want: int64(7)},
		{raw: int64(math.MinInt64), want: int64(math.MinInt64)},
		{raw: uint(7), want: int64(7)},
		{raw: uint8(7), want: int64(7)},
		{raw: uint16(7), want: int64(7)},
		{raw: uint32(7), want: int64(7)},
		{raw: uint64(math.MaxInt64), want: int64(math.MaxInt64)},
		{raw: uintptr(7), want: int64(7)},
		{raw: uint64(math.MaxInt64) + 1, reason: "out of range for a 64-bit integer"},
		{raw: "9223372036854775808", reason: "out of range for a 64-bit integer"},
		{raw: "-9223372036854775809", reason: "out of range for a 64-bit integer"},
		{raw: "1e400", reason: "out of range for a 64-bit float"},
		{raw: json.RawMessage(`1e400`), reason: "out of range for a 64-bit float"},
		{raw: "", reason: "an empty string is not a number"},
		{raw: json.RawMessage(`""`), reason: "an empty string is not a number"},
		{raw: "12abc", reason: "not a number"},
		{raw: "abc", reason: "not a number"},
		{raw: " 12", reason: "not a number"},
		{raw: "12 ", reason: "not a number"},
		{raw: "1,5", reason: "not a number"},
		{raw: "1_000", reason: "not a number"},
		{raw: "0x10", reason: "not a number"},
		{raw: "0x1p4", reason: "not a number"},
		{raw: ".5", reason: "not a number"},
		{raw: "5.", reason: "not a number"},
		{raw: "1e", reason: "not a number"},
		{raw: "1e+", reason: "not a number"},
		{raw: "-", reason: "not a number"},
		{raw: "--1", reason: "not a number"},
		{raw: "NaN", reason: "not a number"},
		{raw: "Inf", reason: "not a number"},
		{raw: "-Infinity", reason: "not a number"},
		{raw: math.NaN(), reason: "not a finite number"},
		{raw: math.Inf(-1), reason: "not a finite number"},
		{raw: float32(math.Inf(1)), reason: "not a finite number"},
		{raw: true, reason: "a boolean is not a number"},
		{raw: json.RawMessage(`false`), reason: "a boolean is not a number"},
		{raw: []any{1.0}, reason: "an array is not a single value"},
		{raw: time.Now(), reason: "not a number"},
	}, rejectedByAll...))
}

func TestCoerceBoolean(t *testing.T) {
	v := Variable{CodeName: "active", Type: Boolean}
	runCoerce(t, v, append([]coerceCase{
		{raw: true, want: true},
		{raw: false, want: false},
		{raw: "true", want: true},
		{raw: "TRUE", want: true},
		{raw: "False", want: false},
		{raw: json.RawMessage(`true`), want: true},
		{raw: json.RawMessage(`"fAlSe"`), want: false},
		{raw: "yes", reason: "want true or false"},
		{raw: "falſe", reason: "want true or false"},
		{raw: "truee", reason: "want true or false"},
		{raw: "tru", reason: "want true or false"},
		{raw: "1", reason: "want true or false"},
		{raw: "", reason: "want true or false"},
		{raw: " true", reason: "want true or false"},
		{raw: 1, reason: "want true or false"},
		{raw: json.RawMessage(`0`), reason: "want true or false"},
		{raw: []any{true}, reason: "an array is not a single value"},
	}, rejectedByAll...))
}

func TestCoerceList(t *testing.T) {
	single := Variable{CodeName: "plan", Type: List, Values: []string{"free", "pro", "1"}}
	runCoerce(t, single, append([]coerceCase{
		{raw: "free", want: "free"},
		{raw: json.RawMessage(`"pro"`), want: "pro"},
		{raw: 1, want: "1"}, // a number matches by its text
		{raw: json.RawMessage(`1`), want: "1"},
		{raw: "Free", reason: `not one of "free", "pro", "1"`},
		{raw: "", reason: `not one of "free", "pro", "1"`},
		{raw: 1.5, reason: `not one of "free", "pro", "1"`},
		{raw: []string{"free"}, reason: "this List takes one value, not an array"},
		{raw: json.RawMessage(`["free"]`), reason: "this List takes one value, not an array"},
		{raw: time.Now(), reason: "not a string"},
	}, rejectedByAll...))

	multi := Variable{CodeName: "plans", Type: List, IsMulti: true, Values: []string{"free", "pro", "team"}}
	runCoerce(t, multi, append([]coerceCase{
		{raw: []string{"pro"}, want: []string{"pro"}},
		{raw: []string{"team", "free"}, want: []string{"team", "free"}},
		{raw: []any{"free", "pro", "team"}, want: []string{"free", "pro", "team"}},
		{raw: json.RawMessage(`["pro","free"]`), want: []string{"pro", "free"}},
		{raw: "pro", reason: "this List takes an array of its values"},
		{raw: json.RawMessage(`"pro"`), reason: "this List takes an array of its values"},
		{raw: []string{}, reason: "the array is empty; give at least one value"},
		{raw: json.RawMessage(`[]`), reason: "the array is empty; give at least one value"},
		{raw: []string{"pro", "gold"}, reason: `element 1: "gold" is not one of "free", "pro", "team"`},
		{raw: []string{"pro", "pro"}, reason: `element 1: "pro" is given twice`},
		{raw: []any{"pro", nil}, reason: "element 1: null is not a value"},
		{raw: []any{map[string]any{}}, reason: "element 0: an object is not a value"},
		{raw: []any{[]any{"pro"}}, reason: "element 0: an array is not a single value"},
		{raw: []any{math.NaN()}, reason: "element 0: not a finite number"},
	}, rejectedByAll...))

	// A long list of allowed values and a long pick take the map paths.
	long := Variable{CodeName: "many", Type: List, IsMulti: true}
	var pick []any
	for i := 0; i < 40; i++ {
		s := strings.Repeat("v", i+1)
		long.Values = append(long.Values, s)
		pick = append(pick, s)
	}
	want := make([]string, len(pick))
	for i, p := range pick {
		want[i] = p.(string)
	}
	runCoerce(t, long, []coerceCase{
		{raw: pick, want: want},
		{raw: append(append([]any{}, pick...), "v"), reason: `element 40: "v" is given twice`},
		{raw: []any{"x"}, reason: `element 0: "x" is not one of "v", "vv", "vvv", "vvvv", "vvvvv", "vvvvvv", "vvvvvvv", "vvvvvvvv", "vvvvvvvvv", "vvvvvvvvvv", … (40 in all)`},
	})

	empty := Variable{CodeName: "none", Type: List}
	runCoerce(t, empty, []coerceCase{{raw: "a", reason: "not one of no values (the List has none)"}})
}

func TestCoerceUnknownType(t *testing.T) {
	runCoerce(t, Variable{CodeName: "x", Type: "Text"}, []coerceCase{{raw: "a", reason: "the variable's type is unknown"}})
}

// Coerce accepts its own results, so a value can be coerced again (a stored
// default, a value passed through two layers) without changing.
func TestCoerceIdempotent(t *testing.T) {
	now := mustTime(t, "2025-03-31T15:47:12.5Z")
	for _, tc := range []struct {
		v   Variable
		raw any
	}{
		{Variable{CodeName: "s", Type: String}, json.RawMessage(`12.50`)},
		{Variable{CodeName: "n", Type: Number}, "1e3"},
		{Variable{CodeName: "n", Type: Number}, "2.5"},
		{Variable{CodeName: "b", Type: Boolean}, "TRUE"},
		{Variable{CodeName: "d", Type: Date}, "-1m"},
		{Variable{CodeName: "d", Type: Date}, "2025-01-02T03:04:05.5+01:00"},
		{Variable{CodeName: "l", Type: List, Values: []string{"a"}}, "a"},
		{Variable{CodeName: "l", Type: List, Values: []string{"a", "b"}, IsMulti: true}, []any{"b", "a"}},
	} {
		first, err := tc.v.Coerce(tc.raw, now)
		require.NoError(t, err, "%s: Coerce(%#v)", tc.v.Type, tc.raw)
		second, err := tc.v.Coerce(first, now.Add(1000*time.Hour))
		require.NoError(t, err, "%s: Coerce of its own result %#v", tc.v.Type, first)
		assert.Equal(t, second, first, "%s: Coerce(%#v)", tc.v.Type, tc.raw)
	}
}

// The same JSON gives the same value whether it was decoded with UseNumber,
// without it, or not decoded at all.
func TestCoerceDecodingIndependent(t *testing.T) {
	now := mustTime(t, "2025-03-31T15:47:12.5Z")
	vars := []Variable{
		{CodeName: "s", Type: String},
		{CodeName: "n", Type: Number},
		{CodeName: "b", Type: Boolean},
		{CodeName: "d", Type: Date},
		{CodeName: "l", Type: List, Values: []string{"a", "3"}},
		{CodeName: "m", Type: List, Values: []string{"a", "3"}, IsMulti: true},
	}
	docs := []string{`12`, `-3`, `2.5`, `1e3`, `"12"`, `true`, `"TRUE"`, `"a"`, `["a","3"]`, `["a",3]`, `"2025-01-02"`, `"-2w"`, `null`, `{}`, `""`, `1e400`}
	for _, v := range vars {
		for _, doc := range docs {
			var plain, numbered any
			plainErr := json.Unmarshal([]byte(doc), &plain)
			dec := json.NewDecoder(strings.NewReader(doc))
			dec.UseNumber()
			numErr := dec.Decode(&numbered)
			a, errA := v.Coerce(json.RawMessage(doc), now)
			b, errB := v.Coerce(numbered, now)
			require.NoError(t, numErr, "decode %s", doc)
			if assert.Equal(t, errB == nil, errA == nil, "%s %s: raw gives %#v, %v; UseNumber gives %#v, %v", v.Type, doc, a, errA, b, errB) {
				assert.Equal(t, b, a, "%s %s: raw gives %#v, %v; UseNumber gives %#v, %v", v.Type, doc, a, errA, b, errB)
			}
			if plainErr != nil {
				continue // 1e400 does not decode into a float64 at all
			}
			if v.Type == String && doc == `1e3` {
				// Decoded as a float64 the number has lost its spelling; it
				// reads as encoding/json would write it, "1000".
				continue
			}
			c, errC := v.Coerce(plain, now)
			if assert.Equal(t, errC == nil, errA == nil, "%s %s: raw gives %#v, %v; float64 decoding gives %#v, %v", v.Type, doc, a, errA, c, errC) {
				assert.Equal(t, c, a, "%s %s: raw gives %#v, %v; float64 decoding gives %#v, %v", v.Type, doc, a, errA, c, errC)
			}
		}
	}
}

func TestValueErrorMessage(t *testing.T) {
	now := mustTime(t, "2025-03-31T15:47:12.5Z")
	for _, tc := range []struct {
		v    Variable
		raw  any
		want string
	}{
		{Variable{CodeName: "country", Type: Number}, "12abc", `variable "country": expected Number, got "12abc": not a number`},
		{Variable{CodeName: "n", Type: Number}, json.RawMessage(` {"a": 1} `), `variable "n": expected Number, got {"a": 1}: an object is not a value`},
		{Variable{CodeName: "n", Type: Number}, nil, `variable "n": expected Number, got null: null is not a value`},
		{Variable{CodeName: "n", Type: Number}, math.Inf(1), `variable "n": expected Number, got +Inf: not a finite number`},
		{Variable{CodeName: "d", Type: Date}, "2025-02-30", `variable "d": expected Date, got "2025-02-30": not a real calendar date; want a day from 01 to 28 (2025-02 has 28 days)`},
		{Variable{CodeName: "b", Type: Boolean}, 1, `variable "b": expected Boolean, got 1: want true or false`},
		{Variable{CodeName: "p", Type: List, Values: []string{"US"}}, "FR", `variable "p": expected List, got "FR": not one of "US"`},
		// A long value is cut short in the message.
		{Variable{CodeName: "n", Type: Number}, strings.Repeat("x", 200), `variable "n": expected Number, got "` + strings.Repeat("x", 79) + `…: not a number`},
		{Variable{CodeName: "n", Type: Number}, strings.Repeat("é", 100), `variable "n": expected Number, got "` + strings.Repeat("é", 39) + `…: not a number`},
		{Variable{CodeName: "n", Type: Number}, []string{"a"}, `variable "n": expected Number, got ["a"]: an array is not a single value`},
	} {
		_, err := tc.v.Coerce(tc.raw, now)
		require.Error(t, err, "Coerce(%#v) accepted", tc.raw)
		assert.Equal(t, tc.want, err.Error(), "message")
	}
}

// decodeJSON's shortcuts for scalars must give what json.Decoder with
// UseNumber gives.
func TestDecodeJSONMatchesDecoder(t *testing.T) {
	for _, doc := range []string{
		`"a"`, ` "a" `, "\t\n\"a\"\r", `""`, `"a\"b"`, `"\u00e9"`, `"é"`, "\"\xff\"", `"a\nb"`,
		`0`, `-0`, `12`, `-1.5e+10`, `1E3`, `true`, `false`, `null`, `[]`, `["a",1]`, `{"k":[null]}`,
	} {
		want := decodeWithDecoder(t, doc)
		got, reason := decodeJSON([]byte(doc))
		if assert.Equal(t, "", reason, "decodeJSON(%q) = %#v, %q; json.Decoder gives %#v", doc, got, reason, want) {
			assert.Equal(t, want, got, "decodeJSON(%q) = %#v, %q; json.Decoder gives %#v", doc, got, reason, want)
		}
	}
}

func decodeWithDecoder(t *testing.T, doc string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v), "decode %q", doc)
	return v
}

// TestCoerceTextEveryEngineHolds: a String value, or a List option, with a
// NUL byte or invalid UTF-8 is refused whatever the engine, naming the
// variable: PostgreSQL's text cannot hold NUL (the run failed there with a
// 502 while the other engines matched nothing).
func TestCoerceTextEveryEngineHolds(t *testing.T) {
	const nul = "the text holds a NUL character (\\u0000), which databases cannot store in text"
	const utf = "the text is not valid UTF-8"
	runCoerce(t, Variable{CodeName: "event_name", Type: String}, []coerceCase{
		{raw: "$pageview\x00", reason: nul},
		{raw: "\x00", reason: nul},
		{raw: json.RawMessage(`"$pageview\u0000"`), reason: nul},
		{raw: "a\xffb", reason: utf},
		{raw: "\xed\xa0\x80", reason: utf}, // a UTF-16 surrogate spelt in UTF-8
		{raw: "$pageview", want: "$pageview"},
		{raw: "tab\tand\u00e9\U0001F600", want: "tab\tand\u00e9\U0001F600"},
	})
	runCoerce(t, Variable{CodeName: "country", Type: List, Values: []string{"US"}}, []coerceCase{
		{raw: "US\x00", reason: `not one of "US"`},
	})
	_, err := Variable{CodeName: "event_name", Type: String}.Coerce("$pageview\x00", time.Time{})
	if err == nil || !strings.Contains(err.Error(), `variable "event_name"`) || !strings.Contains(err.Error(), "NUL") {
		t.Errorf("error %v does not name the variable and the NUL", err)
	}
}

// BenchmarkCoerce measures the common shapes a run request brings: strings
// (the spec's examples send every value as one), numbers as decoded by
// encoding/json, and raw JSON.
func BenchmarkCoerce(b *testing.B) {
	now := time.Date(2025, 6, 1, 9, 30, 0, 0, time.UTC)
	list := Variable{CodeName: "plan", Type: List, Values: []string{"free", "pro", "team", "enterprise"}}
	multi := list
	multi.IsMulti = true
	for _, bc := range []struct {
		name string
		v    Variable
		raw  any
	}{
		{"String", Variable{CodeName: "country", Type: String}, "US"},
		{"String/RawMessage", Variable{CodeName: "country", Type: String}, json.RawMessage(`"US"`)},
		{"Number/string", Variable{CodeName: "n", Type: Number}, "12345"},
		{"Number/float64", Variable{CodeName: "n", Type: Number}, 12.5},
		{"Number/json.Number", Variable{CodeName: "n", Type: Number}, json.Number("12345")},
		{"Number/RawMessage", Variable{CodeName: "n", Type: Number}, json.RawMessage(`12345`)},
		{"Boolean", Variable{CodeName: "b", Type: Boolean}, "true"},
		{"Date/day", Variable{CodeName: "d", Type: Date}, "2025-05-01"},
		{"Date/relative", Variable{CodeName: "d", Type: Date}, "-7d"},
		{"Date/RFC3339", Variable{CodeName: "d", Type: Date}, "2025-05-01T12:30:00+02:00"},
		{"List", list, "team"},
		{"List/multi", multi, []any{"free", "team"}},
		{"Rejected", Variable{CodeName: "n", Type: Number}, "12abc"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bc.v.Coerce(bc.raw, now); err != nil && bc.name != "Rejected" {
					b.Fatal(err)
				}
			}
		})
	}
}

var fuzzVars = []Variable{
	{CodeName: "s", Type: String},
	{CodeName: "n", Type: Number},
	{CodeName: "b", Type: Boolean},
	{CodeName: "d", Type: Date},
	{CodeName: "l", Type: List, Values: []string{"a", "b", "1", "true", "é"}},
	{CodeName: "m", Type: List, Values: []string{"a", "b", "1", "true", "é"}, IsMulti: true},
}

// FuzzCoerce feeds arbitrary text to every type, as JSON text, as JSON
// decoded both ways, and as a plain Go string. Coerce must never panic, must
// return a value of the documented Go type or a *ValueError, and must accept
// its own results unchanged.
func FuzzCoerce(f *testing.F) {
	for _, s := range []string{
		`"US"`, `12`, `"12"`, `"12abc"`, `12.5`, `1e400`, `-0`, `9223372036854775808`, `true`, `"TRUE"`,
		`null`, `{}`, `[]`, `["a","b"]`, `["a","a"]`, `[1, true]`, `"2025-02-30"`, `"2025-01-02T03:04:05+02:00"`,
		`"-7d"`, `"-99999999y"`, `"-12h"`, `""`, `"\u0000"`, `{"a":[1]}`, "\"\xff\"", `[[]]`, ` "a" `,
	} {
		f.Add(s, int64(1748770200))
	}
	f.Fuzz(func(t *testing.T, text string, unix int64) {
		now := time.Unix(unix%(1<<40), 0) // within years the clock can hold
		var plain, numbered any
		errPlain := json.Unmarshal([]byte(text), &plain)
		dec := json.NewDecoder(strings.NewReader(text))
		dec.UseNumber()
		errNumbered := dec.Decode(&numbered)
		if errNumbered == nil && json.Valid([]byte(text)) {
			got, reason := decodeJSON([]byte(text))
			require.Equal(t, "", reason, "decodeJSON(%q)", text)
			require.Equal(t, numbered, got, "decodeJSON(%q)", text)
		}
		raws := []any{json.RawMessage(text), text}
		if errPlain == nil {
			raws = append(raws, plain)
		}
		if errNumbered == nil {
			raws = append(raws, numbered)
		}
		for _, v := range fuzzVars {
			for _, raw := range raws {
				got, err := v.Coerce(raw, now)
				if err != nil {
					checkRejection(t, v, raw, got, err)
					continue
				}
				checkCoerced(t, v, raw, got)
				again, err := v.Coerce(got, now)
				require.NoError(t, err, "%s: Coerce(%#v)", v.Type, raw)
				require.Equal(t, got, again, "%s: Coerce(%#v)", v.Type, raw)
			}
		}
	})
}

func checkRejection(t *testing.T, v Variable, raw, got any, err error) {
	t.Helper()
	var ve *ValueError
	require.ErrorAs(t, err, &ve, "%s: Coerce(%#v)", v.Type, raw)
	require.ErrorIs(t, err, ErrInvalidValue, "%s: Coerce(%#v)", v.Type, raw)
	if got != nil {
		t.Fatalf("%s: Coerce(%#v) returned %#v beside an error", v.Type, raw, got)
	}
	msg := err.Error()
	require.True(t, strings.HasPrefix(msg, `variable "`+v.CodeName+`": expected `+string(v.Type)+", got "), "message %q does not name the variable and type", msg)
	require.LessOrEqual(t, len(msg), 600, "message of %d bytes repeats too much of the value: %q", len(msg), msg)
}

func checkCoerced(t *testing.T, v Variable, raw, got any) {
	t.Helper()
	fail := func(why string) {
		t.Helper()
		t.Fatalf("%s: Coerce(%#v) = %#v (%T): %s", v.Type, raw, got, got, why)
	}
	switch v.Type {
	case String:
		s, ok := got.(string)
		if !ok {
			fail("want a string")
		}
		if strings.IndexByte(s, 0) >= 0 || !utf8.ValidString(s) {
			fail("a NUL or invalid UTF-8 is no value every engine holds")
		}
	case Number:
		switch n := got.(type) {
		case int64:
		case float64:
			if math.IsNaN(n) || math.IsInf(n, 0) {
				fail("not finite")
			}
			if n == math.Trunc(n) && n >= math.MinInt64 && n < math.MaxInt64 {
				fail("a whole number in int64 range must be an int64")
			}
		default:
			fail("want int64 or float64")
		}
	case Boolean:
		if _, ok := got.(bool); !ok {
			fail("want a bool")
		}
	case Date:
		ts, ok := got.(Timestamp)
		if !ok {
			fail("want a Timestamp")
		}
		if ts.Time.Location() != time.UTC {
			fail("not in UTC")
		}
		if y := ts.Time.Year(); y < 1 || y > 9999 {
			fail("year out of range")
		}
		if ts.DateOnly && (ts.Time.Hour() != 0 || ts.Time.Minute() != 0 || ts.Time.Second() != 0 || ts.Time.Nanosecond() != 0) {
			fail("a DateOnly value must be at midnight")
		}
	case List:
		if v.IsMulti {
			l, ok := got.([]string)
			if !ok || len(l) == 0 {
				fail("want a non-empty []string")
			}
			for i, s := range l {
				if !slices.Contains(v.Values, s) || slices.Contains(l[:i], s) {
					fail("element not allowed or repeated")
				}
			}
		} else if s, ok := got.(string); !ok || !slices.Contains(v.Values, s) {
			fail("want one of the values")
		}
	}
}
