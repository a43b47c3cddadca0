package equivalence

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/stretchr/testify/assert"
)

// Normalization: what the comparison ignores, because it is how a driver
// represents a value, not which value the engine answered. Nothing else is
// normalized: text is compared byte for byte, NULL is NULL, a number is
// not text, and rows keep their order when the query orders them totally.
//
//   - Numbers of every Go type (int64, int32, float64, ...) and the text of
//     a NUMERIC or DECIMAL column (pgx, go-sql-driver and chDB return
//     decimals as text) become float64, compared with a relative tolerance of 1e-9
//     (a sum or average of doubles may differ in its last bits by the order
//     of addition).
//   - Booleans become 1 and 0: SQLite and MySQL have no boolean type and
//     answer integers.
//   - time.Time (pgx for timestamp and timestamptz, go-sql-driver with
//     parseTime for DATETIME and TIMESTAMP) becomes UTC text
//     "YYYY-MM-DD HH:MM:SS", as the same instant is stored as text;
//     a DATE column's becomes "YYYY-MM-DD".
//   - Column type names (Result.Types) are not compared: each engine names
//     its own types.
//   - An insight result is compared as the JSON clients read, numbers with
//     the same tolerance.

// decimalTypes are the database type names whose values drivers return as
// text.
var decimalTypes = []string{"NUMERIC", "DECIMAL", "NEWDECIMAL"}

// isDecimal reports whether typ is one of decimalTypes, or ClickHouse's
// Decimal(P, S) (Nullable or not), whose values chDB answers as text.
func isDecimal(typ string) bool {
	t := strings.ToUpper(typ)
	if strings.HasPrefix(t, "NULLABLE(") {
		t = strings.TrimSuffix(strings.TrimPrefix(t, "NULLABLE("), ")")
	}
	return slices.Contains(decimalTypes, t) || strings.HasPrefix(t, "DECIMAL(")
}

// normalizeValue returns v as nil, float64 or string.
func normalizeValue(v any, typ string) (any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case bool:
		if x {
			return 1.0, nil
		}
		return 0.0, nil
	case int64:
		return float64(x), nil
	case int32:
		return float64(x), nil
	case int16:
		return float64(x), nil
	case int8:
		return float64(x), nil
	case int:
		return float64(x), nil
	case uint64:
		return float64(x), nil
	case uint32:
		return float64(x), nil
	case uint8:
		return float64(x), nil
	case float64:
		return x, nil
	case float32:
		return float64(x), nil
	case []byte:
		return normalizeValue(string(x), typ)
	case string:
		if isDecimal(typ) {
			f, err := strconv.ParseFloat(x, 64)
			if err != nil {
				return nil, fmt.Errorf("%s value %q: %w", typ, x, err)
			}
			return f, nil
		}
		return x, nil
	case time.Time:
		x = x.UTC()
		if strings.EqualFold(typ, "DATE") {
			return x.Format(time.DateOnly), nil
		}
		if x.Nanosecond() != 0 {
			return x.Format("2006-01-02 15:04:05.999999999"), nil
		}
		return x.Format(time.DateTime), nil
	}
	return nil, fmt.Errorf("a value of Go type %T", v)
}

// normalizeRows normalizes every value of rows by its column's type.
func normalizeRows(types []string, rows [][]any) ([][]any, error) {
	out := make([][]any, len(rows))
	for i, row := range rows {
		out[i] = make([]any, len(row))
		for j, v := range row {
			typ := ""
			if j < len(types) {
				typ = types[j]
			}
			n, err := normalizeValue(v, typ)
			if err != nil {
				return nil, fmt.Errorf("row %d column %d: %w", i, j, err)
			}
			out[i][j] = n
		}
	}
	return out, nil
}

// normalizeJSON returns the JSON of v decoded as generic values, whose
// numbers are float64.
func normalizeJSON(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	return out, json.Unmarshal(b, &out)
}

// sortRows orders rows by their text, for queries whose order is not
// total.
func sortRows(rows [][]any) {
	slices.SortFunc(rows, func(a, b []any) int { return strings.Compare(rowKey(a), rowKey(b)) })
}

func rowKey(row []any) string {
	var b strings.Builder
	for _, v := range row {
		switch x := v.(type) {
		case nil:
			b.WriteString("\x00N")
		case float64:
			b.WriteString("\x00F" + strconv.FormatFloat(x, 'g', 9, 64))
		default:
			b.WriteString("\x00S" + fmt.Sprint(x))
		}
	}
	return b.String()
}

// same reports whether two normalized values are equal: floats within the
// tolerance, everything else exactly.
func same(a, b any) bool {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && closeTo(x, y)
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !same(x[i], y[i]) {
				return false
			}
		}
		return true
	case [][]any:
		y, ok := b.([][]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !same([]any(x[i]), []any(y[i])) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !same(v, w) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

func closeTo(a, b float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

// TestNormalize pins the normalization: representations fold, values do
// not.
func TestNormalize(t *testing.T) {
	at := time.Date(2025, 5, 1, 10, 0, 0, 0, time.FixedZone("", -7*3600))
	for _, tt := range []struct {
		in   any
		typ  string
		want any
	}{
		{int64(3), "BIGINT", 3.0},
		{int32(3), "INT4", 3.0},
		{true, "BOOL", 1.0},
		{false, "", 0.0},
		{"12.50", "NUMERIC", 12.5},
		{"12.50", "DECIMAL", 12.5},
		{"12.50", "TEXT", "12.50"}, // text stays text
		{[]byte("x "), "BLOB", "x "},
		{at, "TIMESTAMPTZ", "2025-05-01 17:00:00"},
		{time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC), "DATE", "2025-05-01"},
		{nil, "TEXT", nil},
	} {
		got, err := normalizeValue(tt.in, tt.typ)
		if assert.NoError(t, err, "normalizeValue(%#v, %q) = %#v, %v; want %#v", tt.in, tt.typ, got, err, tt.want) {
			assert.Equal(t, tt.want, got, "normalizeValue(%#v, %q) = %#v, %v; want %#v", tt.in, tt.typ, got, err, tt.want)
		}
	}
	_, err := normalizeValue("x", "NUMERIC")
	assert.Error(t, err, "a NUMERIC that is not a number passed")
	if _, err := normalizeValue(struct{}{}, ""); err == nil {
		t.Error("an unknown Go type passed")
	}
	if same("1", 1.0) || same(nil, "") || same("a", "a ") || same("a", "A") {
		t.Error("same folds values, not representations")
	}
	if assert.True(t, same(0.1+0.2, 0.3), "the float tolerance is not 1e-9 relative") {
		assert.False(t, same(1.0, 1.0001), "the float tolerance is not 1e-9 relative")
	}
}

// jsonKinds describes, per column, the JSON types of its values as a
// client reads them in text, an answer's results JSON: i (a number
// written as an integer, 256), f (written as a float, 256.0 or 2.5), s
// (string), b (boolean), o (an object or array); null is left out. Two
// runs whose rows normalize alike may still differ here, as a count that
// is a number inline and text (a DECIMAL) when read from a stored table,
// or a float column whose integral values are written as integers.
func jsonKinds(text []byte) (string, error) {
	rows, err := decodeNumbers(text)
	if err != nil {
		return "", err
	}
	if len(rows) == 0 {
		return "", nil
	}
	cols := make([]map[byte]bool, len(rows[0]))
	for _, row := range rows {
		for i, v := range row {
			if i >= len(cols) {
				continue
			}
			if cols[i] == nil {
				cols[i] = map[byte]bool{}
			}
			switch x := v.(type) {
			case nil:
			case bool:
				cols[i]['b'] = true
			case string:
				cols[i]['s'] = true
			case json.Number:
				if strings.ContainsAny(string(x), ".eE") {
					cols[i]['f'] = true
				} else {
					cols[i]['i'] = true
				}
			default:
				cols[i]['o'] = true
			}
		}
	}
	var b strings.Builder
	for i, c := range cols {
		if i > 0 {
			b.WriteByte(',')
		}
		for _, k := range []byte("bfios") {
			if c[k] {
				b.WriteByte(k)
			}
		}
	}
	return b.String(), nil
}

// decodeNumbers decodes results JSON (an array of rows) with its numbers
// as json.Number.
func decodeNumbers(text []byte) ([][]any, error) {
	var rows [][]any
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	if err := dec.Decode(&rows); err != nil {
		return nil, fmt.Errorf("results JSON: %w", err)
	}
	return rows, nil
}

// decodeResults decodes results JSON into rows as a computed answer holds
// them: a number written as an integer as int64, any other as float64.
func decodeResults(text []byte) ([][]any, error) {
	rows, err := decodeNumbers(text)
	if err != nil {
		return nil, err
	}
	for _, row := range rows {
		for j, v := range row {
			if n, ok := v.(json.Number); ok {
				if i, err := n.Int64(); err == nil && !strings.ContainsAny(string(n), ".eE") {
					row[j] = i
				} else if f, err := n.Float64(); err == nil {
					row[j] = f
				}
			}
		}
	}
	return rows, nil
}

// resultsJSON is the JSON of a SQL answer's results as a client reads it:
// a cached answer's own, or what encoding/json writes of the answer (the
// Service's form: a float column's values written as floats).
func resultsJSON(res *endpoint.RunResult) ([]byte, error) {
	if raw, ok := res.Results.(json.RawMessage); ok {
		return raw, nil
	}
	b, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	var x struct {
		Results json.RawMessage `json:"results"`
	}
	if err := json.Unmarshal(b, &x); err != nil {
		return nil, err
	}
	return x.Results, nil
}
