package sqlstore

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/driver"
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
			if err := s.Endpoints().Create(ctx, e, v); err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			_, err := s.db.ExecContext(ctx, `UPDATE `+endpointsTable+` SET `+tt.column+` = ?`, tt.value)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			_, err = s.Endpoints().Get(ctx, "p", "a")
			if err == nil {
				t.Fatalf("got no error, want one")
			}
			if s, sub := err.Error(), tt.want; !strings.Contains(s, sub) {
				t.Errorf("%q does not contain %q", s, sub)
			}
			if err := err; errors.Is(err, driver.ErrNotFound) {
				t.Errorf("error %v is %v", err, driver.ErrNotFound)
			}
			_, err = s.Endpoints().List(ctx, "p")
			if err == nil {
				t.Errorf("got no error, want one")
			}
		})
	}
}

func TestDamagedVersionAndVariableRows(t *testing.T) {
	s := openMemory(t)
	ctx := context.Background()
	e, v := endpointFixture("p", "a")
	if err := s.Endpoints().Create(ctx, e, v); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if err := s.Variables().Create(ctx, "p", variableFixture("x")); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}

	_, err := s.db.ExecContext(ctx, `UPDATE `+versionsTable+` SET created_at = 'then'`)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	_, err = s.Endpoints().Version(ctx, "p", e.ID, 1)
	if err := err; err == nil || !strings.Contains(err.Error(), "created_at") {
		t.Errorf("error %v does not contain %q", err, "created_at")
	}
	_, err = s.Endpoints().Versions(ctx, "p", e.ID)
	if err := err; err == nil || !strings.Contains(err.Error(), "created_at") {
		t.Errorf("error %v does not contain %q", err, "created_at")
	}

	_, err = s.db.ExecContext(ctx, `UPDATE `+variablesTable+` SET default_value = '{'`)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	_, err = s.Variables().Get(ctx, "p", variableFixture("x").ID)
	if err := err; err == nil || !strings.Contains(err.Error(), "default_value") {
		t.Errorf("error %v does not contain %q", err, "default_value")
	}
	_, err = s.db.ExecContext(ctx, `UPDATE `+variablesTable+` SET default_value = '{"t":"nil"}', list_values = '[1]'`)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	_, err = s.Variables().List(ctx, "p")
	if err := err; err == nil || !strings.Contains(err.Error(), "values") {
		t.Errorf("error %v does not contain %q", err, "values")
	}
}

// TestLegacyTestValueRows: a row written before test values were kept as
// JSON text (the tagged form under "value") reads back through the store
// as the JSON text; writing it again keeps it so.
func TestLegacyTestValueRows(t *testing.T) {
	s := openMemory(t)
	ctx := context.Background()
	e, v := endpointFixture("p", "a")
	if err := s.Endpoints().Create(ctx, e, v); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	legacy := `{"kind":"HogQLQuery","query":"SELECT {variables.x}","variables":{"a":{"variableId":"a","code_name":"x","value":{"t":"slice","a":[{"t":"string","v":"US"},{"t":"number","v":"2.50"}]}}}}`
	_, err := s.db.ExecContext(ctx, `UPDATE `+endpointsTable+` SET query_json = ?`, legacy)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	_, err = s.db.ExecContext(ctx, `UPDATE `+versionsTable+` SET query_json = ?`, legacy)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}

	want := `["US",2.50]`
	got, err := s.Endpoints().Get(ctx, "p", "a")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got, want := string(got.Query.Variables["a"].Value), want; got != want {
		t.Errorf("string(got.Query.Variables[\"a\"].Value) = %q, want %q", got, want)
	}
	one, err := s.Endpoints().Version(ctx, "p", e.ID, 1)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got, want := string(one.Query.Variables["a"].Value), want; got != want {
		t.Errorf("string(one.Query.Variables[\"a\"].Value) = %q, want %q", got, want)
	}

	got.Description = "written again"
	if err := s.Endpoints().Update(ctx, got, nil); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	again, err := s.Endpoints().Get(ctx, "p", "a")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got, want := string(again.Query.Variables["a"].Value), want; got != want {
		t.Errorf("string(again.Query.Variables[\"a\"].Value) = %q, want %q", got, want)
	}
	var text string
	if err := s.db.QueryRowContext(ctx, `SELECT query_json FROM `+endpointsTable).Scan(&text); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if s, sub := text, `"test_value":"[\"US\",2.50]"`; !strings.Contains(s, sub) {
		t.Errorf("%q does not contain %q", s, sub)
	}
}
