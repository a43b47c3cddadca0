package materialize

import (
	"testing"

	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
)

// "/*!*/" made the MySQL grammar panic; it is no statement, an error.
func TestParseRecoversFromParserPanic(t *testing.T) {
	_, err := parse("/*!*/", lex("/*!*/", engine.MySQL), engine.MySQL, nil)
	require.ErrorContains(t, err, "syntax error")
	a, err := Analyze("/*!*/", Options{Engine: engine.MySQL})
	require.NoError(t, err)
	require.False(t, a.Materializable(), "a.Materializable() is true")
	require.Equal(t, CodeUnparsable, a.Reasons[0].Code)
}

// Queries the parser cannot read are not materializable, and the reason
// quotes the parser's position, mapped back to the original text.
func TestParseErrorsQuotePosition(t *testing.T) {
	cases := []struct{ name, query, want string }{
		{"literals quoted as written", "SELECT a FROM t WHERE a = {variables.a} 'a\\1'", `near 'a\1'`},
		{"padded placeholder", "SELECT a FROM t WHERE a = {variables.a}0", "near '0'"},
		{"placeholder in message", "SELECT a FROM t WHERE a = {variables.a} {variables.b}", "{variables.b}"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := Analyze(c.query, Options{Engine: engine.SQLite})
			require.NoError(t, err)
			require.False(t, a.Materializable(), "a.Materializable() is true")
			require.Equal(t, CodeUnparsable, a.Reasons[0].Code)
			s, sub := a.Reason(), c.want
			require.Contains(t, s, sub)
		})
	}
}

// TestUnsupportedConstructsSayWhich: SQL its engine runs, in a shape
// materialization does not take, is refused with that reason, not with
// the parser's error ("syntax error at position 5 near 'with'").
func TestUnsupportedConstructsSayWhich(t *testing.T) {
	for _, c := range []struct {
		d           engine.Engine
		query, want string
	}{
		{engine.SQLite, "WITH p AS (SELECT 1 AS a) SELECT count(*) FROM p, p AS q WHERE p.a = {variables.a}", "the WITH query p is read 2 times"},
		{engine.PostgreSQL, "SELECT count(*) OVER (PARTITION BY b) FROM t WHERE a = {variables.a}", "a window function (OVER)"},
		{engine.PostgreSQL, "SELECT a FROM t\nWHERE a IS DISTINCT FROM {variables.a}", "IS [NOT] DISTINCT FROM"},
		{engine.PostgreSQL, "SELECT a FROM t WHERE a ~ '^x' AND b = {variables.a}", "the operator ~"},
		{engine.PostgreSQL, "SELECT ts AT TIME ZONE 'UTC' AS t, count(*) FROM t WHERE b = {variables.a} GROUP BY 1", "AT TIME ZONE"},
		{engine.PostgreSQL, "SELECT count(*) FROM t WHERE ts > now() - interval '1 day' AND b = {variables.a}", "interval literals"},
	} {
		a, err := Analyze(c.query, Options{Engine: c.d})
		require.NoError(t, err)
		require.False(t, a.Materializable(), "%v: a.Materializable() is true", c.query)
		got, want := a.Reasons[0].Code, CodeUnsupportedQuery
		require.Equal(t, want, got, "%s: %s: a.Reasons[0].Code", c.query, a.Reason())
		s, sub := a.Reason(), c.want
		require.Contains(t, s, sub)
		require.NotContains(t, a.Reason(), "parser")
	}
}

func TestBindIndex(t *testing.T) {
	src := "SELECT a FROM t WHERE a = {variables.x} AND b = {variables.y}"
	phs, err := placeholder.Scan(src)
	require.NoError(t, err)
	p, err := parse(src, lex(src, engine.SQLite), engine.SQLite, phs)
	require.NoError(t, err)
	var got []string
	for _, f := range findBinds(p.stmt) {
		got = append(got, p.names[p.index[f.ph.Span().Start]])
	}
	require.Equal(t, []string{"x", "y"}, got)
}
