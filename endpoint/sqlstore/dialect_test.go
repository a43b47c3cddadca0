package sqlstore

import (
	"testing"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/assert"
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
		got, want := rebind(tt.dialect, q), tt.want
		assert.Equal(t, want, got, "%v: rebind(tt.dialect, q)", tt.dialect)
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
		got, want := tt.dialect.KeyType(), tt.key
		assert.Equal(t, want, got, "tt.dialect.KeyType()")
		if got, want := tt.dialect.LongTextType(), tt.text; got != want {
			t.Errorf("tt.dialect.LongTextType() = %q, want %q", got, want)
		}
		s, sub := newStatements(tt.dialect).epList, tt.list
		assert.Contains(t, s, sub)
		for _, stmt := range migrations(tt.dialect)[0] {
			assert.NotContains(t, stmt, "_T ", "an unreplaced type name")
		}
	}
}

func TestNewRejectsUnsupportedDialect(t *testing.T) {
	db := openMemory(t).db
	_, err := New(db, engine.ClickHouse)
	assert.ErrorIs(t, err, ErrEngine)
	_, err = New(db, nil)
	assert.ErrorIs(t, err, ErrEngine)
	_, err = New(nil, engine.SQLite)
	assert.Error(t, err)
}
