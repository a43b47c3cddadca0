package sqlstore

import (
	"errors"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/sql/engine"
)

func TestRebind(t *testing.T) {
	const q = `SELECT a FROM t WHERE b = ? AND c IN (?, ?)`
	tests := []struct {
		dialect engine.Engine
		want    string
	}{
		{engine.SQLite, q},
		{engine.MySQL, q},
		{engine.PostgreSQL, `SELECT a FROM t WHERE b = $1 AND c IN ($2, $3)`},
	}
	for _, tt := range tests {
		if got, want := rebind(tt.dialect, q), tt.want; got != want {
			t.Errorf("%v: rebind(tt.dialect, q) = %q, want %q", tt.dialect, got, want)
		}
	}
}

func TestDialectSpecificSchema(t *testing.T) {
	tests := []struct {
		dialect         engine.Store
		key, text, list string
	}{
		{engine.SQLite, "VARCHAR(255)", "TEXT", "ORDER BY name"},
		{engine.PostgreSQL, "VARCHAR(255)", "TEXT", `ORDER BY name COLLATE "C"`},
		{engine.MySQL, "VARBINARY(255)", "MEDIUMTEXT", "ORDER BY name"},
	}
	for _, tt := range tests {
		if got, want := tt.dialect.KeyType(), tt.key; got != want {
			t.Errorf("tt.dialect.KeyType() = %q, want %q", got, want)
		}
		if got, want := tt.dialect.LongTextType(), tt.text; got != want {
			t.Errorf("tt.dialect.LongTextType() = %q, want %q", got, want)
		}
		if s, sub := newStatements(tt.dialect).epList, tt.list; !strings.Contains(s, sub) {
			t.Errorf("%q does not contain %q", s, sub)
		}
		for _, stmt := range migrations(tt.dialect)[0] {
			if s, sub := stmt, "_T "; strings.Contains(s, sub) {
				t.Errorf("an unreplaced type name: %q contains %q", s, sub)
			}
		}
	}
}

func TestNewRejectsUnsupportedDialect(t *testing.T) {
	db := openMemory(t).db
	_, err := New(db, engine.ClickHouse)
	if err := err; !errors.Is(err, ErrEngine) {
		t.Errorf("error %v is not %v", err, ErrEngine)
	}
	_, err = New(db, nil)
	if err := err; !errors.Is(err, ErrEngine) {
		t.Errorf("error %v is not %v", err, ErrEngine)
	}
	_, err = New(nil, engine.SQLite)
	if err == nil {
		t.Errorf("got no error, want one")
	}
}
