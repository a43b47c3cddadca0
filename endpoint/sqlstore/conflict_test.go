package sqlstore

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

type sqlStateError string

func (e sqlStateError) Error() string    { return "driver error" }
func (e sqlStateError) SQLState() string { return string(e) }

func TestIsUniqueViolation(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{nil, false},
		{errors.New("UNIQUE constraint failed: endpointkit_endpoints.project, endpointkit_endpoints.name"), true},
		{errors.New("constraint failed: UNIQUE constraint failed: t.a (2067)"), true},
		{errors.New(`ERROR: duplicate key value violates unique constraint "endpointkit_endpoints_name" (SQLSTATE 23505)`), true},
		{errors.New(`pq: duplicate key value violates unique constraint "x"`), true},
		{errors.New("Error 1062 (23000): Duplicate entry '1-a' for key 'PRIMARY'"), true},
		{fmt.Errorf("wrapped: %w", sqlStateError("23505")), true},
		{sqlStateError("23503"), false},
		{errors.New("NOT NULL constraint failed: t.a"), false},
		{errors.New("database is locked"), false},
		{errors.New("no such table: endpointkit_endpoints"), false},
	}
	for _, tt := range tests {
		got, want := isUniqueViolation(tt.err), tt.want
		assert.Equal(t, want, got, "%v: isUniqueViolation(tt.err)", tt.err)
	}
}

func TestIsBusy(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{errors.New("database is locked (5) (SQLITE_BUSY)"), true},
		{errors.New("SQLITE_BUSY_SNAPSHOT"), true},
		{errors.New("UNIQUE constraint failed: t.a"), false},
	}
	for _, tt := range tests {
		got, want := isBusy(tt.err), tt.want
		assert.Equal(t, want, got, "%v: isBusy(tt.err)", tt.err)
	}
}
