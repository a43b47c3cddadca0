package insight

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
)

// object is one JSON object being decoded. Every key must be taken or
// explicitly ignored before done, so that an unsupported field is refused by
// name instead of being dropped: encoding/json alone would ignore unknown
// keys, or match them case-insensitively.
type object struct {
	path   string
	fields map[string]json.RawMessage
	used   map[string]bool
}

func parseObject(raw json.RawMessage, path string) (*object, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return nil, errorf(path, "must be a JSON object, got %s", kindOf(raw))
	}
	return &object{path: path, fields: fields, used: map[string]bool{}}, nil
}

// field names a key of o for messages.
func (o *object) field(key string) string {
	if o.path == "" {
		return key
	}
	return o.path + "." + key
}

// take returns the raw value of key; a JSON null counts as absent.
func (o *object) take(key string) (json.RawMessage, bool) {
	raw, ok := o.fields[key]
	o.used[key] = true
	if !ok || isNull(raw) {
		return nil, false
	}
	return raw, true
}

// ignore marks keys that change only how a client draws the result.
func (o *object) ignore(keys ...string) {
	for _, k := range keys {
		o.used[k] = true
	}
}

func (o *object) str(key string) (string, bool, error) {
	raw, ok := o.take(key)
	if !ok {
		return "", false, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false, errorf(o.field(key), "must be a string, got %s", kindOf(raw))
	}
	return s, true, nil
}

func (o *object) boolean(key string) (bool, error) {
	raw, ok := o.take(key)
	if !ok {
		return false, nil
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		return false, errorf(o.field(key), "must be a boolean, got %s", kindOf(raw))
	}
	return b, nil
}

func (o *object) integer(key string) (int, bool, error) {
	raw, ok := o.take(key)
	if !ok {
		return 0, false, nil
	}
	n, err := strconv.Atoi(string(bytes.TrimSpace(raw)))
	if err != nil {
		return 0, false, errorf(o.field(key), "must be a whole number, got %s", kindOf(raw))
	}
	return n, true, nil
}

// array returns the elements of the array under key.
func (o *object) array(key string) ([]json.RawMessage, bool, error) {
	raw, ok := o.take(key)
	if !ok {
		return nil, false, nil
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, false, errorf(o.field(key), "must be an array, got %s", kindOf(raw))
	}
	return elems, true, nil
}

// refuse fails when key is present with anything but null or one of the
// harmless values (compared as JSON text, e.g. "false", "1", "[]").
func (o *object) refuse(key, why string, harmless ...string) error {
	raw, ok := o.take(key)
	if !ok {
		return nil
	}
	text := string(bytes.TrimSpace(raw))
	for _, h := range harmless {
		if text == h {
			return nil
		}
	}
	return errorf(o.field(key), "%s", why)
}

// done fails on the first key (in sorted order) nobody took.
func (o *object) done() error {
	var unknown []string
	for k := range o.fields {
		if !o.used[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	return errorf(o.field(unknown[0]), "unknown or unsupported field")
}

func isNull(raw json.RawMessage) bool {
	return string(bytes.TrimSpace(raw)) == "null"
}

// kindOf names the JSON type of raw for messages, quoting short values.
func kindOf(raw json.RawMessage) string {
	text := strings.TrimSpace(string(raw))
	if text == "" {
		return "nothing"
	}
	var what string
	switch text[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		what = "a string"
	case 't', 'f':
		what = "a boolean"
	case 'n':
		return "null"
	default:
		what = "a number"
	}
	if len(text) <= 40 {
		return what + " " + text
	}
	return what
}

// oneOf formats allowed values for messages.
func oneOf[T ~string](values []T) string {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = string(v)
	}
	return strings.Join(parts, ", ")
}
