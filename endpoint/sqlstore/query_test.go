package sqlstore

import (
	"encoding/json"
	"testing"

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
		t.Run(tt.name, func(t *testing.T) {
			text, err := marshalQuery(tt.in)
			require.NoError(t, err)
			got, err := unmarshalQuery(text)
			require.NoError(t, err)
			assert.Equal(t, tt.in, got)
		})
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
