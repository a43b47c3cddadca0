package access

import (
	"fmt"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/tree"
)

// Confine checks query as Check does and returns it rewritten so that it
// can read only what rules allow it: every reference to a table with a
// TenantColumn or Columns becomes a derived table,
//
//	events AS e   ->   (SELECT * FROM events WHERE events.project_id = {variables.<tenant>}) AS e
//
// (with the listed columns instead of * when Columns is set), keeping the
// reference's alias, or its own name as the alias, so that the rest of the
// query resolves as before. Every table reference is also spelled as the
// rules spell it, so that a case-sensitive engine reads the table the rules
// name. The tenant value is the placeholder {variables.<tenant>}: the
// caller binds it like any other variable, never as SQL text. tenant must
// be a code name ([A-Za-z_][A-Za-z0-9_]*) when any table has a tenant
// column. The caller must bind it itself, over any value a client sends,
// and keep clients from defining a variable of that code name: whoever
// chooses its value chooses the tenant.
//
// The query is read once, by package sql/tree, whose tree Check walks;
// the rewritten text is printed from that tree by sql/tree's printer, the
// one place that adds the tenant's condition to a table reference, and
// which refuses to print a reference to a scoped table without it. Nothing
// is printed from the user's text but what the tree read.
//
// A reference already in that exact shape (the output of an earlier
// Confine) is left as it is, so Confine(Confine(q)) == Confine(q).
//
// The rest of the text (spaces, comments, everything outside the table
// references) is kept byte for byte.
func Confine(query string, rules *Rules, tenant string) (string, error) {
	return confine(query, rules, tenant, nil)
}

// ConfineFor is Confine for a query that runs on an engine whose rules lx
// holds: it reads string literals as CheckFor does.
func ConfineFor(lx engine.Lexical, query string, rules *Rules, tenant string) (string, error) {
	return confine(query, rules, tenant, &lx)
}

func confine(query string, rules *Rules, tenant string, lx *engine.Lexical) (string, error) {
	rs, err := compileRules(rules)
	if err != nil {
		return "", err
	}
	if err := rs.checkTenant(tenant); err != nil {
		return "", err
	}
	t, e := read(query, rs, lx)
	if e != nil {
		return "", e
	}
	return (&Query{rs: rs, tree: t}).Confine(tenant)
}

// checkTenant refuses a tenant placeholder name that is not a code name,
// when some table has a tenant column.
func (rs *ruleset) checkTenant(tenant string) error {
	if rs.tenantUsed && !isPlainName(tenant) {
		return policyErrorf("tenant placeholder name %q must match [A-Za-z_][A-Za-z0-9_]*", tenant)
	}
	return nil
}

// Confine returns the query confined as package function Confine does,
// printed from the tree Check read.
func (q *Query) Confine(tenant string) (string, error) {
	if err := q.rs.checkTenant(tenant); err != nil {
		return "", err
	}
	q.tree.Bind(q.rs.treeTables)
	out, err := tree.Printer{Scope: &tree.Scope{Tenant: tenant}}.Print(q.tree)
	if err != nil {
		return "", fmt.Errorf("access: the scoped query could not be printed (%v); this is a defect", err)
	}
	return out, nil
}
