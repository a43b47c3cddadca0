// Package stmt holds Statement, the one value an executor runs: SQL text
// with its engine's bind markers and their arguments, sealed so that only
// the packages allowed to make one can (driver.Statement and
// scope.Statement are its aliases).
//
// The fields are unexported and New is the only way to fill them. Package
// internal/scope calls it, for every statement the Service sends, once the
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
}

// New seals sql and args into a Statement. Only packages internal/scope
// and endpoint/executortest call it (see the package doc). args is kept,
// not copied.
func New(sql string, args []any) Statement { return Statement{sql: sql, args: args} }

// SQL returns the statement's text.
func (s Statement) SQL() string { return s.sql }

// Args returns the arguments of its bind markers, in order. The slice is
// the Statement's own: an executor must not change it.
func (s Statement) Args() []any { return s.args }
