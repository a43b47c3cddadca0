package endpoint_test

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/insight"
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
	if err := demo.Load(context.Background(), e.db, insightEvents, 11); err != nil {
		t.Fatal(err)
	}
	return e
}

// insightQuery reads an insight query as the HTTP API does.
func insightQuery(t *testing.T, js string) *endpoint.Query {
	t.Helper()
	var q endpoint.Query
	if err := json.Unmarshal([]byte(js), &q); err != nil {
		t.Fatalf("Unmarshal(%s): %v", js, err)
	}
	return &q
}

// runInsight runs the insight endpoint name and returns its result.
func (e *env) runInsight(t *testing.T, name string, vars map[string]any) *insight.Result {
	t.Helper()
	res, err := e.svc.Run(context.Background(), "1", name, endpoint.RunRequest{Variables: vars})
	if err != nil {
		t.Fatalf("Run(%s, %v): %v", name, vars, err)
	}
	r, ok := res.Results.(*insight.Result)
	if !ok {
		t.Fatalf("Run(%s) results are %T, want *insight.Result", name, res.Results)
	}
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
	if err := json.Compact(&want, []byte(trendsByBrowser)); err != nil {
		t.Fatal(err)
	}
	got, err := e.svc.Get(context.Background(), "1", "trends")
	if err != nil {
		t.Fatal(err)
	}
	versions, err := e.svc.Versions(context.Background(), "1", "trends")
	if err != nil {
		t.Fatal(err)
	}
	for what, q := range map[string]endpoint.Query{"create": endpoint.Query(ep.Query), "get": endpoint.Query(got.Query), "version": endpoint.Query(versions[0].Query)} {
		js, err := json.Marshal(q)
		if err != nil {
			t.Fatal(err)
		}
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
			if after, _ := e.svc.Get(context.Background(), "1", "good"); !reflect.DeepEqual(after, before) {
				t.Fatalf("a refused update changed the endpoint: %+v", after)
			}
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
	if err := json.Compact(&buf, []byte(trendsByBrowser)); err != nil {
		t.Fatal(err)
	}
	for _, q := range []endpoint.Query{
		{Kind: endpoint.KindRetention, Insight: buf.Bytes()},
		{Kind: endpoint.KindTrends},
		{Kind: endpoint.KindTrends, Insight: []byte(`{"kind":`)},
	} {
		_, err := e.svc.Create(context.Background(), "1", endpoint.CreateRequest{Name: "x", Query: &q})
		if e := asError(t, err); e.Status != 400 || e.Code != endpoint.CodeInvalidInput {
			t.Fatalf("Create(%s %s): %+v, want a 400 invalid_input", q.Kind, q.Insight, e)
		}
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
	if err != nil {
		t.Fatal(err)
	}
	if ep.CurrentVersion != 2 {
		t.Fatalf("current version %d, want 2", ep.CurrentVersion)
	}
	v2 := e.runInsight(t, "trends", nil)
	if len(v2.Series) != 1 || v2.Series[0].Label != "purchase" || len(v2.Series[0].Days) != 5 {
		t.Fatalf("version 2 result: %+v", v2.Series)
	}
	one := 1
	res, err := e.svc.Run(context.Background(), "1", "trends", endpoint.RunRequest{Version: &one})
	if err != nil {
		t.Fatal(err)
	}
	if res.EndpointVersion != 1 || !reflect.DeepEqual(res.Results, v1) {
		t.Fatalf("version 1 ran as %d: %+v, want %+v", res.EndpointVersion, res.Results, v1)
	}
	// A version not in the cache is decoded again from the store.
	e2, err := endpoint.New(endpoint.Config{Endpoints: e.eps, Variables: e.vstore, Executor: execOf(e), Now: e.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	res, err = e2.Run(context.Background(), "1", "trends", endpoint.RunRequest{Version: &one})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.Results, v1) {
		t.Fatalf("version 1 from the store: %+v, want %+v", res.Results, v1)
	}
}
