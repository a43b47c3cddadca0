package variable

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// ValueError reports a run-time value that Coerce rejected. Value is the raw
// value as received; Reason, when set, says what was wrong with it.
type ValueError struct {
	CodeName string
	Type     Type
	Value    any
	Reason   string
}

// Error returns a message that names the variable, the expected type and the
// value received, such as `variable "country": expected Number, got "12abc"`,
// followed by the reason when there is one.
func (e *ValueError) Error() string {
	return "variable " + strconv.Quote(e.CodeName) + ": " + e.Problem()
}

// Problem is the message without the variable's name, such as
// `expected Number, got "12abc"`; the value is cut to a safe length.
func (e *ValueError) Problem() string {
	msg := "expected " + string(e.Type) + ", got " + e.Received()
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	return msg
}

// Received is the value as the client wrote it, cut to a safe length for
// an error message.
func (e *ValueError) Received() string { return describe(e.Value) }

// Unwrap returns ErrInvalidValue, so that errors.Is(err, ErrInvalidValue) holds.
func (e *ValueError) Unwrap() error { return ErrInvalidValue }

// Coerce turns a run-time value into the typed Go value of the variable:
//
//   - String: a string. A JSON number or boolean is taken as its text (the
//     text as sent when the number is a json.Number or a json.RawMessage, as
//     encoding/json would write it when it was decoded into a float64). Text
//     holding a NUL byte or invalid UTF-8 is refused, whatever the engine:
//     PostgreSQL cannot hold the one, PostgreSQL and MySQL check the other.
//   - Number: an int64 when the value is whole and fits (12, "12", 12.0 and
//     "1e3" all give int64), otherwise a float64. A string must hold a decimal
//     number and nothing else ([+-]digits[.digits][e[+-]digits]); "", "12abc",
//     "0x10", NaN, infinities, and integers or floats beyond 64 bits are rejected.
//   - Boolean: a bool. The strings "true" and "false" are accepted in any
//     mix of upper and lower case.
//   - Date: a Timestamp in UTC, within the years 0001 to 9999 that every
//     engine reads. Text is read by ParseDate, the grammar insight date
//     ranges share: "YYYY-MM-DD" (a real calendar day, giving a DateOnly
//     Timestamp), "YYYY-MM-DD HH:MM:SS" and "YYYY-MM-DDTHH:MM:SS" in UTC, an
//     RFC 3339 date-time converted to UTC, and relative dates such as "-7d",
//     "-1m", "-24h" and "-1mStart" counted back from now in UTC (-1m on
//     March 31 gives the last day of February). now is only read for
//     relative dates. A time.Time or a Timestamp is taken as it is, in UTC.
//   - List: one of the variable's Values as a string (a number or boolean is
//     matched by its text); when IsMulti, a []string from an array of at least
//     one of them, each at most once.
//
// raw may be anything encoding/json produces (with or without UseNumber), a
// json.RawMessage, a value Coerce returned, or a plain Go value: any integer
// or float kind, string, bool, time.Time, []string, []any. JSON null, objects
// and arrays (except for a multi List) are never values. A rejected value
// gives a *ValueError.
func (v Variable) Coerce(raw any, now time.Time) (any, error) {
	val, reason := unwrap(raw)
	if reason == "" {
		switch val.(type) {
		case nil:
			reason = "null is not a value"
		case map[string]any:
			reason = "an object is not a value"
		}
	}
	if reason != "" {
		return nil, v.valueError(raw, reason)
	}
	var out any
	switch v.Type {
	case String:
		out, reason = toString(val)
	case Number:
		out, reason = toNumber(val)
	case Boolean:
		out, reason = toBool(val)
	case Date:
		out, reason = toDate(val, now)
	case List:
		if v.IsMulti {
			out, reason = v.toMulti(val)
		} else {
			out, reason = v.toOption(val)
		}
	default:
		reason = "the variable's type is unknown"
	}
	if reason == "" {
		reason = outputText(out)
	}
	if reason != "" {
		return nil, v.valueError(raw, reason)
	}
	return out, nil
}

// outputText refuses, in a coerced string value, what some engine cannot
// hold as text, so that every engine answers the same: PostgreSQL's text
// cannot hold a NUL byte (the run would fail there and match nothing on
// the others), and PostgreSQL and MySQL check UTF-8 where SQLite and
// ClickHouse do not.
func outputText(out any) string {
	if s, ok := out.(string); ok {
		return textProblem(s)
	}
	return ""
}

// textProblem says why s cannot be text in every engine, or "".
func textProblem(s string) string {
	if strings.IndexByte(s, 0) >= 0 {
		return "the text holds a NUL character (\\u0000), which databases cannot store in text"
	}
	if !utf8.ValidString(s) {
		return "the text is not valid UTF-8"
	}
	return ""
}

func (v Variable) valueError(raw any, reason string) *ValueError {
	return &ValueError{CodeName: v.CodeName, Type: v.Type, Value: raw, Reason: reason}
}

// unwrap decodes a json.RawMessage and folds the Go number kinds into int64,
// uint64 (only above MaxInt64) and float64, so that the type rules deal with
// few shapes. A non-empty reason means raw is unusable whatever the type.
func unwrap(raw any) (any, string) {
	switch r := raw.(type) {
	case json.RawMessage:
		return decodeJSON(r)
	case float32:
		return fromFloat32(r), ""
	case []byte:
		return nil, "unsupported Go type []byte (use json.RawMessage for JSON text)"
	case nil, string, bool, json.Number, int64, float64, time.Time, Timestamp, []string, []any, map[string]any:
		return raw, ""
	}
	if n, ok := widenInteger(raw); ok {
		return n, ""
	}
	return nil, "unsupported Go type " + typeName(raw)
}

// widenInteger returns a value of one of Go's integer kinds other than
// int64 as an int64, or as a uint64 above MaxInt64; false for any other
// type.
func widenInteger(raw any) (any, bool) {
	switch r := raw.(type) {
	case int:
		return int64(r), true
	case int8:
		return int64(r), true
	case int16:
		return int64(r), true
	case int32:
		return int64(r), true
	case uint:
		return fromUint(uint64(r)), true
	case uint8:
		return int64(r), true
	case uint16:
		return int64(r), true
	case uint32:
		return int64(r), true
	case uint64:
		return fromUint(r), true
	case uintptr:
		return fromUint(uint64(r)), true
	}
	return nil, false
}

// fromFloat32 goes through the shortest text of f, so that float32(0.1)
// means 0.1 rather than 0.10000000149011612.
func fromFloat32(f float32) float64 {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return float64(f)
	}
	g, _ := strconv.ParseFloat(strconv.FormatFloat(float64(f), 'g', -1, 32), 64)
	return g
}

// decodeJSON decodes one JSON value as a json.Decoder with UseNumber would.
// Scalars, which are nearly all run-time values, skip the decoder: it costs
// thirty times more than the value's own coercion.
func decodeJSON(b []byte) (any, string) {
	if !json.Valid(b) {
		return nil, "not valid JSON"
	}
	b = bytes.Trim(b, " \t\r\n")
	switch b[0] {
	case 'n':
		return nil, ""
	case 't':
		return true, ""
	case 'f':
		return false, ""
	case '"':
		// Without escapes, and valid UTF-8 (which the decoder would repair),
		// the text between the quotes is the string.
		if bytes.IndexByte(b, '\\') < 0 && utf8.Valid(b) {
			return string(b[1 : len(b)-1]), ""
		}
	case '{', '[':
	default:
		return json.Number(b), ""
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var val any
	if err := dec.Decode(&val); err != nil {
		return nil, "not valid JSON"
	}
	return val, ""
}

func fromUint(u uint64) any {
	if u <= math.MaxInt64 {
		return int64(u)
	}
	return u
}

func toString(val any) (any, string) {
	switch x := val.(type) {
	case string:
		return x, ""
	case json.Number:
		return string(x), ""
	case int64:
		return strconv.FormatInt(x, 10), ""
	case uint64:
		return strconv.FormatUint(x, 10), ""
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, "not a finite number"
		}
		return floatText(x), ""
	case bool:
		return strconv.FormatBool(x), ""
	case []string, []any:
		return nil, "an array is not a single value"
	}
	return nil, "not a string, number or boolean"
}

// floatText is the text encoding/json writes for f, so that a number decoded
// without UseNumber reads as it was sent (1e21 stays 1e+21, 12 stays 12).
func floatText(f float64) string {
	abs := math.Abs(f)
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		s := strconv.FormatFloat(f, 'e', -1, 64)
		// encoding/json writes e-07 as e-7.
		if n := len(s); n >= 4 && s[n-4] == 'e' && s[n-3] == '-' && s[n-2] == '0' {
			s = s[:n-2] + s[n-1:]
		}
		return s
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

func toNumber(val any) (any, string) {
	switch x := val.(type) {
	case string:
		return parseNumber(x)
	case json.Number:
		return parseNumber(string(x))
	case int64:
		return x, ""
	case uint64:
		return nil, "out of range for a 64-bit integer"
	case float64:
		return fromFloat(x)
	case bool:
		return nil, "a boolean is not a number"
	case []string, []any:
		return nil, "an array is not a single value"
	}
	return nil, "not a number"
}

// fromFloat keeps whole numbers integers whichever way the JSON was decoded:
// every whole float64 in int64 range converts exactly.
func fromFloat(f float64) (any, string) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, "not a finite number"
	}
	if f == math.Trunc(f) && f >= math.MinInt64 && f < math.MaxInt64 {
		return int64(f), ""
	}
	return f, ""
}

// parseNumber accepts [+-]digits[.digits][(e|E)[+-]digits] and nothing else:
// strconv alone would also take "0x1p4", "1_0", "Inf" and "NaN".
func parseNumber(s string) (any, string) {
	if s == "" {
		return nil, "an empty string is not a number"
	}
	i := 0
	if s[0] == '+' || s[0] == '-' {
		i++
	}
	i, ok := digitsFrom(s, i)
	integer := true
	if ok && i < len(s) && s[i] == '.' {
		integer = false
		i, ok = digitsFrom(s, i+1)
	}
	if ok && i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		integer = false
		i, ok = exponentFrom(s, i)
	}
	if !ok || i != len(s) {
		return nil, "not a number"
	}
	if !integer {
		return parseFloat(s)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return nil, "out of range for a 64-bit integer"
	}
	return n, ""
}

// exponentFrom reads the exponent at s[i], an 'e' or 'E', an optional
// sign and digits, and returns the offset after it and whether it had
// digits.
func exponentFrom(s string, i int) (int, bool) {
	i++
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	return digitsFrom(s, i)
}

// parseFloat converts s, a number parseNumber checked that is not an
// integer, to the number fromFloat keeps.
func parseFloat(s string) (any, string) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, "out of range for a 64-bit float"
	}
	return fromFloat(f)
}

// digitsFrom returns the offset after the digits at s[i] and whether there
// was at least one.
func digitsFrom(s string, i int) (int, bool) {
	start := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i, i > start
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func toBool(val any) (any, string) {
	switch x := val.(type) {
	case bool:
		return x, ""
	case string:
		// ASCII case only: strings.EqualFold would also take "falſe", whose
		// long s folds to s.
		if asciiEqualFold(x, "true") {
			return true, ""
		}
		if asciiEqualFold(x, "false") {
			return false, ""
		}
	case []string, []any:
		return nil, "an array is not a single value"
	}
	return nil, "want true or false"
}

// asciiEqualFold compares s with the lower-case ASCII word, ignoring the
// case of ASCII letters only.
func asciiEqualFold(s, word string) bool {
	if len(s) != len(word) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != word[i] {
			return false
		}
	}
	return true
}

// optionText is the text a single List value is matched by.
func optionText(val any) (string, string) {
	switch val.(type) {
	case nil:
		return "", "null is not a value"
	case map[string]any:
		return "", "an object is not a value"
	case []string, []any:
		return "", "an array is not a single value"
	case time.Time, Timestamp:
		return "", "not a string"
	}
	s, reason := toString(val)
	if reason != "" {
		return "", reason
	}
	return s.(string), ""
}

func (v Variable) toOption(val any) (any, string) {
	s, reason := optionText(val)
	if reason != "" {
		if reason == "an array is not a single value" {
			reason = "this List takes one value, not an array"
		}
		return nil, reason
	}
	for _, o := range v.Values {
		if o == s {
			return s, ""
		}
	}
	return nil, "not one of " + v.valuesText()
}

func (v Variable) toMulti(val any) (any, string) {
	var n int
	switch x := val.(type) {
	case []string:
		n = len(x)
	case []any:
		n = len(x)
	default:
		return nil, "this List takes an array of its values"
	}
	if n == 0 {
		return nil, "the array is empty; give at least one value"
	}
	allowed := v.optionSet()
	out := make([]string, 0, n)
	var set map[string]struct{}
	// seen reports whether s is already in out; a linear scan is cheapest for
	// the few values a request usually picks.
	seen := func(s string) bool {
		if set == nil && len(out) < 16 {
			for _, prev := range out {
				if prev == s {
					return true
				}
			}
			return false
		}
		if set == nil {
			set = make(map[string]struct{}, n)
			for _, prev := range out {
				set[prev] = struct{}{}
			}
		}
		_, dup := set[s]
		set[s] = struct{}{}
		return dup
	}
	for i := 0; i < n; i++ {
		var s, reason string
		if x, ok := val.([]string); ok {
			s = x[i]
		} else {
			s, reason = optionText(val.([]any)[i])
			if reason != "" {
				return nil, "element " + strconv.Itoa(i) + ": " + reason
			}
		}
		if !allowed(s) {
			return nil, "element " + strconv.Itoa(i) + ": " + strconv.Quote(s) + " is not one of " + v.valuesText()
		}
		if seen(s) {
			return nil, "element " + strconv.Itoa(i) + ": " + strconv.Quote(s) + " is given twice"
		}
		out = append(out, s)
	}
	return out, ""
}

// optionSet tests membership in Values; a map pays off only for long lists.
func (v Variable) optionSet() func(string) bool {
	if len(v.Values) <= 16 {
		return func(s string) bool {
			for _, o := range v.Values {
				if o == s {
					return true
				}
			}
			return false
		}
	}
	m := make(map[string]struct{}, len(v.Values))
	for _, o := range v.Values {
		m[o] = struct{}{}
	}
	return func(s string) bool { _, ok := m[s]; return ok }
}

// valuesText lists the allowed values for an error message, cut short when
// the list is long.
func (v Variable) valuesText() string {
	const most = 10
	var b strings.Builder
	for i, o := range v.Values {
		if i == most {
			b.WriteString(", … (" + strconv.Itoa(len(v.Values)) + " in all)")
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(o))
	}
	if b.Len() == 0 {
		return "no values (the List has none)"
	}
	return b.String()
}
