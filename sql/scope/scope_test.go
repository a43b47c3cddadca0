package scope

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/insight"
	"github.com/endpointkit/endpointkit/materialize"
	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
)

var eventsByProject = &access.Rules{Tables: []access.Table{{Name: "events", TenantColumn: "project_id"}}}

// TestRenderBindsTheTenant: a scoped template reads the events of its
// scope's project, whatever value of the tenant placeholder a caller puts
// in the values.
func TestRenderBindsTheTenant(t *testing.T) {
	sc := New(eventsByProject, "7", engine.PostgreSQL)
	tmpl, scoped, err := sc.Compile("SELECT count(*) FROM events WHERE event = {variables.e}")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if !scoped {
		t.Errorf("scoped is false")
	}
	if !tmpl.Tenant() {
		t.Errorf("tmpl.Tenant() is false")
	}
	st, err := tmpl.Render(map[string]any{"e": "purchase", TenantVariable: "8"})
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if s, sub := st.SQL(), `project_id = $`; !strings.Contains(s, sub) {
		t.Errorf("%q does not contain %q", s, sub)
	}
	if got, want := st.Args(), []any{"7", "purchase"}; !sameArgs(got, want) {
		t.Errorf("the scope's project, not the caller's: st.Args() = %v, want %v in any order", got, want)
	}

	plain, scoped, err := New(nil, "7", engine.SQLite).Compile("SELECT 1 FROM t")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if scoped {
		t.Errorf("without a policy nothing is rewritten: scoped is true")
	}
	if plain.Tenant() {
		t.Errorf("plain.Tenant() is true")
	}

	_, _, err = sc.Compile("SELECT * FROM orders")
	var ae *access.Error
	if !errors.As(err, &ae) {
		t.Fatalf("a table the rules do not list: %v: errors.As(err, &ae) is false", err)
	}
	if got, want := ae.Table, "orders"; got != want {
		t.Errorf("ae.Table = %q, want %q", got, want)
	}
}

// TestPlanStatementsAreScoped: a stored table is built from the scoped
// pre-compute query, and a read off the buckets' boundaries reads its
// partial bucket from the scoped source, the tenant bound in both.
func TestPlanStatementsAreScoped(t *testing.T) {
	a, err := materialize.Analyze("SELECT event, count(*) AS n FROM events WHERE timestamp >= {variables.from} GROUP BY event",
		materialize.Options{Engine: engine.SQLite, Types: map[string]variable.Type{"from": variable.Date}})
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if !a.Materializable() {
		t.Fatalf("%v: a.Materializable() is false", a.Reason())
	}
	p, err := New(eventsByProject, "7", engine.SQLite).Plan(a.Plan)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	build, err := p.Build("stored_next", time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got := len(build); got != 2 {
		t.Fatalf("len(build) = %d, want %d: %v", got, 2, build)
	}
	if s, sub := build[1].SQL(), "project_id"; !strings.Contains(s, sub) {
		t.Errorf("%q does not contain %q", s, sub)
	}
	if args := build[1].Args(); !slices.Contains(args, any("7")) {
		t.Errorf("build[1].Args() = %v, want the project %q among them", args, "7")
	}
	read, err := p.ReadPage("stored", map[string]any{"from": variable.Timestamp{Time: time.Date(2025, 5, 31, 12, 0, 0, 0, time.UTC)}}, 10, 0)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if s, sub := read.SQL(), `UNION ALL SELECT "event" AS "_k0", count(*) AS "_a0" FROM (SELECT * FROM "events" WHERE "events".project_id = ?) AS "events"`; !strings.Contains(s, sub) {
		t.Errorf("the partial bucket reads the scoped source: %q does not contain %q", s, sub)
	}
	if args := read.Args(); !slices.Contains(args, any("7")) {
		t.Errorf("read.Args() = %v, want the project %q among them", args, "7")
	}
}

// TestInsightTakesTheScopesTenant: an insight statement reads the events
// of the scope's project, whatever tenant the query held, and a scope that
// may not read the events refuses it.
func TestInsightTakesTheScopesTenant(t *testing.T) {
	q, err := insight.Decode([]byte(`{"kind": "TrendsQuery", "series": [{"kind": "EventsNode", "event": "$pageview"}]}`))
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	q.Tenant = &insight.Tenant{Column: "project_id", Value: "8"}
	st, _, err := New(eventsByProject, "7", engine.SQLite).Insight(q, time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if args := st.Args(); !slices.Contains(args, any("7")) || slices.Contains(args, any("8")) {
		t.Errorf("st.Args() = %v, want the scope's %q and not the query's %q", args, "7", "8")
	}
	if got, want := q.Tenant.Value, "8"; got != want {
		t.Errorf("the query itself is not changed: q.Tenant.Value = %q, want %q", got, want)
	}

	_, _, err = New(&access.Rules{Tables: []access.Table{{Name: "orders"}}}, "7", engine.SQLite).Insight(q, time.Now())
	var ae *access.Error
	if !errors.As(err, &ae) {
		t.Errorf("events are not readable: %v: errors.As(err, &ae) is false", err)
	}
}

// sameArgs reports whether got and want hold the same arguments, each as
// many times, in any order.
func sameArgs(got, want []any) bool {
	if len(got) != len(want) {
		return false
	}
	used := make([]bool, len(got))
next:
	for _, w := range want {
		for i, g := range got {
			if !used[i] && reflect.DeepEqual(g, w) {
				used[i] = true
				continue next
			}
		}
		return false
	}
	return true
}
