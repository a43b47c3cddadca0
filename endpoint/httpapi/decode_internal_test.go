package httpapi

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecodeJSONErrors(t *testing.T) {
	cases := []struct {
		name   string
		body   string
		dst    func() any
		code   string
		attr   string
		detail string
	}{
		{"truncated", `{"variables": {`, run, CodeParseError, "", "Malformed JSON at byte 15: unexpected end of JSON input."},
		{"bad token", `{"limit": 1,}`, run, CodeParseError, "", "Malformed JSON at byte 13: invalid character '}' looking for beginning of object key string."},
		{"two values", `{} []`, run, CodeParseError, "", "Malformed JSON at byte 4: invalid character '[' after top-level value."},
		{"array", `[{"variables": {}}]`, run, CodeParseError, "", "Request body must be a JSON object, got array."},
		{"string", `"x"`, run, CodeParseError, "", "Request body must be a JSON object, got string."},
		{"number", `12`, run, CodeParseError, "", "Request body must be a JSON object, got number."},
		{"boolean", `true`, run, CodeParseError, "", "Request body must be a JSON object, got boolean."},
		{"null", `null`, run, CodeParseError, "", "Request body must be a JSON object, got null."},
		{"unknown keys", `{"b": 1, "a": 2, "variables": {}}`, run, endpoint.CodeInvalidInput, "a", "Unknown field(s): a, b"},
		{"case matters", `{"Variables": {}}`, run, endpoint.CodeInvalidInput, "Variables", "Unknown field(s): Variables"},
		{"string limit", `{"limit": "5"}`, run, endpoint.CodeInvalidInput, "limit", "Invalid type for 'limit': expected integer, got string."},
		{"huge limit", `{"limit": 1e30}`, run, endpoint.CodeInvalidInput, "limit", "Invalid type for 'limit': expected integer, got number 1e30."},
		{"object version", `{"version": {}}`, run, endpoint.CodeInvalidInput, "version", "expected integer, got object."},
		{"array variables", `{"variables": [1]}`, run, endpoint.CodeInvalidInput, "variables", "Invalid type for 'variables': expected object, got array."},
		{"number refresh", `{"refresh": 1}`, run, endpoint.CodeInvalidInput, "refresh", "expected string, got number."},
		{"boolean name", `{"name": true}`, create, endpoint.CodeInvalidInput, "name", "Invalid type for 'name': expected string, got boolean."},
		{"string is_active", `{"is_active": "yes"}`, create, endpoint.CodeInvalidInput, "is_active", "expected boolean, got string."},
		{"query errors are the Service's", `{"query": {"kind": 1}}`, create, endpoint.CodeInvalidInput, "query", `Query "kind" must be a string.`},
		{"values not an array", `{"values": "US"}`, newVariable, endpoint.CodeInvalidInput, "values", "Invalid type for 'values': expected array, got string."},
		{"a value not a string", `{"values": ["US", 1]}`, newVariable, endpoint.CodeInvalidInput, "values", "expected string, got number."},
		{"patch of a variable", `{"type": ["Date"]}`, patch, endpoint.CodeInvalidInput, "type", "expected string, got array."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := decodeJSON([]byte(c.body), c.dst())
			var e *endpoint.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, http.StatusBadRequest, e.Status)
			assert.ErrorIs(t, e, endpoint.ErrInvalid)
			assert.Equal(t, c.code, e.Code)
			assert.Equal(t, c.attr, e.Attr)
			assert.Contains(t, e.Detail, c.detail)
		})
	}
}

func run() any         { return &endpoint.RunRequest{} }
func create() any      { return &endpoint.CreateRequest{} }
func newVariable() any { return &variable.Variable{} }
func patch() any       { return &endpoint.VariablePatch{} }

func TestDecodeJSONKeepsNumbers(t *testing.T) {
	var req endpoint.RunRequest
	require.NoError(t, decodeJSON([]byte(`{"variables": {"big": 12345678901234567890123, "precise": 0.1000000000000000055511151231257827}, "limit": 7}`), &req))
	assert.Equal(t, json.Number("12345678901234567890123"), req.Variables["big"])
	assert.Equal(t, json.Number("0.1000000000000000055511151231257827"), req.Variables["precise"])
	require.NotNil(t, req.Limit, "req.Limit is nil")
	got, want := *req.Limit, 7
	assert.Equal(t, want, got, "*req.Limit")

	var v variable.Variable
	require.NoError(t, decodeJSON([]byte(`{"name": "n", "type": "Number", "default_value": 9007199254740993}`), &v))
	if got, want := v.DefaultValue, json.Number("9007199254740993"); !reflect.DeepEqual(got, want) {
		t.Errorf("beyond float64's exact integers: v.DefaultValue = %q, want %q", got, want)
	}
}

func TestJSONNames(t *testing.T) {
	type inner struct {
		Deep string `json:"deep"`
	}
	type sample struct {
		inner
		Plain    int
		Tagged   string `json:"tagged,omitempty"`
		Skipped  string `json:"-"`
		unexport string
	}
	assert.Equal(t, map[string]bool{"deep": true, "Plain": true, "tagged": true}, jsonNames(reflect.TypeFor[sample]()))
}

func TestCheckContentType(t *testing.T) {
	ok := []string{"application/json", "Application/JSON", "application/json; charset=utf-8", "application/json;charset=UTF-8", "application/merge-patch+json", "application/vnd.api+json"}
	for _, ct := range ok {
		assert.NoError(t, checkContentType(ct), "%v", ct)
	}
	bad := []string{"text/plain", "text/json", "application/xml", "application/json; charset=latin1", "multipart/form-data; boundary=x", "application/x-www-form-urlencoded", "json", "application/json; =", "+json"}
	for _, ct := range bad {
		err := checkContentType(ct)
		var e *endpoint.Error
		require.ErrorAs(t, err, &e, "%v: errors.As(err, &e) is false", ct)
		got, want := e.Status, http.StatusUnsupportedMediaType
		assert.Equal(t, want, got, "%v: e.Status", ct)
		if got, want := e.Code, CodeUnsupportedMediaType; got != want {
			t.Errorf("%v: e.Code = %q, want %q", ct, got, want)
		}
	}
}
