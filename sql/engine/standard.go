package engine

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/endpointkit/endpointkit/variable"
)

// Text layouts of date-times bound as text. Many SQLite and MySQL schemas
// keep UTC timestamps as such text, which sorts and compares as time.
const (
	dateLayout     = "2006-01-02"
	dateTimeLayout = "2006-01-02 15:04:05"
)

// scalar is a bindable value reduced to one of the few kinds every engine
// handles: each engine's Arg switches on kind, not on Go types.
type scalar struct {
	kind     scalarKind
	s        string
	i        int64
	f        float64
	b        bool
	t        time.Time
	dateOnly bool
	// boxed is the value already in an interface when it is the argument
	// as it is, so that passing it on allocates nothing.
	boxed any
}

type scalarKind uint8

const (
	kString scalarKind = iota
	kInt
	kFloat
	kBool
	kTime
)

// reduce sorts a Go value into a scalar, refusing what no engine compares
// faithfully.
func reduce(v any) (scalar, error) {
	switch x := v.(type) {
	case string:
		return scalar{kind: kString, s: x, boxed: v}, nil
	case int64:
		return scalar{kind: kInt, i: x, boxed: v}, nil
	case float64:
		return float(x, v)
	case bool:
		return scalar{kind: kBool, b: x, boxed: v}, nil
	case variable.Timestamp:
		return scalar{kind: kTime, t: x.Time.UTC(), dateOnly: x.DateOnly}, nil
	case time.Time:
		return scalar{kind: kTime, t: x.UTC()}, nil
	case float32:
		return float(float64(x), nil)
	case nil:
		return scalar{}, &ArgError{Detail: "got null"}
	}
	return reduceInteger(v)
}

// reduceInteger sorts a value of one of Go's integer kinds other than
// int64 into an integer scalar (a uint or uint64 only when it fits an
// int64), and refuses a value of any other type.
func reduceInteger(v any) (scalar, error) {
	switch x := v.(type) {
	case int:
		return scalar{kind: kInt, i: int64(x)}, nil
	case int8:
		return scalar{kind: kInt, i: int64(x)}, nil
	case int16:
		return scalar{kind: kInt, i: int64(x)}, nil
	case int32:
		return scalar{kind: kInt, i: int64(x)}, nil
	case uint8:
		return scalar{kind: kInt, i: int64(x)}, nil
	case uint16:
		return scalar{kind: kInt, i: int64(x)}, nil
	case uint32:
		return scalar{kind: kInt, i: int64(x)}, nil
	case uint:
		return unsigned(uint64(x))
	case uint64:
		return unsigned(x)
	}
	return scalar{}, &ArgError{Detail: fmt.Sprintf("got Go type %T", v)}
}

func unsigned(n uint64) (scalar, error) {
	if n > math.MaxInt64 {
		return scalar{}, &ArgError{Detail: fmt.Sprintf("%d does not fit a signed 64-bit integer", n)}
	}
	return scalar{kind: kInt, i: int64(n)}, nil
}

func float(f float64, boxed any) (scalar, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return scalar{}, &ArgError{Detail: fmt.Sprintf("%v is not a number SQL can compare", f)}
	}
	return scalar{kind: kFloat, f: f, boxed: boxed}, nil
}

// native returns the value as the Go value a database/sql driver takes;
// times are left to the caller, which decides their form.
func (s scalar) native() any {
	if s.boxed != nil {
		return s.boxed
	}
	switch s.kind {
	case kString:
		return s.s
	case kInt:
		return s.i
	case kFloat:
		return s.f
	case kBool:
		return s.b
	}
	return s.t
}

// timeText is a time as UTC text: a date alone when it names a whole day.
func (s scalar) timeText() string {
	if s.dateOnly {
		return s.t.Format(dateLayout)
	}
	return s.t.Format(dateTimeLayout)
}

// appendQuestion appends '?', the marker of SQLite and MySQL.
func appendQuestion(dst []byte) []byte { return append(dst, '?') }

// appendNumbered appends a sigil and the argument's number: $1.
func appendNumbered(dst []byte, sigil byte, n int) []byte {
	return strconv.AppendInt(append(dst, sigil), int64(n), 10)
}

// decimalLen is the number of digits of n >= 0.
func decimalLen(n int) int {
	l := 1
	for ; n >= 10; n /= 10 {
		l++
	}
	return l
}

// quote returns s between q, with q doubled inside.
func quote(s string, q byte) string {
	b := make([]byte, 0, len(s)+2)
	b = append(b, q)
	for i := 0; i < len(s); i++ {
		if s[i] == q {
			b = append(b, q)
		}
		b = append(b, s[i])
	}
	return string(append(b, q))
}

// appendDoubled appends s as a standard SQL literal, quotes doubled.
func appendDoubled(dst []byte, s string) []byte {
	dst = append(dst, '\'')
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' {
			dst = append(dst, '\'')
		}
		dst = append(dst, s[i])
	}
	return append(dst, '\'')
}

// appendBackslashed appends s as a literal of an engine whose strings
// honour backslash escapes; ctrlZ also escapes 0x1a (MySQL's \Z).
func appendBackslashed(dst []byte, s string, ctrlZ bool) []byte {
	dst = append(dst, '\'')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'', '\\':
			dst = append(dst, '\\', c)
		case 0:
			dst = append(dst, '\\', '0')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case 0x1a:
			if ctrlZ {
				dst = append(dst, '\\', 'Z')
			} else {
				dst = append(dst, c)
			}
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '\'')
}

// digits reports whether s is one or more ASCII digits.
func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// word reports whether s is a name: a letter or '_' then letters, digits,
// '_' or '$'.
func word(s string) bool {
	if s == "" || !(isLetter(s[0]) || s[0] == '_') {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(isLetter(c) || c == '_' || c == '$' || (c >= '0' && c <= '9')) {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return (c|0x20) >= 'a' && (c|0x20) <= 'z' || c >= 0x80 }

// columnList writes the names of cols as quoted identifiers.
func columnList(e Engine, cols []string) string {
	b := make([]byte, 0, 16*len(cols))
	for i, c := range cols {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, e.QuoteIdent(c)...)
	}
	return string(b)
}

// tableDef writes "table (col type, ...)".
func tableDef(e Engine, table string, cols []Column) string {
	b := []byte(e.QuoteIdent(table) + " (")
	for i, c := range cols {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, e.QuoteIdent(c.Name)...)
		b = append(b, ' ')
		b = append(b, e.Type(c.Kind)...)
	}
	return string(append(b, ')'))
}

// page is the standard paging wrapper: the query as a derived table, so
// that its own ORDER BY and LIMIT apply before the page is cut.
func page(query, limit, offset string) string {
	return "SELECT * FROM (\n" + query + "\n) AS endpoint_q LIMIT " + limit + " OFFSET " + offset
}

// jsonPath is the path of a top-level key for engines that take JSON
// paths; keys must not hold a double quote or backslash (insight refuses
// such keys).
func jsonPath(key string) string { return `$."` + key + `"` }

// ceilMillis is d in whole milliseconds, rounded up, at least 1.
func ceilMillis(d time.Duration) int64 {
	return max((int64(d)+int64(time.Millisecond)-1)/int64(time.Millisecond), 1)
}

// ceilSeconds is d in whole seconds, rounded up, at least 1.
func ceilSeconds(d time.Duration) int64 {
	return max((int64(d)+int64(time.Second)-1)/int64(time.Second), 1)
}

// secondsText is d in seconds as decimal text, to the millisecond (rounded
// up, at least 0.001): "30", "0.5".
func secondsText(d time.Duration) string {
	return strconv.FormatFloat(float64(ceilMillis(d))/1000, 'f', -1, 64)
}
