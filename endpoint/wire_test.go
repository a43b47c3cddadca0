package endpoint_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/stretchr/testify/require"
)

func TestQueryJSONRoundTrip(t *testing.T) {
	const id = "0b6e2b8e-5f0c-4d59-8d43-8f1c2a7e9d10"
	for _, tc := range []struct {
		name, in string
		want     endpoint.Query
		out      string
	}{
		{"SQL with variables",
			`{"kind":"HogQLQuery","query":"SELECT {variables.x}","variables":{"` + id + `":{"variableId":"` + id + `","code_name":"x","value":"US"}}}`,
			endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT {variables.x}", Variables: map[string]endpoint.VariableRef{id: {VariableID: id, CodeName: "x", Value: json.RawMessage(`"US"`)}}},
			`{"kind":"HogQLQuery","query":"SELECT {variables.x}","variables":{"` + id + `":{"variableId":"` + id + `","code_name":"x","value":"US"}}}`},
		{"test value kept as its JSON, compact with keys sorted",
			`{"kind":"HogQLQuery","query":"SELECT 1","variables":{"` + id + `":{"variableId":"` + id + `","code_name":"x","value":{ "b" : 1.50, "a" : ["<x>", null] }}}}`,
			endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT 1", Variables: map[string]endpoint.VariableRef{id: {VariableID: id, CodeName: "x", Value: json.RawMessage(`{"a":["<x>",null],"b":1.50}`)}}},
			`{"kind":"HogQLQuery","query":"SELECT 1","variables":{"` + id + `":{"variableId":"` + id + `","code_name":"x","value":{"a":["\u003cx\u003e",null],"b":1.50}}}}`},
		{"SQL without variables",
			`{"query": "SELECT 1", "kind": "HogQLQuery"}`,
			endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT 1"},
			`{"kind":"HogQLQuery","query":"SELECT 1"}`},
		{"editor keys of a reference are dropped, null value is none",
			`{"kind":"HogQLQuery","query":"SELECT 1","variables":{"` + id + `":{"code_name":"x","value":null,"isNull":false}}}`,
			endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT 1", Variables: map[string]endpoint.VariableRef{id: {CodeName: "x"}}},
			`{"kind":"HogQLQuery","query":"SELECT 1","variables":{"` + id + `":{"variableId":"","code_name":"x"}}}`},
		{"trends kept whole",
			`{"kind": "TrendsQuery", "series": [{"kind": "EventsNode", "event": "$pageview"}], "interval": "day"}`,
			endpoint.Query{Kind: endpoint.KindTrends, Insight: []byte(`{"kind":"TrendsQuery","series":[{"kind":"EventsNode","event":"$pageview"}],"interval":"day"}`)},
			`{"kind":"TrendsQuery","series":[{"kind":"EventsNode","event":"$pageview"}],"interval":"day"}`},
		{"retention kept whole",
			`{"kind":"RetentionQuery","retentionFilter":{"period":"Week"}}`,
			endpoint.Query{Kind: endpoint.KindRetention, Insight: []byte(`{"kind":"RetentionQuery","retentionFilter":{"period":"Week"}}`)},
			`{"kind":"RetentionQuery","retentionFilter":{"period":"Week"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var q endpoint.Query
			require.NoError(t, json.Unmarshal([]byte(tc.in), &q))
			require.Equal(t, tc.want, q, "decoded")
			out, err := json.Marshal(q)
			require.NoError(t, err, "encoded %s, %v; want %s", out, err, tc.out)
			require.Equal(t, tc.out, string(out), "encoded %s, %v; want %s", out, err, tc.out)
			// Inside an endpoint, too.
			b, err := json.Marshal(endpoint.Endpoint{Query: q})
			require.NoError(t, err)
			var back struct{ Query endpoint.Query }
			if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back.Query, tc.want) {
				t.Fatalf("endpoint round trip: %#v, %v", back.Query, err)
			}
		})
	}
}

func TestQueryJSONErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in, code, detail, attr string
	}{
		{"not an object", `"SELECT 1"`, "invalid_input", `Query must be a JSON object with a "kind".`, "query"},
		{"null", `null`, "invalid_input", `Query must be a JSON object with a "kind".`, "query"},
		{"array", `[]`, "invalid_input", `Query must be a JSON object with a "kind".`, "query"},
		{"no kind", `{"query":"SELECT 1"}`, "invalid_input", `Query "kind" is required (one of HogQLQuery, TrendsQuery, RetentionQuery, LifecycleQuery).`, "query"},
		{"kind not a string", `{"kind":5}`, "invalid_input", `Query "kind" must be a string.`, "query"},
		{"unknown kind", `{"kind":"FunnelsQuery"}`, "unsupported_query", "Unsupported query kind 'FunnelsQuery'. Supported kinds: HogQLQuery, TrendsQuery, RetentionQuery, LifecycleQuery.", "query"},
		{"missing query text", `{"kind":"HogQLQuery"}`, "invalid_input", "This field is required.", "query.query"},
		{"query text not a string", `{"kind":"HogQLQuery","query":12}`, "invalid_input", `Query field "query" has the wrong type: expected a string.`, "query.query"},
		{"variables not an object", `{"kind":"HogQLQuery","query":"x","variables":[]}`, "invalid_input", `Query field "variables" has the wrong type: expected an object keyed by variable id.`, "query.variables"},
		{"unknown field", `{"kind":"HogQLQuery","query":"x","filters":{}}`, "invalid_input", `Query has an unknown field "filters"; a HogQLQuery holds only "kind", "query" and "variables".`, "query"},
		{"reference not an object", `{"kind":"HogQLQuery","query":"x","variables":{"a":5}}`, "invalid_input", `Query variable "a": must be an object with "variableId" and "code_name"`, "query.variables"},
		{"code_name not a string", `{"kind":"HogQLQuery","query":"x","variables":{"a":{"code_name":1}}}`, "invalid_input", `Query variable "a": "code_name" must be a string`, "query.variables"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var q endpoint.Query
			err := json.Unmarshal([]byte(tc.in), &q)
			var e *endpoint.Error
			if !errors.As(err, &e) || e.Status != 400 || e.Code != tc.code || e.Detail != tc.detail || e.Attr != tc.attr {
				t.Fatalf("Unmarshal: %#v, want {400 %s %q %s}", err, tc.code, tc.detail, tc.attr)
			}
			require.ErrorIs(t, err, endpoint.ErrInvalid, "not ErrInvalid")
		})
	}
}

// FuzzQueryJSON: decoding never panics, errors are *Error 400s, and what
// decodes encodes to JSON that decodes to the same query.
func FuzzQueryJSON(f *testing.F) {
	for _, s := range []string{
		`{"kind":"HogQLQuery","query":"SELECT {variables.x}","variables":{"0b6e2b8e-5f0c-4d59-8d43-8f1c2a7e9d10":{"variableId":"0b6e2b8e-5f0c-4d59-8d43-8f1c2a7e9d10","code_name":"x","value":[1,{"a":null}]}}}`,
		`{"kind":"TrendsQuery","series":[]}`,
		`{"kind":"RetentionQuery"}`,
		`{"kind":"HogQLQuery","query":"x","variables":{"a":5}}`,
		`{"kind":"Other"}`, `null`, `[]`, `"x"`, `{"kind":1}`, `{}`, `{"kind":"HogQLQuery","query":"a"} {}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var q endpoint.Query
		err := json.Unmarshal([]byte(in), &q)
		if err != nil {
			var e *endpoint.Error
			var se *json.SyntaxError
			if !errors.As(err, &e) && !errors.As(err, &se) {
				t.Fatalf("error %v (%T) is neither *endpoint.Error nor a JSON syntax error", err, err)
			}
			if e != nil && e.Status != 400 {
				t.Fatalf("status %d", e.Status)
			}
			return
		}
		out, err := json.Marshal(q)
		require.NoError(t, err, "Marshal of decoded %#v", q)
		var back endpoint.Query
		require.NoError(t, json.Unmarshal(out, &back), "Unmarshal of %s", out)
		again, _ := json.Marshal(back)
		require.Equal(t, string(out), string(again), "not stable: %s then %s", out, again)
	})
}

func TestQueryJSONKeepsComparisonOperatorsReadable(t *testing.T) {
	q := endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT 1 WHERE a >= {variables.x} AND b < 2 AND c <> 'x&y'"}
	// As the HTTP API writes it: an encoder without HTML escaping, which
	// keeps a Marshaler's output as it is.
	var buf strings.Builder
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(q))
	b := []byte(strings.TrimSuffix(buf.String(), "\n"))
	want := `{"kind":"HogQLQuery","query":"SELECT 1 WHERE a >= {variables.x} AND b < 2 AND c <> 'x&y'"}`
	require.Equal(t, want, string(b), "got  %s", b)
	var back endpoint.Query
	err := json.Unmarshal(b, &back)
	require.NoError(t, err, "round trip: %v %q", err, back.SQL)
	require.Equal(t, q.SQL, back.SQL, "round trip: %v %q", err, back.SQL)
}
