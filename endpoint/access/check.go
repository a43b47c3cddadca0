package access

// Check reports whether query may run under rules: nil, or the *Error that
// refuses it (a plain error when rules themselves are malformed). See the
// package documentation for what is checked.
//
// Check does not apply Table.Columns nor Table.TenantColumn: only the SQL
// that Scope returns is restricted to them.
func Check(query string, rules *Rules) error {
	rs, err := compileRules(rules)
	if err != nil {
		return err
	}
	if _, e := analyze(query, rs); e != nil {
		return e
	}
	return nil
}
