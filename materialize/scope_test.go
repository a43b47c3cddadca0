package materialize

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
)

// TestScopeSource: a scoped plan writes its source branches through the
// scope's FROM clause, binding its placeholders from the read's values;
// the stored part and the plan it was made from are unchanged, and a scope
// that fails, or rewrites more than the FROM clause, is an error.
func TestScopeSource(t *testing.T) {
	a, err := Analyze("SELECT project_id, count(*) AS n FROM events WHERE timestamp >= {variables.from} GROUP BY project_id",
		Options{Engine: engine.PostgreSQL, Types: map[string]variable.Type{"from": variable.Date}})
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if !a.Materializable() {
		t.Fatalf("%v: a.Materializable() is false", a.Reason())
	}
	scoped, err := a.Plan.ScopeSource(func(q string) (string, error) {
		return strings.Replace(q, `"events"`, `(SELECT * FROM "events" WHERE "project_id" = {variables.tenant}) AS "events"`, 1), nil
	})
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	values := map[string]any{"from": variable.Timestamp{Time: time.Date(2025, 5, 31, 12, 0, 0, 0, time.UTC)}, "tenant": "1"}
	q, args, err := scoped.Read("stored", values)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if s, sub := q, `FROM (SELECT * FROM "events" WHERE "project_id" = $`; !strings.Contains(s, sub) {
		t.Errorf("the partial bucket reads the scoped source: %q does not contain %q", s, sub)
	}
	if s, sub := q, `FROM "events" WHERE "timestamp"`; strings.Contains(s, sub) {
		t.Errorf("no branch reads the source unscoped: %q contains %q", s, sub)
	}
	if !slices.Contains(args, any("1")) {
		t.Errorf("the tenant is bound: args = %v, want %q among them", args, "1")
	}

	plain, _, err := a.Plan.Read("stored", values)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if s, sub := plain, "project_id\" = $"; strings.Contains(s, sub) {
		t.Errorf("the plan scoped from is unchanged: %q contains %q", s, sub)
	}
	aligned, _, err := scoped.Read("stored", map[string]any{"from": variable.Timestamp{Time: time.Date(2025, 5, 31, 0, 0, 0, 0, time.UTC), DateOnly: true}, "tenant": "1"})
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if s, sub := aligned, `"events"`; strings.Contains(s, sub) {
		t.Errorf("an aligned read reads the stored table alone: %q contains %q", s, sub)
	}

	_, _, err = scoped.Read("stored", map[string]any{"from": values["from"]})
	if err == nil {
		t.Errorf("a read without the scope's value fails rather than read unscoped: got no error, want one")
	}
	_, err = a.Plan.ScopeSource(func(string) (string, error) { return "", errors.New("refused") })
	if err := err; err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("error %v does not contain %q", err, "refused")
	}
	_, err = a.Plan.ScopeSource(func(q string) (string, error) { return "SELECT 2" + strings.TrimPrefix(q, "SELECT 1"), nil })
	if err := err; err == nil || !strings.Contains(err.Error(), "select list") {
		t.Errorf("error %v does not contain %q", err, "select list")
	}
}
