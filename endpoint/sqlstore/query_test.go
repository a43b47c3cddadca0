package sqlstore

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
)

func TestQueryRoundTrip(t *testing.T) {
	const id = "0190b2a4-7d5e-7b3c-9e1f-2a3b4c5d6e7f"
	tests := []struct {
		name string
		in   endpoint.Query
	}{
		{"zero", endpoint.Query{}},
		{"sql", endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT 1 WHERE a = {variables.x}"}},
		{"sql with variables", endpoint.Query{
			Kind: endpoint.KindSQL,
			SQL:  "SELECT count() FROM events WHERE event = {variables.event} AND n > {variables.n}",
			Variables: map[string]endpoint.VariableRef{
				id:    {VariableID: id, CodeName: "event", Value: "$pageview"},
				"v-2": {VariableID: "v-2", CodeName: "n", Value: int64(3)},
				"v-3": {VariableID: "v-3", CodeName: "m"},
				"v-4": {VariableID: "v-4", CodeName: "l", Value: []string{"a"}},
			},
		}},
		{"empty variables", endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT 1", Variables: map[string]endpoint.VariableRef{}}},
		{"insight", endpoint.Query{Kind: endpoint.KindTrends, Insight: []byte(`{"kind":"TrendsQuery","series":[{"event":"$pageview"}]}`)}},
		{"insight with spaces", endpoint.Query{Kind: endpoint.KindTrends, Insight: []byte("{ \"kind\" : \"TrendsQuery\" }\n")}},
		{"insight with html", endpoint.Query{Kind: endpoint.KindTrends, Insight: []byte(`{"a":"<b>&"}`)}},
		{"insight not json", endpoint.Query{Kind: endpoint.KindRetention, Insight: []byte{0xff, 0x00, '{'}}},
		{"empty insight", endpoint.Query{Kind: endpoint.KindRetention, Insight: []byte{}}},
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
	text, err := marshalQuery(endpoint.Query{
		Kind: endpoint.KindTrends, Insight: []byte(`{"kind":"TrendsQuery"}`),
	})
	require.NoError(t, err)
	assert.Equal(t, `{"kind":"TrendsQuery","insight":{"kind":"TrendsQuery"}}`, text)
}

func TestQueryReadDoesNotAlias(t *testing.T) {
	text, err := marshalQuery(endpoint.Query{Kind: endpoint.KindTrends, Insight: []byte(`{"a":1}`)})
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
		assert.Error(t, err, "%s", text)
	}
}
