package endpoint_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
)

// TestVariableChangeUnservesTable: a stored table is built for the
// variable definitions of its query; once a variable's type changes, the
// table no longer serves (runs go inline, with the inline answer) until a
// refresh builds one for the new definitions.
func TestVariableChangeUnservesTable(t *testing.T) {
	e, _ := newMatEnv(t, 2000)
	ctx := context.Background()
	q := e.query(dailyPurchases, "country", "from", "to")
	e.createMat(t, "daily", q, endpoint.CreateRequest{})
	e.create(t, "inline", q)
	e.materialize(t, "daily")
	if !e.mustRun(t, "daily", runVars("US", "2025-04-01", "2025-05-01")).EndpointMaterialized {
		t.Fatal("the table does not serve")
	}
	text := "String"
	if _, err := e.svc.UpdateVariable(ctx, "1", e.vars["from"].ID, endpoint.VariablePatch{Type: &text}); err != nil {
		t.Fatal(err)
	}
	// A time of day, which a String compares as it is and the daily
	// buckets of the old table cannot answer.
	vars := runVars("US", "2025-04-08 00:00:01", "2025-05-01")
	want := e.mustRun(t, "inline", vars)
	got := e.mustRun(t, "daily", vars)
	if got.EndpointMaterialized || !reflect.DeepEqual(got.Results, want.Results) {
		t.Fatalf("after the type change: materialized %v, %v; want inline %v", got.EndpointMaterialized, got.Results, want.Results)
	}
	if m := e.get(t, "daily").Materialization; m.Status != endpoint.StatusPending || m.LastMaterializedAt != nil {
		t.Fatalf("after the type change: %+v, want pending without a table", m)
	}
	e.materialize(t, "daily")
	got = e.mustRun(t, "daily", vars)
	if !got.EndpointMaterialized || !reflect.DeepEqual(got.Results, want.Results) {
		t.Fatalf("after a refresh: materialized %v, %v; want %v", got.EndpointMaterialized, got.Results, want.Results)
	}
}
