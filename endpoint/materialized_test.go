package endpoint_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
)

// TestMaterializationRefused: until package materialize is wired in
// (materialized.go), is_materialized true is refused on create and update,
// and a refused update changes nothing; false is accepted.
func TestMaterializationRefused(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	const detail = "Cannot materialize endpoint. Reason: materialization is not available"
	_, err := e.svc.Create(ctx, "1", endpoint.CreateRequest{Name: "m", Query: e.query("SELECT 1"), IsMaterialized: true})
	wantError(t, err, 400, "cannot_materialize", detail, "is_materialized")

	before := e.create(t, "sql", e.query("SELECT 1"))
	yes, no, desc := true, false, "new"
	_, err = e.svc.Update(ctx, "1", "sql", endpoint.UpdateRequest{Description: &desc, Query: e.query("SELECT 2"), IsMaterialized: &yes})
	wantError(t, err, 400, "cannot_materialize", detail, "is_materialized")
	_, err = e.svc.Update(ctx, "1", "sql", endpoint.UpdateRequest{IsMaterialized: &yes})
	wantError(t, err, 400, "cannot_materialize", detail, "is_materialized")
	if after, _ := e.svc.Get(ctx, "1", "sql"); !reflect.DeepEqual(after, before) {
		t.Fatalf("a refused update changed the endpoint: %+v", after)
	}
	if got, err := e.svc.Update(ctx, "1", "sql", endpoint.UpdateRequest{IsMaterialized: &no}); err != nil || got.IsMaterialized {
		t.Fatalf("is_materialized false: %+v, %v", got, err)
	}
}
