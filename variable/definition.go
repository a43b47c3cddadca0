package variable

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
)

// DefinitionError reports a variable definition that Normalize rejected. Field
// is the JSON name of the offending field, so that an API can point at it.
type DefinitionError struct {
	Field   string
	Message string
}

// Error returns a message such as
// `variable: code_name: must match ^[A-Za-z_][A-Za-z0-9_]*$, got "1a"`.
func (e *DefinitionError) Error() string {
	return "variable: " + e.Field + ": " + e.Message
}

// Unwrap returns ErrInvalid, so that errors.Is(err, ErrInvalid) holds.
func (e *DefinitionError) Unwrap() error { return ErrInvalid }

func definitionErrorf(field, format string, args ...any) *DefinitionError {
	return &DefinitionError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// MaxCodeNameLength is the longest code name, in bytes: the key column
// the stores keep it in (VARCHAR(255) on PostgreSQL and MySQL).
const MaxCodeNameLength = 255

// checkTime is the clock used only to check that a default is a valid value.
// Validity of a relative date does not depend on the day it is resolved, so
// any fixed instant serves, and Normalize stays free of time.Now.
var checkTime = time.Date(2000, time.January, 1, 0, 0, 0, 0, time.UTC)

// Normalize checks a definition and puts it in canonical form before it is
// stored: the id becomes the lower-case hyphenated UUID, an empty code_name
// is derived from the name with CodeNameFrom, and the default value is
// replaced by its coerced, JSON-friendly form (a Number default becomes an
// int64 or float64, a multi-List default a []string). A Date default keeps the
// text it was given, because a relative date such as "-7d" must be resolved
// when the variable is used, not when it is saved.
//
// The first problem found is returned as a *DefinitionError; v may then be
// partly normalized.
func (v *Variable) Normalize() error {
	if v.ID == "" {
		return definitionErrorf("id", "required")
	}
	id, err := uuid.Parse(v.ID)
	if err != nil {
		return definitionErrorf("id", "must be a valid UUID, got %q", v.ID)
	}
	v.ID = id.String()

	if strings.TrimSpace(v.Name) == "" {
		return definitionErrorf("name", "required")
	}
	if reason := textProblem(v.Name); reason != "" {
		return definitionErrorf("name", "%s", reason)
	}

	derived := v.CodeName == ""
	if derived {
		v.CodeName = CodeNameFrom(v.Name)
		if v.CodeName == "" {
			return definitionErrorf("code_name", "cannot be derived from name %q (it has no letter or digit); give one", v.Name)
		}
	}
	if !ValidCodeName(v.CodeName) {
		return definitionErrorf("code_name", "must match %s, got %q", codeNamePattern, v.CodeName)
	}
	if len(v.CodeName) > MaxCodeNameLength {
		if derived {
			return definitionErrorf("code_name", "derived from the name is %d bytes long; a code name has at most %d: give a shorter one", len(v.CodeName), MaxCodeNameLength)
		}
		return definitionErrorf("code_name", "is %d bytes long; a code name has at most %d", len(v.CodeName), MaxCodeNameLength)
	}
	if Reserved(v.CodeName) {
		return definitionErrorf("code_name", "%q starts with %q, which is reserved for the placeholders the library binds itself (such as %s_tenant)", v.CodeName, ReservedPrefix, ReservedPrefix)
	}

	if !v.Type.Valid() {
		return definitionErrorf("type", "must be one of String, Number, Boolean, Date, List, got %q", string(v.Type))
	}

	if v.Type == List {
		if err := checkValues(v.Values); err != nil {
			return err
		}
	} else {
		if len(v.Values) > 0 {
			return definitionErrorf("values", "only a List has values, this variable is a %s", v.Type)
		}
		if v.IsMulti {
			return definitionErrorf("is_multi", "only a List can be multi-valued, this variable is a %s", v.Type)
		}
	}

	return v.normalizeDefault()
}

func checkValues(values []string) error {
	if len(values) == 0 {
		return definitionErrorf("values", "a List needs at least one value")
	}
	seen := make(map[string]bool, len(values))
	for i, s := range values {
		if s == "" {
			return definitionErrorf("values", "value %d is empty", i)
		}
		if reason := textProblem(s); reason != "" {
			return definitionErrorf("values", "value %d %s", i, reason)
		}
		if seen[s] {
			return definitionErrorf("values", "value %q appears twice", s)
		}
		seen[s] = true
	}
	return nil
}

func (v *Variable) normalizeDefault() error {
	if v.DefaultValue == nil {
		return nil
	}
	if isJSONNull(v.DefaultValue) {
		// A JSON null default (as a raw message) means "no default".
		v.DefaultValue = nil
		return nil
	}
	val, err := v.Coerce(v.DefaultValue, checkTime)
	if err != nil {
		ve := err.(*ValueError)
		msg := "expected " + string(v.Type)
		if v.Type == List {
			if v.IsMulti {
				msg = "expected an array of the List's values"
			} else {
				msg = "expected one of the List's values"
			}
		}
		msg += ", got " + describe(v.DefaultValue)
		if ve.Reason != "" {
			msg += ": " + ve.Reason
		}
		return &DefinitionError{Field: "default_value", Message: msg}
	}
	if v.Type == Date {
		// Keep the text, so that "-7d" stays relative; only a time.Time or a
		// Timestamp is turned into text.
		s, _ := dateText(v.DefaultValue)
		if s == "" {
			ts := val.(Timestamp)
			if ts.DateOnly {
				s = ts.Time.Format(time.DateOnly)
			} else {
				s = ts.Time.Format(time.RFC3339Nano)
			}
		}
		v.DefaultValue = s
		return nil
	}
	v.DefaultValue = val
	return nil
}

// Valid reports whether t is one of the five known types.
func (t Type) Valid() bool {
	switch t {
	case String, Number, Boolean, Date, List:
		return true
	}
	return false
}

// isJSONNull reports a json.RawMessage holding null.
func isJSONNull(v any) bool {
	r, ok := v.(json.RawMessage)
	return ok && string(bytes.TrimSpace(r)) == "null"
}

// dateText returns the text of a Date default given as a string or a JSON
// string, and "" for anything else.
func dateText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case json.RawMessage:
		var s string
		if json.Unmarshal(x, &s) == nil {
			return s, true
		}
	}
	return "", false
}
