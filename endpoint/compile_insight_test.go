package endpoint_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/insight"
	"github.com/stretchr/testify/require"
)

// insightEvents is how many demo events the insight tests load.
const insightEvents = 5000

// trendsByBrowser is a daily trend of pageviews over May 2025 broken down
// by browser; the tests' clock is 2025-06-01.
const trendsByBrowser = `{"kind": "TrendsQuery",
	"series": [{"kind": "EventsNode", "event": "$pageview", "math": "total"}],
	"interval": "day",
	"dateRange": {"date_from": "2025-05-01", "date_to": "2025-05-31"},
	"breakdownFilter": {"breakdown": "$browser", "breakdown_type": "event"}}`

// newInsightEnv is newEnv with the demo events table.
func newInsightEnv(t *testing.T) *env {
	t.Helper()
	e := newEnv(t)
	require.NoError(t, demo.Load(context.Background(), e.db, insightEvents, 11))
	return e
}

// insightQuery reads an insight query as the HTTP API does.
func insightQuery(t *testing.T, js string) *endpoint.Query {
	t.Helper()
	var q endpoint.Query
	require.NoError(t, json.Unmarshal([]byte(js), &q), "Unmarshal(%s)", js)
	return &q
}

// runInsight runs the insight endpoint name and returns its result.
func (e *env) runInsight(t *testing.T, name string, vars map[string]any) *insight.Result {
	t.Helper()
	res, err := e.svc.Run(context.Background(), "1", name, endpoint.RunRequest{Variables: vars})
	require.NoError(t, err, "Run(%s, %v)", name, vars)
	r, ok := res.Results.(*insight.Result)
	require.True(t, ok, "Run(%s) results are %T, want *insight.Result", name, res.Results)
	if len(res.Columns) != 0 || len(res.Types) != 0 || res.Columns == nil || res.Types == nil || res.HasMore {
		t.Fatalf("insight run: columns %v, types %v, hasMore %v; want empty, empty, false", res.Columns, res.Types, res.HasMore)
	}
	return r
}

// TestInsightCreateKeepsQuery: the saved query reads back exactly as sent
// (compacted), from Create, Get and the version history.
func TestInsightCreateKeepsQuery(t *testing.T) {
	e := newEnv(t)
	ep := e.create(t, "trends", insightQuery(t, trendsByBrowser))
	var want bytes.Buffer
	require.NoError(t, json.Compact(&want, []byte(trendsByBrowser)))
	got, err := e.svc.Get(context.Background(), "1", "trends")
	require.NoError(t, err)
	versions, err := e.svc.Versions(context.Background(), "1", "trends")
	require.NoError(t, err)
	for what, q := range map[string]endpoint.Query{"create": endpoint.Query(ep.Query), "get": endpoint.Query(got.Query), "version": endpoint.Query(versions[0].Query)} {
		js, err := json.Marshal(q)
		require.NoError(t, err)
		if !bytes.Equal(js, want.Bytes()) {
			t.Errorf("%s: query JSON %s, want %s", what, js, want.Bytes())
		}
	}
}

// TestInsightDecodeErrors: a query outside the supported subset is refused
// at create, and at update without changing anything, with attr naming the
// field.
func TestInsightDecodeErrors(t *testing.T) {
	tests := []struct {
		name, query, attr, detail string
	}{
		{"math", `{"kind":"TrendsQuery","series":[{"kind":"EventsNode","event":"$pageview","math":"median"}]}`,
			"query.series[0].math", `Invalid insight query: series[0].math: unsupported math "median" (supported: total, dau, sum, avg, min, max)`},
		{"operator", `{"kind":"TrendsQuery","series":[{"kind":"EventsNode","event":"$pageview"}],"properties":[{"key":"country","value":"US","operator":"regex","type":"event"}]}`,
			"query.properties[0].operator", ""},
		{"interval", `{"kind":"TrendsQuery","series":[{"kind":"EventsNode","event":"$pageview"}],"interval":"minute"}`,
			"query.interval", ""},
		{"cohort breakdown", `{"kind":"TrendsQuery","series":[{"kind":"EventsNode","event":"$pageview"}],"breakdownFilter":{"breakdown":"1","breakdown_type":"cohort"}}`,
			"query.breakdownFilter.breakdown_type", ""},
		{"period", `{"kind":"RetentionQuery","retentionFilter":{"targetEntity":{"id":"signed_up","type":"events"},"returningEntity":{"id":"$pageview","type":"events"},"period":"Year","totalIntervals":4}}`,
			"query.retentionFilter.period", ""},
		{"range", `{"kind":"TrendsQuery","series":[{"kind":"EventsNode","event":"$pageview"}],"dateRange":{"date_from":"2025-05-10","date_to":"2025-05-01"}}`,
			"query.dateRange", ""},
		{"lifecycle math", `{"kind":"LifecycleQuery","series":[{"kind":"EventsNode","event":"$pageview","math":"dau"}]}`,
			"query.series[0].math", `Invalid insight query: series[0].math: unsupported math "dau": a lifecycle counts users (supported: total)`},
		{"lifecycle breakdown", `{"kind":"LifecycleQuery","series":[{"kind":"EventsNode","event":"$pageview"}],"breakdownFilter":{"breakdown":"$browser"}}`,
			"query.breakdownFilter", `Invalid insight query: breakdownFilter: breakdowns are not part of a LifecycleQuery`},
		{"lifecycle two series", `{"kind":"LifecycleQuery","series":[{"kind":"EventsNode"},{"kind":"EventsNode"}]}`,
			"query.series", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			q := insightQuery(t, tt.query)
			_, err := e.svc.Create(context.Background(), "1", endpoint.CreateRequest{Name: "bad", Query: q})
			checkInsightError(t, err, tt.attr, tt.detail)

			before := e.create(t, "good", insightQuery(t, trendsByBrowser))
			_, err = e.svc.Update(context.Background(), "1", "good", endpoint.UpdateRequest{Query: q})
			checkInsightError(t, err, tt.attr, tt.detail)
			after, _ := e.svc.Get(context.Background(), "1", "good")
			require.Equal(t, before, after, "a refused update changed the endpoint")
		})
	}
}

func checkInsightError(t *testing.T, err error, attr, detail string) {
	t.Helper()
	e := asError(t, err)
	if e.Status != 400 || e.Code != endpoint.CodeInvalidInput || e.Attr != attr {
		t.Fatalf("got {%d %s attr %q} %q, want {400 invalid_input attr %q}", e.Status, e.Code, e.Attr, e.Detail, attr)
	}
	if detail != "" && e.Detail != detail {
		t.Fatalf("detail %q, want %q", e.Detail, detail)
	}
}

// TestInsightKindMismatch: a Go caller's Kind must agree with the JSON.
func TestInsightKindMismatch(t *testing.T) {
	e := newEnv(t)
	var buf bytes.Buffer
	require.NoError(t, json.Compact(&buf, []byte(trendsByBrowser)))
	for _, q := range []endpoint.Query{
		{Kind: endpoint.KindRetention, Insight: buf.Bytes()},
		{Kind: endpoint.KindTrends},
		{Kind: endpoint.KindTrends, Insight: []byte(`{"kind":`)},
	} {
		_, err := e.svc.Create(context.Background(), "1", endpoint.CreateRequest{Name: "x", Query: &q})
		e := asError(t, err)
		require.Equal(t, 400, e.Status, "Create(%s %s): %+v, want a 400 invalid_input", q.Kind, q.Insight, e)
		require.Equal(t, endpoint.CodeInvalidInput, e.Code, "Create(%s %s): %+v, want a 400 invalid_input", q.Kind, q.Insight, e)
	}
}

// TestInsightVersion: an older version of an insight query runs as it was.
func TestInsightVersion(t *testing.T) {
	e := newInsightEnv(t)
	e.create(t, "trends", insightQuery(t, trendsByBrowser))
	v1 := e.runInsight(t, "trends", nil)
	purchases := `{"kind": "TrendsQuery", "series": [{"kind": "EventsNode", "event": "purchase", "math": "sum", "math_property": "amount"}],
		"interval": "week", "dateRange": {"date_from": "2025-05-01", "date_to": "2025-05-31"}}`
	ep, err := e.svc.Update(context.Background(), "1", "trends", endpoint.UpdateRequest{Query: insightQuery(t, purchases)})
	require.NoError(t, err)
	require.Equal(t, 2, ep.CurrentVersion, "current version")
	v2 := e.runInsight(t, "trends", nil)
	if len(v2.Series) != 1 || v2.Series[0].Label != "purchase" || len(v2.Series[0].Days) != 5 {
		t.Fatalf("version 2 result: %+v", v2.Series)
	}
	one := 1
	res, err := e.svc.Run(context.Background(), "1", "trends", endpoint.RunRequest{Version: &one})
	require.NoError(t, err)
	require.Equal(t, 1, res.EndpointVersion, "version 1 ran as %d: %+v, want %+v", res.EndpointVersion, res.Results, v1)
	require.Equal(t, v1, res.Results, "version 1 ran as %d: %+v, want %+v", res.EndpointVersion, res.Results, v1)
	// A version not in the cache is decoded again from the store.
	e2, err := endpoint.New(endpoint.Config{Endpoints: e.eps, Variables: e.vstore, Executor: execOf(e), Now: e.clock.Now})
	require.NoError(t, err)
	res, err = e2.Run(context.Background(), "1", "trends", endpoint.RunRequest{Version: &one})
	require.NoError(t, err)
	require.Equal(t, v1, res.Results, "version 1 from the store")
}
