package sqlstore

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint/driver"
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
				id:    {VariableID: id, CodeName: "event", Value: "$pageview"},
				"v-2": {VariableID: "v-2", CodeName: "n", Value: int64(3)},
				"v-3": {VariableID: "v-3", CodeName: "m"},
				"v-4": {VariableID: "v-4", CodeName: "l", Value: []string{"a"}},
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
		assert.Error(t, err, "%s", text)
	}
}
