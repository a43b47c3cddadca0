//go:build chdb

package chdb

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/endpointkit/endpointkit/variable"
)

// TestScopedReadsUseTheSortKey: the demo table is sorted by
// (project_id, toDate(timestamp), event), and a read the Service scopes to
// a project narrows that key by the tenant (EXPLAIN indexes = 1 shows
// project_id among the primary key's keys used), as the derived table of
// the scope is one ClickHouse sees through.
func TestScopedReadsUseTheSortKey(t *testing.T) {
	x := executor(t)
	loadDemo(t, x)
	ctx := context.Background()
	ddl, err := x.Read(ctx, "SELECT sorting_key FROM system.tables WHERE database = currentDatabase() AND name = 'events'", nil)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got, want := ddl.Rows[0][0], "project_id, toDate(timestamp), event"; !reflect.DeepEqual(got, want) {
		t.Errorf("ddl.Rows[0][0] = %q, want %q", got, want)
	}

	policy, err := access.NewStatic(access.Rules{Tables: []access.Table{{Name: "events", TenantColumn: "project_id"}}}, nil)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	rec := &recording{Executor: x}
	svc, err := endpoint.New(endpoint.Config{Endpoints: memstore.New(), Variables: variable.NewMemoryStore(), Executor: rec, Access: policy})
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	_, err = svc.Create(ctx, "1", endpoint.CreateRequest{Name: "purchases", Query: &endpoint.Query{Kind: endpoint.KindSQL,
		SQL: "SELECT count() AS n FROM events WHERE event = 'purchase'"}})
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	_, err = svc.Run(ctx, "1", "purchases", endpoint.RunRequest{})
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	st := rec.last
	res, err := x.Read(ctx, "EXPLAIN indexes = 1 "+st.SQL(), st.Args())
	if err != nil {
		t.Fatalf("%v: unexpected error: %v", st.SQL(), err)
	}
	var plan strings.Builder
	for _, r := range res.Rows {
		fmt.Fprintln(&plan, r...)
	}
	p := plan.String()
	i := strings.Index(p, "PrimaryKey")
	if a, b := i, 0; !(a >= b) {
		t.Fatalf("no primary key in the plan of %s:\n%s: i = %v, want >= %v", st.SQL(), p, a, b)
	}
	if s, sub := p[i:], "project_id"; !strings.Contains(s, sub) {
		t.Errorf("the scope narrows the sort key:\n%s: %q does not contain %q", p, s, sub)
	}
}
