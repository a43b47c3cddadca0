package sqlexec

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/stretchr/testify/assert"
)

// codeError has modernc.org/sqlite's shape: the result code and its text.
type codeError struct {
	code int
	msg  string
}

func (e *codeError) Error() string { return e.msg }
func (e *codeError) Code() int     { return e.code }

// stateError has pgx's *pgconn.PgError's shape.
type stateError struct{ state, msg string }

func (e *stateError) Error() string    { return "ERROR: " + e.msg + " (SQLSTATE " + e.state + ")" }
func (e *stateError) SQLState() string { return e.state }

// TestQueryFault: only the engines' codes of a fault of the query make a
// *driver.QueryError, with the engine's words without the driver's.
func TestQueryFault(t *testing.T) {
	for _, tc := range []struct {
		err error
		msg string // "" when the error is not the query's
	}{
		{&codeError{1, "SQL logic error: no such column: nope (1)"}, "no such column: nope"},
		{&codeError{18, "string or blob too big (18)"}, "string or blob too big"},
		{&codeError{5, "database is locked (5) (SQLITE_BUSY)"}, ""},
		{&codeError{9, "interrupted (9)"}, ""},
		{&codeError{10, "disk I/O error (10)"}, ""},
		{&stateError{"42883", "operator does not exist: text ->> unknown"}, "operator does not exist: text ->> unknown"},
		{&stateError{"22012", "division by zero"}, "division by zero"},
		{&stateError{"21000", "more than one row returned by a subquery used as an expression"}, "more than one row returned by a subquery used as an expression"},
		{&stateError{"42501", "permission denied for table events"}, ""},
		{&stateError{"57014", "canceling statement due to statement timeout"}, ""},
		{&stateError{"08006", "connection failure"}, ""},
		{&stateError{"53200", "out of memory"}, ""},
		{errors.New("Error 1054 (42S22): Unknown column 'nope' in 'SELECT'"), "Unknown column 'nope' in 'SELECT'"},
		{errors.New("Error 1365 (22012): Division by 0"), "Division by 0"},
		{errors.New("Error 1142 (42000): SELECT command denied to user 'ro'@'localhost' for table 'events'"), ""},
		{errors.New("Error 1969 (70100): Query execution was interrupted (max_statement_time exceeded)"), ""},
		{errors.New("Error 2013: Lost connection to server during query"), ""},
		{errors.New("sql: database is closed"), ""},
		{context.DeadlineExceeded, ""},
	} {
		wrapped := fmt.Errorf("sqlexec: query: %w", tc.err)
		got := queryFault(wrapped)
		var qe *driver.QueryError
		switch {
		case tc.msg == "" && errors.As(got, &qe):
			t.Errorf("%v: a QueryError %q; want the error as it was", tc.err, qe.Message)
		case tc.msg == "" && got != wrapped:
			t.Errorf("%v: changed to %v", tc.err, got)
		case tc.msg != "" && !errors.As(got, &qe):
			t.Errorf("%v: %v; want a QueryError", tc.err, got)
		case tc.msg != "" && (qe.Message != tc.msg || !errors.Is(got, tc.err)):
			t.Errorf("%v: QueryError %q (chain kept: %v); want %q", tc.err, qe.Message, errors.Is(got, tc.err), tc.msg)
		}
	}
	assert.NoError(t, queryFault(nil), "queryFault(nil) is not nil")
}
