package sqlstore

import (
	"context"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDamagedRowsGiveErrors writes rows the store could not have written
// (by hand, as a broken migration or another program might) and checks
// that reading them fails with an error naming the column, not a panic or
// a silently wrong value.
func TestDamagedRowsGiveErrors(t *testing.T) {
	tests := []struct {
		name, column, value, want string
	}{
		{"bad created_at", "created_at", "yesterday", "created_at"},
		{"bad updated_at", "updated_at", "2025-13-01T00:00:00.000000000Z", "updated_at"},
		{"bad last_executed_at", "last_executed_at", "now", "last_executed_at"},
		{"bad query", "query_json", "{not json", "query"},
		{"unknown value type", "query_json", `{"kind":"HogQLQuery","variables":{"a":{"value":{"t":"alien"}}}}`, "alien"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openMemory(t)
			ctx := context.Background()
			e, v := endpointFixture("p", "a")
			require.NoError(t, s.Endpoints().Create(ctx, e, v))
			_, err := s.db.ExecContext(ctx, `UPDATE `+endpointsTable+` SET `+tt.column+` = ?`, tt.value)
			require.NoError(t, err)
			_, err = s.Endpoints().Get(ctx, "p", "a")
			require.Error(t, err)
			if s, sub := err.Error(), tt.want; !strings.Contains(s, sub) {
				t.Errorf("%q does not contain %q", s, sub)
			}
			assert.NotErrorIs(t, err, driver.ErrNotFound)
			_, err = s.Endpoints().List(ctx, "p")
			assert.Error(t, err)
		})
	}
}

func TestDamagedVersionAndVariableRows(t *testing.T) {
	s := openMemory(t)
	ctx := context.Background()
	e, v := endpointFixture("p", "a")
	require.NoError(t, s.Endpoints().Create(ctx, e, v))
	require.NoError(t, s.Variables().Create(ctx, "p", variableFixture("x")))

	_, err := s.db.ExecContext(ctx, `UPDATE `+versionsTable+` SET created_at = 'then'`)
	require.NoError(t, err)
	_, err = s.Endpoints().Version(ctx, "p", e.ID, 1)
	assert.ErrorContains(t, err, "created_at")
	_, err = s.Endpoints().Versions(ctx, "p", e.ID)
	assert.ErrorContains(t, err, "created_at")

	_, err = s.db.ExecContext(ctx, `UPDATE `+variablesTable+` SET default_value = '{'`)
	require.NoError(t, err)
	_, err = s.Variables().Get(ctx, "p", variableFixture("x").ID)
	assert.ErrorContains(t, err, "default_value")
	_, err = s.db.ExecContext(ctx, `UPDATE `+variablesTable+` SET default_value = '{"t":"nil"}', list_values = '[1]'`)
	require.NoError(t, err)
	_, err = s.Variables().List(ctx, "p")
	assert.ErrorContains(t, err, "values")
}

// TestLegacyTestValueRows: a row written before test values were kept as
// JSON text (the tagged form under "value") reads back through the store
// as the JSON text; writing it again keeps it so.
func TestLegacyTestValueRows(t *testing.T) {
	s := openMemory(t)
	ctx := context.Background()
	e, v := endpointFixture("p", "a")
	require.NoError(t, s.Endpoints().Create(ctx, e, v))
	legacy := `{"kind":"HogQLQuery","query":"SELECT {variables.x}","variables":{"a":{"variableId":"a","code_name":"x","value":{"t":"slice","a":[{"t":"string","v":"US"},{"t":"number","v":"2.50"}]}}}}`
	_, err := s.db.ExecContext(ctx, `UPDATE `+endpointsTable+` SET query_json = ?`, legacy)
	require.NoError(t, err)
	_, err = s.db.ExecContext(ctx, `UPDATE `+versionsTable+` SET query_json = ?`, legacy)
	require.NoError(t, err)

	want := `["US",2.50]`
	got, err := s.Endpoints().Get(ctx, "p", "a")
	require.NoError(t, err)
	assert.Equal(t, want, string(got.Query.Variables["a"].Value))
	one, err := s.Endpoints().Version(ctx, "p", e.ID, 1)
	require.NoError(t, err)
	assert.Equal(t, want, string(one.Query.Variables["a"].Value))

	got.Description = "written again"
	require.NoError(t, s.Endpoints().Update(ctx, got, nil))
	again, err := s.Endpoints().Get(ctx, "p", "a")
	require.NoError(t, err)
	assert.Equal(t, want, string(again.Query.Variables["a"].Value))
	var text string
	require.NoError(t, s.db.QueryRowContext(ctx, `SELECT query_json FROM `+endpointsTable).Scan(&text))
	assert.Contains(t, text, `"test_value":"[\"US\",2.50]"`)
}
