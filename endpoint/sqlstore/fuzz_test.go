package sqlstore

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/stretchr/testify/require"
)

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
