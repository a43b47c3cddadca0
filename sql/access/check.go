package access

import "github.com/endpointkit/endpointkit/sql/engine"

// Check reports whether query may run under rules: nil, or the *Error that
// refuses it (a plain error when rules themselves are malformed). See the
// package documentation for what is checked.
//
// Check does not apply Table.Columns nor Table.TenantColumn: only the SQL
// that Confine returns is restricted to them.
func Check(query string, rules *Rules) error { return check(query, rules, nil) }

// CheckFor is Check for a query that runs on an engine whose rules lx
// holds. Where no setting of that engine changes how it reads a string
// literal (engine.Lexical.FixedEscapes: SQLite, ClickHouse), a literal is
// read as the engine reads it, so that 'C:\' is accepted on SQLite;
// everything else is refused where engines disagree, as Check does.
func CheckFor(lx engine.Lexical, query string, rules *Rules) error {
	return check(query, rules, &lx)
}

func check(query string, rules *Rules, lx *engine.Lexical) error {
	rs, err := compileRules(rules)
	if err != nil {
		return err
	}
	if _, e := analyze(query, rs, lx); e != nil {
		return e
	}
	return nil
}
