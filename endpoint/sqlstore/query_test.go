package sqlstore

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestQueryRoundTrip(t *testing.T) {
	const id = "0190b2a4-7d5e-7b3c-9e1f-2a3b4c5d6e7f"
	tests := []struct {
		name string
		in   driver.Query
	}{
		{"zero", driver.Query{}},
		{"sql", driver.Query{Kind: driver.KindSQL, SQL: "SELECT 1 WHERE a = {variables.x}"}},
		{"sql with variables", driver.Query{
			Kind: driver.KindSQL,
			SQL:  "SELECT count() FROM events WHERE event = {variables.event} AND n > {variables.n}",
			Variables: map[string]driver.VariableRef{
				id:    {VariableID: id, CodeName: "event", Value: json.RawMessage(`"$pageview"`)},
				"v-2": {VariableID: "v-2", CodeName: "n", Value: json.RawMessage(`3`)},
				"v-3": {VariableID: "v-3", CodeName: "m"},
				"v-4": {VariableID: "v-4", CodeName: "l", Value: json.RawMessage(`["a"]`)},
				// Bytes as given, though not compact and not HTML-safe.
				"v-5": {VariableID: "v-5", CodeName: "h", Value: json.RawMessage(`{ "a" : "<b>&" }`)},
				"v-6": {VariableID: "v-6", CodeName: "e", Value: json.RawMessage{}},
			},
		}},
		{"empty variables", driver.Query{Kind: driver.KindSQL, SQL: "SELECT 1", Variables: map[string]driver.VariableRef{}}},
		{"insight", driver.Query{Kind: driver.KindTrends, Insight: []byte(`{"kind":"TrendsQuery","series":[{"event":"$pageview"}]}`)}},
		{"insight with spaces", driver.Query{Kind: driver.KindTrends, Insight: []byte("{ \"kind\" : \"TrendsQuery\" }\n")}},
		{"insight with html", driver.Query{Kind: driver.KindTrends, Insight: []byte(`{"a":"<b>&"}`)}},
		{"insight not json", driver.Query{Kind: driver.KindRetention, Insight: []byte{0xff, 0x00, '{'}}},
		{"empty insight", driver.Query{Kind: driver.KindRetention, Insight: []byte{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assertRoundTrip(t, tt.in, marshalQuery, unmarshalQuery) })
	}
}

func TestQueryStoredTextIsReadableJSON(t *testing.T) {
	text, err := marshalQuery(driver.Query{
		Kind: driver.KindTrends, Insight: []byte(`{"kind":"TrendsQuery"}`),
	})
	require.NoError(t, err)
	assert.Equal(t, `{"kind":"TrendsQuery","insight":{"kind":"TrendsQuery"}}`, text)
}

func TestQueryReadDoesNotAlias(t *testing.T) {
	text, err := marshalQuery(driver.Query{Kind: driver.KindTrends, Insight: []byte(`{"a":1}`)})
	require.NoError(t, err)
	a, err := unmarshalQuery(text)
	require.NoError(t, err)
	b, err := unmarshalQuery(text)
	require.NoError(t, err)
	a.Insight[1] = 'X'
	assert.Equal(t, `{"a":1}`, string(b.Insight))
}

func TestQueryDecodeErrors(t *testing.T) {
	for _, text := range []string{``, `[]`, `{"variables":{"a":{"value":{"t":"alien"}}}}`} {
		_, err := unmarshalQuery(text)
		assert.Error(t, err, "%s: got no error, want one", text)
	}
}

// TestQueryReadsLegacyTestValues: rows written before test values were
// kept as JSON text hold them in the tagged form under "value"; they read
// back as the JSON text the API's decoding keeps, as if written now.
func TestQueryReadsLegacyTestValues(t *testing.T) {
	for _, tt := range []struct{ stored, want string }{
		{`{"t":"string","v":"US"}`, `"US"`},
		{`{"t":"string","v":"a \u003cb\u003e \u0026 c"}`, `"a <b> & c"`},
		{`{"t":"number","v":"12.50"}`, `12.50`},
		{`{"t":"bool","v":true}`, `true`},
		{`{"t":"slice","a":[{"t":"string","v":"free"},{"t":"number","v":"2"},{"t":"nil"},{"t":"slice","a":[{"t":"bool","v":true}]}]}`, `["free",2,null,[true]]`},
		{`{"t":"map","m":{"b":{"t":"number","v":"1"},"a":{"t":"slice","a":[{"t":"string","v":"x"}]}}}`, `{"a":["x"],"b":1}`},
		{`{"t":"slice"}`, `[]`},
		{`{"t":"map"}`, `{}`},
		{`{"t":"float64","v":2.5}`, `2.5`},
		{`{"t":"int64","v":-7}`, `-7`},
		{`{"t":"strings","v":["a","b"]}`, `["a","b"]`},
		{`{"t":"nil"}`, ``},
		{`{"t":"slice","v":null}`, ``},
	} {
		text := `{"kind":"HogQLQuery","query":"SELECT {variables.x}","variables":{"a":{"variableId":"a","code_name":"x","value":` + tt.stored + `}}}`
		q, err := unmarshalQuery(text)
		require.NoError(t, err, "%v", tt.stored)
		ref := q.Variables["a"]
		got, want := ref, (driver.VariableRef{VariableID: "a", CodeName: "x", Value: jsonOrNil(tt.want)})
		assert.Equal(t, want, got, "%v: ref", tt.stored)
		// Written again, the row holds the new form, which reads the same.
		again, err := marshalQuery(q)
		require.NoError(t, err)
		assert.NotContains(t, again, `"t":`)
		back, err := unmarshalQuery(again)
		require.NoError(t, err)
		assert.Equal(t, q, back)
	}
}

func jsonOrNil(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}

// FuzzQueryRoundTrip checks that any query text and insight bytes come
// back exactly as written.
func FuzzQueryRoundTrip(f *testing.F) {
	f.Add("HogQLQuery", "SELECT 1 WHERE a = {variables.a}", "a", "x", []byte(nil))
	f.Add("TrendsQuery", "", "", "", []byte(`{"kind":"TrendsQuery"}`))
	f.Add("RetentionQuery", "", "", "", []byte("{ \"a\" : \"<&>\" }"))
	f.Add("", "\x00'\"", "\u2028", "\xff", []byte{0xff, 0xfe})
	f.Fuzz(func(t *testing.T, kind, sql, code, value string, insight []byte) {
		in := driver.Query{Kind: kind, SQL: sql, Insight: insight}
		if code != "" {
			in.Variables = map[string]driver.VariableRef{code: {VariableID: code, CodeName: code, Value: json.RawMessage(value)}}
		}
		text, err := marshalQuery(in)
		valid := validUTF8(kind) && validUTF8(sql) && (code == "" || validUTF8(code) && validUTF8(value))
		if !valid {
			require.Error(t, err, "marshalQuery took text that is not UTF-8")
			return
		}
		require.NoError(t, err, "marshalQuery")
		out, err := unmarshalQuery(text)
		require.NoError(t, err, "unmarshalQuery(%q)", text)
		require.Equal(t, string(insight), string(out.Insight), "insight %q came back as %q", insight, out.Insight)
		require.Equal(t, insight == nil, out.Insight == nil, "insight %q came back as %q", insight, out.Insight)
		require.Equal(t, kind, out.Kind, "kind/sql")
		require.Equal(t, sql, out.SQL, "kind/sql")
		if code != "" {
			ref := out.Variables[code]
			require.Equal(t, code, ref.CodeName, "variable %q=%q came back as %+v", code, value, ref)
			require.Equal(t, code, ref.VariableID, "variable %q=%q came back as %+v", code, value, ref)
			require.Equal(t, value, string(ref.Value), "variable %q=%q came back as %+v", code, value, ref)
		}
	})
}

// FuzzUnmarshalValue checks that damaged stored text gives an error, never
// a panic.
func FuzzUnmarshalValue(f *testing.F) {
	for _, v := range []any{nil, "x", int64(1), 2.5, []string{"a"}, []any{map[string]any{"a": true}}} {
		text, err := marshalValue(v)
		require.NoError(f, err)
		f.Add(text)
	}
	f.Add(`{"t":"slice","v":null}`)
	f.Add(`{"t":"map","m":{"a":{"t":"int","v":1e400}}}`)
	f.Fuzz(func(t *testing.T, text string) {
		v, err := unmarshalValue(text)
		if err != nil {
			return
		}
		// What decodes must encode again.
		if _, err := marshalValue(v); err != nil {
			t.Fatalf("decoded %#v from %q does not encode: %v", v, text, err)
		}
	})
}

func validUTF8(s string) bool { return utf8.ValidString(s) }
