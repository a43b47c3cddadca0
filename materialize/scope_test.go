package materialize

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestScopeSource: a scoped plan writes its source branches through the
// scope's FROM clause, binding its placeholders from the read's values;
// the stored part and the plan it was made from are unchanged, and a scope
// that fails, or rewrites more than the FROM clause, is an error.
func TestScopeSource(t *testing.T) {
	a, err := Analyze("SELECT project_id, count(*) AS n FROM events WHERE timestamp >= {variables.from} GROUP BY project_id",
		Options{Engine: engine.PostgreSQL, Types: map[string]variable.Type{"from": variable.Date}})
	require.NoError(t, err)
	require.True(t, a.Materializable(), "%v: a.Materializable() is false", a.Reason())
	scoped, err := a.Plan.ScopeSource(func(q string) (string, error) {
		return strings.Replace(q, `"events"`, `(SELECT * FROM "events" WHERE "project_id" = {variables.tenant}) AS "events"`, 1), nil
	})
	require.NoError(t, err)
	values := map[string]any{"from": variable.Timestamp{Time: time.Date(2025, 5, 31, 12, 0, 0, 0, time.UTC)}, "tenant": "1"}
	q, args, err := scoped.Read("stored", values)
	require.NoError(t, err)
	assert.Contains(t, q, `FROM (SELECT * FROM "events" WHERE "project_id" = $`, "the partial bucket reads the scoped source")
	assert.NotContains(t, q, `FROM "events" WHERE "timestamp"`, "no branch reads the source unscoped")
	assert.True(t, slices.Contains(args, any("1")), "the tenant is bound: args = %v, want %q among them", args, "1")

	plain, _, err := a.Plan.Read("stored", values)
	require.NoError(t, err)
	assert.NotContains(t, plain, "project_id\" = $", "the plan scoped from is unchanged")
	aligned, _, err := scoped.Read("stored", map[string]any{"from": variable.Timestamp{Time: time.Date(2025, 5, 31, 0, 0, 0, 0, time.UTC), DateOnly: true}, "tenant": "1"})
	require.NoError(t, err)
	s, sub := aligned, `"events"`
	assert.NotContains(t, s, sub, "an aligned read reads the stored table alone")

	_, _, err = scoped.Read("stored", map[string]any{"from": values["from"]})
	assert.Error(t, err, "a read without the scope's value fails rather than read unscoped: got no error, want one")
	_, err = a.Plan.ScopeSource(func(string) (string, error) { return "", errors.New("refused") })
	assert.ErrorContains(t, err, "refused")
	_, err = a.Plan.ScopeSource(func(q string) (string, error) { return "SELECT 2" + strings.TrimPrefix(q, "SELECT 1"), nil })
	assert.ErrorContains(t, err, "select list")
}
