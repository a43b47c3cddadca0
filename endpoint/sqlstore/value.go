package sqlstore

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// tagged is the stored form of a Go value held in an `any` field: a
// variable's default value, and the test value of a query variable in rows
// written before it was kept as JSON text (see legacyJSON). Plain JSON would
// lose the Go type: int64(7) would come back as float64(7) and []string as
// []any, and a value read back would no longer equal the one written. The
// tag keeps the type, so that the round trip is exact for every type that
// encoding/json and variable.Normalize produce.
type tagged struct {
	T string            `json:"t"`
	V json.RawMessage   `json:"v,omitempty"`
	A []tagged          `json:"a,omitempty"`
	M map[string]tagged `json:"m,omitempty"`
}

// Type tags. tagJSON is the fallback for any other type: its JSON is kept
// and decoded into the generic encoding/json form.
const (
	tagNil     = "nil"
	tagBool    = "bool"
	tagString  = "string"
	tagFloat64 = "float64"
	tagInt64   = "int64"
	tagInt     = "int"
	tagNumber  = "number" // json.Number
	tagStrings = "strings"
	tagSlice   = "slice"
	tagMap     = "map"
	tagJSON    = "json"
)

// encodeValue returns the tagged form of v.
func encodeValue(v any) (tagged, error) {
	switch x := v.(type) {
	case nil:
		return tagged{T: tagNil}, nil
	case bool:
		return encodeJSON(tagBool, x)
	case string:
		if err := checkUTF8("string value", x); err != nil {
			return tagged{}, err
		}
		return encodeJSON(tagString, x)
	case float64:
		return encodeJSON(tagFloat64, x)
	case int64:
		return encodeJSON(tagInt64, x)
	case int:
		return encodeJSON(tagInt, x)
	case json.Number:
		return encodeJSON(tagNumber, x.String())
	case []string:
		return encodeStrings(x)
	case []any:
		return encodeSlice(x)
	case map[string]any:
		return encodeMap(x)
	default:
		return encodeJSON(tagJSON, x)
	}
}

// encodeJSON returns x as its JSON, tagged.
func encodeJSON(tag string, x any) (tagged, error) {
	b, err := json.Marshal(x)
	if err != nil {
		return tagged{}, fmt.Errorf("encoding %T value: %w", x, err)
	}
	return tagged{T: tag, V: b}, nil
}

// encodeStrings returns the tagged form of a []string: its JSON, or no
// JSON at all for a nil slice, which decodes as nil again.
func encodeStrings(x []string) (tagged, error) {
	if x == nil {
		return tagged{T: tagStrings}, nil
	}
	for _, e := range x {
		if err := checkUTF8("list element", e); err != nil {
			return tagged{}, err
		}
	}
	return encodeJSON(tagStrings, x)
}

// encodeSlice returns the tagged form of a []any: its elements tagged, and
// V "null" for a nil slice.
func encodeSlice(x []any) (tagged, error) {
	t := tagged{T: tagSlice, A: make([]tagged, len(x))}
	if x == nil {
		t.A = nil
		t.V = json.RawMessage("null")
	}
	for i, e := range x {
		et, err := encodeValue(e)
		if err != nil {
			return tagged{}, err
		}
		t.A[i] = et
	}
	return t, nil
}

// encodeMap returns the tagged form of a map[string]any: its values
// tagged, and V "null" for a nil map.
func encodeMap(x map[string]any) (tagged, error) {
	t := tagged{T: tagMap, M: make(map[string]tagged, len(x))}
	if x == nil {
		t.M = nil
		t.V = json.RawMessage("null")
	}
	for k, e := range x {
		if err := checkUTF8("map key", k); err != nil {
			return tagged{}, err
		}
		et, err := encodeValue(e)
		if err != nil {
			return tagged{}, err
		}
		t.M[k] = et
	}
	return t, nil
}

// decodeValue is the inverse of encodeValue.
func decodeValue(t tagged) (any, error) {
	switch t.T {
	case tagNil:
		return nil, nil
	case tagBool:
		return decodeAs[bool](t)
	case tagString:
		return decodeAs[string](t)
	case tagFloat64:
		return decodeAs[float64](t)
	case tagInt64:
		return decodeAs[int64](t)
	case tagInt:
		return decodeAs[int](t)
	case tagNumber:
		return decodeNumber(t)
	case tagStrings:
		return decodeStrings(t)
	case tagSlice:
		return decodeSlice(t)
	case tagMap:
		return decodeMap(t)
	case tagJSON:
		return decodeAs[any](t)
	default:
		return nil, fmt.Errorf("unknown stored value type %q", t.T)
	}
}

// decodeNumber decodes a json.Number, stored as its text.
func decodeNumber(t tagged) (any, error) {
	s, err := decodeAs[string](t)
	if err != nil {
		return nil, err
	}
	return json.Number(s.(string)), nil
}

// decodeStrings decodes a []string: nil when no JSON was stored, never nil
// otherwise.
func decodeStrings(t tagged) (any, error) {
	if t.V == nil {
		return []string(nil), nil
	}
	var s []string
	if err := unmarshalTagged(t, &s); err != nil {
		return nil, err
	}
	if s == nil {
		s = []string{}
	}
	return s, nil
}

// decodeSlice decodes a []any, nil when V is "null".
func decodeSlice(t tagged) (any, error) {
	if string(t.V) == "null" {
		return []any(nil), nil
	}
	out := make([]any, len(t.A))
	for i, e := range t.A {
		v, err := decodeValue(e)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// decodeMap decodes a map[string]any, nil when V is "null".
func decodeMap(t tagged) (any, error) {
	if string(t.V) == "null" {
		return map[string]any(nil), nil
	}
	out := make(map[string]any, len(t.M))
	for k, e := range t.M {
		v, err := decodeValue(e)
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

// decodeAs decodes t's JSON as a T. The value is read only after decoding:
// in `return v, f(&v)` Go leaves unspecified whether v is read before or
// after f runs.
func decodeAs[T any](t tagged) (any, error) {
	var v T
	if err := unmarshalTagged(t, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// unmarshalTagged decodes t's JSON into dst, naming the stored type on error.
func unmarshalTagged(t tagged, dst any) error {
	if err := json.Unmarshal(t.V, dst); err != nil {
		return fmt.Errorf("decoding stored %s value: %w", t.T, err)
	}
	return nil
}

// marshalValue returns the stored text of v.
func marshalValue(v any) (string, error) {
	t, err := encodeValue(v)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(t)
	if err != nil {
		return "", fmt.Errorf("encoding %T value: %w", v, err)
	}
	return string(b), nil
}

// unmarshalValue decodes text written by marshalValue.
func unmarshalValue(s string) (any, error) {
	var t tagged
	if err := json.Unmarshal([]byte(s), &t); err != nil {
		return nil, fmt.Errorf("decoding stored value: %w", err)
	}
	return decodeValue(t)
}

// legacyJSON returns the JSON text of a query variable's test value stored
// in the tagged form by rows written before test values were kept as JSON
// text: the text the API's decoding keeps (compact, keys sorted, < > &
// unescaped), which the row would hold had it been written now. A null
// comes back nil (no test value).
func legacyJSON(t tagged) (json.RawMessage, error) {
	v, err := decodeValue(t)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encoding stored %s value: %w", t.T, err)
	}
	text := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if string(text) == "null" {
		return nil, nil
	}
	return text, nil
}
