package materialize

import (
	"errors"
	"fmt"
)

// Code is the stable identifier of a reason a query cannot be materialized.
// Its value is what API clients may match on; the message may change.
type Code string

// The reason codes.
const (
	// CodeUnparsable: the parser cannot read the query (the message quotes
	// its position), or the query uses syntax the parser would read
	// differently from the target engine.
	CodeUnparsable Code = "unparsable"
	// CodeUnsupportedQuery: the statement is not a single SELECT, or uses a
	// construct the rewrite cannot carry (SELECT *, a subquery in the
	// SELECT list, ...).
	CodeUnsupportedQuery Code = "unsupported_query"
	// CodeNotInWhere: a variable is used outside the outer WHERE (SELECT
	// list, JOIN ON, GROUP BY, HAVING, ORDER BY, LIMIT, a subquery).
	CodeNotInWhere Code = "not_in_where"
	// CodeUnsupportedOperator: a variable is compared with an operator other
	// than =, >=, >, <, <= and IN (LIKE, !=, BETWEEN, NOT IN, IS, NOT, ...).
	CodeUnsupportedOperator Code = "unsupported_operator"
	// CodeInExpression: a variable is part of an expression (an argument of
	// a function, an operand of arithmetic) rather than compared as itself.
	CodeInExpression Code = "in_expression"
	// CodeUnderOr: a variable is used inside an OR.
	CodeUnderOr Code = "under_or"
	// CodeNotColumn: a variable is compared to a constant or to another
	// variable rather than to a column or an expression over the row.
	CodeNotColumn Code = "not_a_column"
	// CodeNotRowExpression: a variable is compared to something other than
	// an expression over one row's columns: a subquery, an aggregate.
	CodeNotRowExpression Code = "not_row_expression"
	// CodeNotDeterministic: a variable is compared to an expression whose
	// value may change between the refresh and a run (random(), now(), a
	// function not known to be deterministic).
	CodeNotDeterministic Code = "not_deterministic"
	// CodeDifferentColumns: one variable is compared to two different
	// columns.
	CodeDifferentColumns Code = "different_columns"
	// CodeAggregate: an aggregate cannot be combined again after the stored
	// groups are filtered (count DISTINCT over a range, an unknown or
	// order-dependent aggregate), or an output column is neither grouped
	// nor aggregated.
	CodeAggregate Code = "aggregate"
)

// Reason says why a query, or one variable of it, cannot be materialized.
type Reason struct {
	// Code is stable; match on it.
	Code Code
	// Variable is the code name concerned; empty for the whole query.
	Variable string
	// Message is for people.
	Message string
	// Line and Column are where in the query the construct the reason is
	// about starts (1-based, columns in bytes): the variable's placeholder,
	// or the keyword (WITH, OVER); 0 when the reason is about the whole
	// query.
	Line, Column int
}

// Located returns String with the position of the construct, when the
// reason has one: "variable 'x' is used under OR; ... (line 3, column
// 12)".
func (r Reason) Located() string {
	if r.Line == 0 {
		return r.String()
	}
	return fmt.Sprintf("%s (line %d, column %d)", r, r.Line, r.Column)
}

// String returns the message, prefixed with the variable when there is one.
func (r Reason) String() string {
	if r.Variable == "" {
		return r.Message
	}
	return fmt.Sprintf("variable '%s' %s", r.Variable, r.Message)
}

// Sentinel errors, compared with errors.Is.
var (
	// ErrInvalidValue is wrapped by every *ValueError.
	ErrInvalidValue = errors.New("materialize: invalid value")
	// ErrInvalidOptions is returned by Analyze for unusable Options.
	ErrInvalidOptions = errors.New("materialize: invalid options")
	// ErrInvalidTable is returned for a stored table name that is empty.
	ErrInvalidTable = errors.New("materialize: invalid table name")
)

// ValueError reports a value Plan.Read cannot bind: missing, null, a list,
// or not a date where a bucketed date is compared.
type ValueError struct {
	Variable string
	Detail   string
}

// Error implements error.
func (e *ValueError) Error() string {
	return fmt.Sprintf("materialize: variable '%s': %s", e.Variable, e.Detail)
}

// Unwrap returns ErrInvalidValue.
func (e *ValueError) Unwrap() error { return ErrInvalidValue }
