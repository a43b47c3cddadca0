// Package stmt holds Statement, the one value an executor runs: SQL text
// with its engine's bind markers and their arguments, sealed so that only
// the packages allowed to make one can (driver.Statement and
// scope.Statement are its aliases).
//
// The fields are unexported and New is the only way to fill them. Package
// sql/scope calls it, for every statement the Service sends, once the
// text is scoped to its project; package endpoint/executortest calls it,
// for the conformance suite's own statements. No other package's non-test
// code may call it: TestOnlyScopeAndSuiteSeal walks the module and fails
// when one does. Test files may, to build statements of their own for an
// executor under test.
package stmt

// Statement is one statement for an executor: its text, with the engine's
// bind markers, and their arguments, in order. The zero Statement has no
// text.
type Statement struct {
	sql  string
	args []any
	// user: the text is a query its author wrote (scoped), not SQL the
	// library generated; an engine's complaint about it is the author's.
	user bool
}

// New seals sql and args into a Statement. Only packages sql/scope
// and endpoint/executortest call it (see the package doc). args is kept,
// not copied.
func New(sql string, args []any) Statement { return Statement{sql: sql, args: args} }

// ByUser returns s marked as a query its author wrote, as scoped: an
// error the engine blames on the query is then the author's to read (the
// Service answers it 400 query_error); one in SQL the library generated
// stays a 502.
func (s Statement) ByUser() Statement {
	s.user = true
	return s
}

// User reports whether s is a query its author wrote (ByUser).
func (s Statement) User() bool { return s.user }

// SQL returns the statement's text.
func (s Statement) SQL() string { return s.sql }

// Args returns the arguments of its bind markers, in order. The slice is
// the Statement's own: an executor must not change it.
func (s Statement) Args() []any { return s.args }
