package endpoint_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
)

// TestInsightRefused: until package insight is wired in (insight.go), an
// insight query is refused on create and update with a message naming its
// kind, and a refused update changes nothing.
func TestInsightRefused(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, kind := range []string{endpoint.KindTrends, endpoint.KindRetention} {
		q := &endpoint.Query{Kind: kind, Insight: []byte(`{"kind":"` + kind + `"}`)}
		detail := "Query kind '" + kind + "' is not supported yet: insight endpoints are not available in this build."
		_, err := e.svc.Create(ctx, "1", endpoint.CreateRequest{Name: "insight", Query: q})
		wantError(t, err, 400, "unsupported_query", detail, "query")

		before := e.create(t, "sql", e.query("SELECT 1"))
		desc := "new"
		_, err = e.svc.Update(ctx, "1", "sql", endpoint.UpdateRequest{Description: &desc, Query: q})
		wantError(t, err, 400, "unsupported_query", detail, "query")
		if after, _ := e.svc.Get(ctx, "1", "sql"); !reflect.DeepEqual(after, before) {
			t.Fatalf("a refused update changed the endpoint: %+v", after)
		}
		if err := e.svc.Delete(ctx, "1", "sql"); err != nil {
			t.Fatal(err)
		}
	}
}
