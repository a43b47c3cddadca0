package variable

import (
	"encoding/json"
	"errors"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"strings"
	"testing"
)

const testID = "6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b"

func TestNormalizeAccepts(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   Variable
		want Variable
	}{
		{
			name: "code_name derived, upper-case id canonicalised",
			in:   Variable{ID: strings.ToUpper(testID), Name: "Start date", Type: Date},
			want: Variable{ID: testID, Name: "Start date", CodeName: "start_date", Type: Date},
		},
		{
			name: "id in braces",
			in:   Variable{ID: "{" + testID + "}", Name: "x", Type: String},
			want: Variable{ID: testID, Name: "x", CodeName: "x", Type: String},
		},
		{
			name: "id without hyphens",
			in:   Variable{ID: strings.ReplaceAll(testID, "-", ""), Name: "x", Type: String},
			want: Variable{ID: testID, Name: "x", CodeName: "x", Type: String},
		},
		{
			name: "code_name given is kept even if unlike the name",
			in:   Variable{ID: testID, Name: "Country", CodeName: "Ctry_1", Type: String},
			want: Variable{ID: testID, Name: "Country", CodeName: "Ctry_1", Type: String},
		},
		{
			name: "name starting with a digit",
			in:   Variable{ID: testID, Name: "7 day window", Type: Number},
			want: Variable{ID: testID, Name: "7 day window", CodeName: "_7_day_window", Type: Number},
		},
		{
			name: "String default from a JSON number is its text",
			in:   Variable{ID: testID, Name: "zip", Type: String, DefaultValue: json.Number("01234")},
			want: Variable{ID: testID, Name: "zip", CodeName: "zip", Type: String, DefaultValue: "01234"},
		},
		{
			name: "Number default from a string becomes int64",
			in:   Variable{ID: testID, Name: "n", Type: Number, DefaultValue: "42"},
			want: Variable{ID: testID, Name: "n", CodeName: "n", Type: Number, DefaultValue: int64(42)},
		},
		{
			name: "Number default float64 whole becomes int64",
			in:   Variable{ID: testID, Name: "n", Type: Number, DefaultValue: float64(3)},
			want: Variable{ID: testID, Name: "n", CodeName: "n", Type: Number, DefaultValue: int64(3)},
		},
		{
			name: "Number default fraction stays float64",
			in:   Variable{ID: testID, Name: "n", Type: Number, DefaultValue: json.RawMessage(`2.5`)},
			want: Variable{ID: testID, Name: "n", CodeName: "n", Type: Number, DefaultValue: 2.5},
		},
		{
			name: "Boolean default from a string",
			in:   Variable{ID: testID, Name: "b", Type: Boolean, DefaultValue: "TRUE"},
			want: Variable{ID: testID, Name: "b", CodeName: "b", Type: Boolean, DefaultValue: true},
		},
		{
			name: "Date default keeps its text, relative stays relative",
			in:   Variable{ID: testID, Name: "from", Type: Date, DefaultValue: "-7d"},
			want: Variable{ID: testID, Name: "from", CodeName: "from", Type: Date, DefaultValue: "-7d"},
		},
		{
			name: "Date default as a JSON string",
			in:   Variable{ID: testID, Name: "from", Type: Date, DefaultValue: json.RawMessage(`"2025-01-31"`)},
			want: Variable{ID: testID, Name: "from", CodeName: "from", Type: Date, DefaultValue: "2025-01-31"},
		},
		{
			name: "Date default as a Timestamp becomes text",
			in:   Variable{ID: testID, Name: "from", Type: Date, DefaultValue: Timestamp{Time: mustTime(t, "2025-01-31T00:00:00Z"), DateOnly: true}},
			want: Variable{ID: testID, Name: "from", CodeName: "from", Type: Date, DefaultValue: "2025-01-31"},
		},
		{
			name: "Date default as a time.Time becomes RFC 3339 text in UTC",
			in:   Variable{ID: testID, Name: "from", Type: Date, DefaultValue: mustTime(t, "2025-01-31T10:00:00+02:00")},
			want: Variable{ID: testID, Name: "from", CodeName: "from", Type: Date, DefaultValue: "2025-01-31T08:00:00Z"},
		},
		{
			name: "JSON null default means none",
			in:   Variable{ID: testID, Name: "s", Type: String, DefaultValue: json.RawMessage(` null `)},
			want: Variable{ID: testID, Name: "s", CodeName: "s", Type: String},
		},
		{
			name: "List with default among values",
			in:   Variable{ID: testID, Name: "Plan", Type: List, Values: []string{"free", "pro"}, DefaultValue: "pro"},
			want: Variable{ID: testID, Name: "Plan", CodeName: "plan", Type: List, Values: []string{"free", "pro"}, DefaultValue: "pro"},
		},
		{
			name: "List without default",
			in:   Variable{ID: testID, Name: "Plan", Type: List, Values: []string{"free"}},
			want: Variable{ID: testID, Name: "Plan", CodeName: "plan", Type: List, Values: []string{"free"}},
		},
		{
			name: "multi List default from a JSON array becomes []string",
			in:   Variable{ID: testID, Name: "Plans", Type: List, IsMulti: true, Values: []string{"free", "pro"}, DefaultValue: []any{"pro", "free"}},
			want: Variable{ID: testID, Name: "Plans", CodeName: "plans", Type: List, IsMulti: true, Values: []string{"free", "pro"}, DefaultValue: []string{"pro", "free"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.in
			require.NoError(t, v.Normalize(), "Normalize")
			assert.Equal(t, tc.want, v, "Normalize gave")
			// Normalizing twice changes nothing.
			again := v
			require.NoError(t, again.Normalize(), "second Normalize")
			assert.Equal(t, v, again, "second Normalize changed")
		})
	}
}

func TestNormalizeRejects(t *testing.T) {
	ok := Variable{ID: testID, Name: "Country", Type: String}
	with := func(f func(v *Variable)) Variable {
		v := ok
		f(&v)
		return v
	}
	for _, tc := range []struct {
		name    string
		in      Variable
		field   string
		message string // the whole Message
	}{
		{"no id", with(func(v *Variable) { v.ID = "" }), "id", "required"},
		{"bad id", with(func(v *Variable) { v.ID = "not-a-uuid" }), "id", `must be a valid UUID, got "not-a-uuid"`},
		{"short id", with(func(v *Variable) { v.ID = testID[:35] }), "id", `must be a valid UUID, got "` + testID[:35] + `"`},
		{"no name", with(func(v *Variable) { v.Name = "" }), "name", "required"},
		{"blank name", with(func(v *Variable) { v.Name = " \t" }), "name", "required"},
		{"underivable code_name", with(func(v *Variable) { v.Name = "日付" }), "code_name", `cannot be derived from name "日付" (it has no letter or digit); give one`},
		{"code_name starting with a digit", with(func(v *Variable) { v.CodeName = "1a" }), "code_name", `must match ^[A-Za-z_][A-Za-z0-9_]*$, got "1a"`},
		{"code_name with a space", with(func(v *Variable) { v.CodeName = "a b" }), "code_name", `must match ^[A-Za-z_][A-Za-z0-9_]*$, got "a b"`},
		{"code_name with a brace", with(func(v *Variable) { v.CodeName = "a}" }), "code_name", `must match ^[A-Za-z_][A-Za-z0-9_]*$, got "a}"`},
		{"unknown type", with(func(v *Variable) { v.Type = "Text" }), "type", `must be one of String, Number, Boolean, Date, List, got "Text"`},
		{"no type", with(func(v *Variable) { v.Type = "" }), "type", `must be one of String, Number, Boolean, Date, List, got ""`},
		{"lower-case type", with(func(v *Variable) { v.Type = "string" }), "type", `must be one of String, Number, Boolean, Date, List, got "string"`},
		{"values on a String", with(func(v *Variable) { v.Values = []string{"a"} }), "values", "only a List has values, this variable is a String"},
		{"is_multi on a String", with(func(v *Variable) { v.IsMulti = true }), "is_multi", "only a List can be multi-valued, this variable is a String"},
		{"List without values", with(func(v *Variable) { v.Type = List }), "values", "a List needs at least one value"},
		{"List with an empty value", with(func(v *Variable) { v.Type = List; v.Values = []string{"a", ""} }), "values", "value 1 is empty"},
		{"List with a duplicate", with(func(v *Variable) { v.Type = List; v.Values = []string{"a", "b", "a"} }), "values", `value "a" appears twice`},
		{"List default not among values", with(func(v *Variable) { v.Type = List; v.Values = []string{"US", "UK"}; v.DefaultValue = "FR" }),
			"default_value", `expected one of the List's values, got "FR": not one of "US", "UK"`},
		{"multi List default not an array", with(func(v *Variable) { v.Type = List; v.IsMulti = true; v.Values = []string{"US"}; v.DefaultValue = "US" }),
			"default_value", `expected an array of the List's values, got "US": this List takes an array of its values`},
		{"multi List default with a stranger", with(func(v *Variable) {
			v.Type = List
			v.IsMulti = true
			v.Values = []string{"US"}
			v.DefaultValue = []string{"US", "FR"}
		}), "default_value", `expected an array of the List's values, got ["US","FR"]: element 1: "FR" is not one of "US"`},
		{"Number default not a number", with(func(v *Variable) { v.Type = Number; v.DefaultValue = "12abc" }), "default_value", `expected Number, got "12abc": not a number`},
		{"Boolean default not a boolean", with(func(v *Variable) { v.Type = Boolean; v.DefaultValue = "yes" }), "default_value", `expected Boolean, got "yes": want true or false`},
		{"Date default not a date", with(func(v *Variable) { v.Type = Date; v.DefaultValue = "2025-02-30" }), "default_value", `expected Date, got "2025-02-30": not a real calendar date; want a day from 01 to 28 (2025-02 has 28 days)`},
		{"String default an object", with(func(v *Variable) { v.DefaultValue = map[string]any{"a": 1.0} }), "default_value", `expected String, got {"a":1}: an object is not a value`},
		{"reserved code_name", with(func(v *Variable) { v.CodeName = "__endpointkit_tenant" }), "code_name",
			`"__endpointkit_tenant" starts with "__endpointkit", which is reserved for the placeholders the library binds itself (such as __endpointkit_tenant)`},
		{"reserved code_name, other case", with(func(v *Variable) { v.CodeName = "__EndpointKit_x" }), "code_name",
			`"__EndpointKit_x" starts with "__endpointkit", which is reserved for the placeholders the library binds itself (such as __endpointkit_tenant)`},
		{"reserved code_name, the prefix alone", with(func(v *Variable) { v.CodeName = "__endpointkit" }), "code_name",
			`"__endpointkit" starts with "__endpointkit", which is reserved for the placeholders the library binds itself (such as __endpointkit_tenant)`},
		{"List value with a NUL", with(func(v *Variable) { v.Type = List; v.Values = []string{"a", "b\x00"} }), "values",
			`value 1 the text holds a NUL character (\u0000), which databases cannot store in text`},
		{"List value not UTF-8", with(func(v *Variable) { v.Type = List; v.Values = []string{"a\xff"} }), "values", `value 0 the text is not valid UTF-8`},
		{"String default with a NUL", with(func(v *Variable) { v.DefaultValue = "x\x00" }), "default_value",
			`expected String, got "x\x00": the text holds a NUL character (\u0000), which databases cannot store in text`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.in
			err := v.Normalize()
			require.Error(t, err, "Normalize accepted %#v", tc.in)
			assert.ErrorIs(t, err, ErrInvalid)
			var de *DefinitionError
			require.ErrorAs(t, err, &de)
			if assert.Equal(t, tc.field, de.Field, "got Field %q Message %q\nwant Field %q Message %q", de.Field, de.Message, tc.field, tc.message) {
				assert.Equal(t, tc.message, de.Message, "got Field %q Message %q\nwant Field %q Message %q", de.Field, de.Message, tc.field, tc.message)
			}
			want := "variable: " + tc.field + ": " + tc.message
			assert.Equal(t, want, err.Error(), "Error()")
		})
	}
}

func TestTypeValid(t *testing.T) {
	for _, typ := range []Type{String, Number, Boolean, Date, List} {
		assert.True(t, typ.Valid(), "%q.Valid() = false", typ)
	}
	for _, typ := range []Type{"", "string", "Integer", "LIST"} {
		assert.False(t, typ.Valid(), "%q.Valid() = true", typ)
	}
}

func TestVariableJSON(t *testing.T) {
	in := `{"id":"` + testID + `","name":"Plans","code_name":"plans","type":"List","default_value":["pro"],"values":["free","pro"],"is_multi":true}`
	var v Variable
	require.NoError(t, json.Unmarshal([]byte(in), &v))
	require.NoError(t, v.Normalize())
	out, err := json.Marshal(v)
	require.NoError(t, err)
	assert.Equal(t, in, string(out), "JSON round trip:\n got  %s", out)
}

// TestNormalizeRefusesWhatNoStoreHolds: a name with a NUL character, which
// PostgreSQL cannot store in text, and a code name longer than the stores'
// key column (MaxCodeNameLength bytes, VARCHAR(255) on PostgreSQL and
// MySQL), given or derived from a long name, were accepted by Normalize and
// failed in the store: a 502 "storage failed" for a client's bad input.
func TestNormalizeRefusesWhatNoStoreHolds(t *testing.T) {
	long := strings.Repeat("c", MaxCodeNameLength+1)
	for _, tc := range []struct {
		name    string
		in      Variable
		field   string
		message string
	}{
		{"name with a NUL", Variable{ID: testID, Name: "a\x00b", Type: String}, "name",
			`the text holds a NUL character (\u0000), which databases cannot store in text`},
		{"name not UTF-8", Variable{ID: testID, Name: "a\xff", Type: String}, "name", `the text is not valid UTF-8`},
		{"long code_name", Variable{ID: testID, Name: "x", CodeName: long, Type: String}, "code_name",
			`is 256 bytes long; a code name has at most 255`},
		{"long name, code_name derived", Variable{ID: testID, Name: long, Type: String}, "code_name",
			`derived from the name is 256 bytes long; a code name has at most 255: give a shorter one`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.in
			err := v.Normalize()
			var de *DefinitionError
			require.True(t, errors.As(err, &de), "Normalize() = %v, want a *DefinitionError", err)
			assert.Equal(t, tc.field, de.Field)
			assert.Equal(t, tc.message, de.Message)
		})
	}
	v := Variable{ID: testID, Name: "x", CodeName: strings.Repeat("c", MaxCodeNameLength), Type: String}
	assert.NoError(t, v.Normalize(), "a code name of MaxCodeNameLength bytes")
}
