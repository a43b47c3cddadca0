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

// classified is an error and whether a classifier should recognise it.
type classified struct {
	err  error
	want bool
}

// assertClassifies checks what is (named name) answers for each case.
func assertClassifies(t *testing.T, name string, is func(error) bool, cases []classified) {
	t.Helper()
	for _, c := range cases {
		assert.Equal(t, c.want, is(c.err), "%v: %s", c.err, name)
	}
}

func TestIsUniqueViolation(t *testing.T) {
	assertClassifies(t, "isUniqueViolation", isUniqueViolation, []classified{
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
	})
}

func TestIsBusy(t *testing.T) {
	assertClassifies(t, "isBusy", isBusy, []classified{
		{errors.New("database is locked (5) (SQLITE_BUSY)"), true},
		{errors.New("SQLITE_BUSY_SNAPSHOT"), true},
		{errors.New("UNIQUE constraint failed: t.a"), false},
	})
}
