package endpoint

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
)

// The JSON form of a float column: every value a JSON number written as a
// float, 256.0 as well as 256.83, so that a client's JSON decoder reads
// the column as one kind whatever the row (encoding/json alone writes the
// float 256 as 256, which most decoders read as an integer). Only the
// encoding changes: the Go values of RunResult.Results stay float64.
// Every writer of an answer's JSON writes it so: the HTTP API's JSON and
// NDJSON answers (which write their rows themselves, as
// appendFloatJSON does), the result cache and the answers shared by identical
// runs (encodeResults), and encoding/json on a RunResult (MarshalJSON:
// the MCP tools, a debug answer, a host).

// appendFloatJSON appends f as encoding/json writes a float64, and ".0"
// after it when that text is an integer's (256 becomes 256.0; 1e+21 and
// 2.5 stay as they are). f must be finite, as encoding/json requires.
func appendFloatJSON(buf []byte, f float64) []byte {
	n := len(buf)
	buf = appendJSONFloat(buf, f)
	return floatText(buf, n)
}

// floatText appends ".0" to buf when buf[from:], a JSON number's text, is
// an integer's (no fraction, no exponent), making it a float's.
func floatText(buf []byte, from int) []byte {
	if from >= len(buf) {
		return buf
	}
	for _, c := range buf[from:] {
		if c == '.' || c == 'e' || c == 'E' {
			return buf
		}
	}
	return append(buf, ".0"...)
}

// appendJSONFloat appends f as encoding/json writes a float64.
func appendJSONFloat(buf []byte, f float64) []byte {
	abs := f
	if abs < 0 {
		abs = -abs
	}
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	buf = strconv.AppendFloat(buf, f, format, -1, 64)
	if format == 'e' {
		// e-09 to e-9, as encoding/json.
		if n := len(buf); n >= 4 && buf[n-4] == 'e' && buf[n-3] == '-' && buf[n-2] == '0' {
			buf[n-2] = buf[n-1]
			buf = buf[:n-1]
		}
	}
	return buf
}

// floatJSON is a value of a float column as encoding/json writes it in
// an answer.
type floatJSON float64

// MarshalJSON writes f with appendFloatJSON; NaN and the infinities are
// refused as encoding/json refuses them.
func (f floatJSON) MarshalJSON() ([]byte, error) {
	x := float64(f)
	if x != x || x > maxFloat || x < -maxFloat {
		return nil, &json.UnsupportedValueError{Value: reflect.ValueOf(x), Str: strconv.FormatFloat(x, 'g', -1, 64)}
	}
	return appendFloatJSON(nil, x), nil
}

const maxFloat = 1.7976931348623157e308

// hasFloat reports whether kinds name a float column.
func hasFloat(kinds []ColumnKind) bool {
	for _, k := range kinds {
		if k == KindFloat {
			return true
		}
	}
	return false
}

// jsonResults is results as encoding/json should write them in an answer
// of columns of kinds: rows whose float columns' values are floatJSON (a
// copy: the rows are the caller's), anything else as it is.
func jsonResults(results any, kinds []ColumnKind) any {
	rows, ok := results.([][]any)
	if !ok || !hasFloat(kinds) {
		return results
	}
	out := make([][]any, len(rows))
	cells := make([]any, 0, len(rows)*len(kinds))
	for i, row := range rows {
		if row == nil {
			continue
		}
		start := len(cells)
		for j, v := range row {
			if j < len(kinds) && kinds[j] == KindFloat {
				switch x := v.(type) {
				case float64:
					v = floatJSON(x)
				case float32:
					v = floatJSON(x)
				}
			}
			cells = append(cells, v)
		}
		out[i] = cells[start:len(cells):len(cells)]
	}
	return out
}

// MarshalJSON writes r as the HTTP API's JSON answer: the fields as
// tagged, and each value of a float column (ColumnKinds) as a float,
// 256.0 rather than 256 (see appendFloatJSON). r's values are not
// changed.
func (r RunResult) MarshalJSON() ([]byte, error) {
	type plain RunResult
	p := plain(r)
	p.Results = jsonResults(r.Results, r.kinds)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // the caller's encoder escapes, or not, as it was told
	if err := enc.Encode(p); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
