package endpoint

import (
	"testing"

	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInertMessagePerEngine: a placeholder the engine reads as text is
// refused with the form that works on that engine, built from the
// literal's own pieces.
func TestInertMessagePerEngine(t *testing.T) {
	const like = "SELECT * FROM events WHERE event LIKE '%{variables.q}%'"
	const where = "Placeholder {variables.q} at line 1, column 41 is inside a string literal, where the database reads it as text and binds no value; build the text with the placeholder outside the quotes: "
	for _, tc := range []struct {
		e      engine.Engine
		sql    string
		detail string
	}{
		{engine.SQLite, like, where + "'%' || {variables.q} || '%'"},
		{engine.PostgreSQL, like, where + "'%' || {variables.q} || '%'"},
		{engine.MySQL, like, where + "concat('%', {variables.q}, '%')"},
		{engine.ClickHouse, like, where + "concat('%', {variables.q}, '%')"},
		{engine.SQLite, "SELECT 1 WHERE country = '{variables.q}'",
			"Placeholder {variables.q} at line 1, column 27 is inside a string literal, where the database reads it as text and binds no value; build the text with the placeholder outside the quotes: {variables.q}"},
		{engine.SQLite, "SELECT 1 WHERE a = 'it''s {variables.q} or {variables.r}!'",
			"Placeholder {variables.q} at line 1, column 27 is inside a string literal, where the database reads it as text and binds no value; build the text with the placeholder outside the quotes: 'it''s ' || {variables.q} || ' or ' || {variables.r} || '!'"},
		{engine.MySQL, "SELECT 1 WHERE a = 'x{variables.q}'",
			"Placeholder {variables.q} at line 1, column 22 is inside a string literal, where the database reads it as text and binds no value; build the text with the placeholder outside the quotes: concat('x', {variables.q})"},
		{engine.PostgreSQL, "SELECT 1 WHERE a = $$%{variables.q}%$$",
			"Placeholder {variables.q} at line 1, column 23 is inside a string literal, where the database reads it as text and binds no value; build the text with the placeholder outside the quotes: '%' || {variables.q} || '%'"},
		{engine.SQLite, "SELECT 1\n-- filter on {variables.q}\nWHERE 1 = 1",
			"Placeholder {variables.q} at line 2, column 14 is inside a comment, where the database reads it as text and binds no value; write it outside the comment"},
		{engine.PostgreSQL, "SELECT 1 /* {variables.q} */",
			"Placeholder {variables.q} at line 1, column 13 is inside a comment, where the database reads it as text and binds no value; write it outside the comment"},
		{engine.SQLite, `SELECT "{variables.q}" FROM events`,
			"Placeholder {variables.q} at line 1, column 9 is inside a quoted name, where the database reads it as text and binds no value; a variable's value can only stand where a value does, outside the quotes"},
	} {
		tmpl, err := placeholder.CompileFor(tc.e.Lexical(), tc.sql)
		require.NoError(t, err, "%s: CompileFor(%q)", tc.e, tc.sql)
		err = checkInert(tc.e, tc.sql, tmpl)
		if !assert.Error(t, err, "%s: %q saves; want it refused", tc.e, tc.sql) {
			continue
		}
		if e := err.(*Error); e.Status != 400 || e.Code != CodeInvalidInput || e.Detail != tc.detail || e.Attr != "query" {
			t.Errorf("%s: %q:\n got {%d %s %q %s}\nwant {400 invalid_input %q query}", tc.e, tc.sql, e.Status, e.Code, e.Detail, e.Attr, tc.detail)
		}
	}
	// Text that only looks like the start of a placeholder names no
	// variable: JSON in a literal saves.
	for _, sql := range []string{`SELECT '{"variables": 1}'`, "SELECT '{variables.}'", "SELECT 1 -- {not a placeholder}"} {
		tmpl, err := placeholder.CompileFor(engine.SQLite.Lexical(), sql)
		require.NoError(t, err)
		assert.NoError(t, checkInert(engine.SQLite, sql, tmpl), "%q", sql)
	}
}
