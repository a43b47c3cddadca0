package sqlstore

import (
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/engine"
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
		assert.Equal(t, tt.want, rebind(tt.dialect, q), "%v", tt.dialect)
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
		assert.Equal(t, tt.key, tt.dialect.KeyType())
		assert.Equal(t, tt.text, tt.dialect.LongTextType())
		assert.Contains(t, newStatements(tt.dialect).epList, tt.list)
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
