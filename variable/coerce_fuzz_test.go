package variable

import (
	"encoding/json"
	"github.com/stretchr/testify/require"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

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
