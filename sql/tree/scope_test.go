package tree_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/tree"
)

const tenant = "__endpointkit_tenant"

// scopeRules are sql/access's test rules (a table with a tenant column,
// one with a tenant column and listed columns, one plain), letting any
// other table through as the corpus needs.
var scopeRules = &access.Rules{
	Tables: []access.Table{
		{Name: "events", TenantColumn: "project_id"},
		{Name: "users", Columns: []string{"id", "name"}, TenantColumn: "project_id"},
		{Name: "analytics.sessions"},
		{Name: "orders", Columns: []string{"id", "amount"}},
	},
	AnyTable:       true,
	TableFunctions: corpusRules.TableFunctions,
}

// treeTables are scopeRules as the tree's scope takes them.
func treeTables(r *access.Rules) []tree.Table {
	out := make([]tree.Table, len(r.Tables))
	for i, t := range r.Tables {
		out[i] = tree.Table{Parts: strings.Split(t.Name, "."), TenantColumn: t.TenantColumn, Columns: t.Columns}
	}
	return out
}

// printScoped parses q for e, binds it to the rules' tables and prints it
// with the tenant's scope.
func printScoped(t testing.TB, e engine.Engine, q string) (string, error) {
	t.Helper()
	tr, err := tree.Parse(e, q)
	if err != nil {
		return "", err
	}
	tr.Bind(treeTables(scopeRules))
	return tree.Printer{Scope: &tree.Scope{Tenant: tenant}}.Print(tr)
}

// scopeCases are the shapes of table references access.Confine rewrites,
// beyond those of the corpus.
var scopeCases = []string{
	`SELECT * FROM events`,
	`SELECT e.event FROM events AS e JOIN users u ON u.id = e.distinct_id`,
	`SELECT "E".event FROM "events" "E"`,
	`SELECT * FROM EVENTS, Users`,
	`SELECT * FROM events FINAL SAMPLE 1/10 WHERE event = 'x'`,
	`SELECT * FROM events AS e FINAL`,
	`SELECT * FROM events USE INDEX (events_event_timestamp) WHERE 1 = 1`,
	`SELECT * FROM events e USE INDEX (i)WHERE 1 = 1`,
	`SELECT * FROM events INDEXED BY events_event_timestamp`,
	`SELECT * FROM ONLY events`,
	`SELECT * FROM events AS e(a, b, c)`,
	`SELECT * FROM analytics.sessions s JOIN ANALYTICS.SESSIONS t USING (id)`,
	`SELECT * FROM "analytics"."Sessions"`,
	`WITH e AS (SELECT * FROM events) SELECT * FROM e JOIN users ON true`,
	`WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 3) SELECT * FROM r, events`,
	`SELECT (SELECT count(*) FROM events) AS n, x FROM orders WHERE EXISTS (SELECT 1 FROM users WHERE users.id = orders.id)`,
	`SELECT * FROM (SELECT * FROM events WHERE events.project_id = {variables.__endpointkit_tenant}) AS events`,
	`SELECT * FROM (SELECT id, name FROM users WHERE users.project_id = {variables.__endpointkit_tenant}) AS u`,
	`SELECT * FROM (SELECT id, amount FROM orders) AS orders`,
	`SELECT * FROM (SELECT * FROM events WHERE events.project_id = {variables.other}) AS events`,
	`SELECT event FROM events /* c */ WHERE event IN (SELECT event FROM events GROUP BY 1) -- end`,
	`SELECT * FROM events LEFT JOIN LATERAL (SELECT * FROM users WHERE users.id = events.distinct_id) u ON true`,
}

// TestScopedPrintEqualsAccessScope: for every query of the corpus and of
// scopeCases that access.Confine (formerly Scope) rewrites on an engine,
// the tree's scoped print of the query read as that engine reads it is
// byte-identical to access's output, and printing that output again with
// the scope changes nothing. (access.Confine prints through this printer
// since; sql/access's TestConfineEqualsTheSplice compares it with the text
// splice it was before. This test was written against the splice and
// passed before the switch.)
func TestScopedPrintEqualsAccessScope(t *testing.T) {
	qs := append(loadCorpus(t), scopeCases...)
	for _, e := range engine.All() {
		compared, changed := 0, 0
		for _, q := range qs {
			want, err := access.ConfineFor(e.Lexical(), q, scopeRules, tenant)
			if err != nil {
				continue
			}
			got, err := printScoped(t, e, q)
			if err != nil {
				// Only the refusals the round trip lists.
				require.ErrorIs(t, err, tree.ErrSyntax, "%s: %s", e.Name(), q)
				continue
			}
			compared++
			if want != q {
				changed++
			}
			if !assert.Equal(t, want, got, "%s: %s", e.Name(), q) {
				continue
			}
			again, err := printScoped(t, e, got)
			require.NoError(t, err)
			assert.Equal(t, got, again, "%s: scoping twice", e.Name())
		}
		t.Logf("%s: %d queries compared with access.Confine, %d of them rewritten", e.Name(), compared, changed)
		assert.Greater(t, changed, 20)
	}
}

// TestPrintScopedTableWithoutScope: a printer without a scope refuses to
// print a reference to a scoped table, even inside a subquery or a node a
// caller replaced; it prints a plain table's reference.
func TestPrintScopedTableWithoutScope(t *testing.T) {
	for _, q := range []string{
		`SELECT * FROM events`,
		`SELECT 1 FROM orders WHERE x IN (SELECT id FROM users)`,
		`WITH a AS (SELECT * FROM events) SELECT * FROM a`,
	} {
		tr := parse(t, engine.PostgreSQL, q)
		tr.Bind(treeTables(scopeRules))
		_, err := tree.Print(tr)
		require.ErrorIs(t, err, tree.ErrUnscoped, q)
		var te *tree.Error
		require.ErrorAs(t, err, &te)
		assert.Contains(t, te.Error(), "must be printed with the tenant's scope")
		assert.Equal(t, 1, te.Line)
	}
	// The scope needs a tenant placeholder name where a table has a
	// tenant column.
	tr := parse(t, engine.SQLite, `SELECT * FROM events`)
	tr.Bind(treeTables(scopeRules))
	_, err := tree.Printer{Scope: &tree.Scope{Tenant: "x y"}}.Print(tr)
	require.ErrorIs(t, err, tree.ErrUnscoped)

	tr = parse(t, engine.SQLite, `SELECT * FROM analytics.sessions, other`)
	tr.Bind(treeTables(scopeRules))
	assert.Equal(t, `SELECT * FROM analytics.sessions, other`, printed(t, tr))
}

// TestBindRecursiveName: a WITH RECURSIVE query's name means the query
// itself only in the recursive arms of its body (the arms after the
// first of its UNION [ALL] chain); in its first arm, in a body that is no
// UNION, under INTERSECT or EXCEPT, the name is the table of that name,
// as sql/access's checker reads it (ClickHouse reads the table there),
// so that a scoped printer scopes it. The binder once took the name for
// the query throughout its body, and left those references unscoped.
func TestBindRecursiveName(t *testing.T) {
	tables := []tree.Table{{Parts: []string{"secrets"}, TenantColumn: "project_id"}}
	cases := []struct {
		q string
		// bound lists, for each table reference in text order, whether it
		// is bound to the table secrets.
		bound []bool
	}{
		{`WITH RECURSIVE secrets AS (SELECT v FROM secrets UNION ALL SELECT v FROM secrets WHERE v < 3) SELECT v FROM secrets`, []bool{true, false, false}},
		{`WITH RECURSIVE secrets AS (SELECT v FROM secrets) SELECT v FROM secrets`, []bool{true, false}},
		{`WITH RECURSIVE secrets AS (SELECT 1 AS v UNION ALL (SELECT v + 1 FROM secrets WHERE v < 3)) SELECT v FROM secrets`, []bool{false, false}},
		{`WITH RECURSIVE secrets AS (SELECT v FROM secrets INTERSECT SELECT v FROM secrets) SELECT v FROM secrets`, []bool{true, true, false}},
		{`WITH RECURSIVE secrets AS (SELECT 1 AS v UNION ALL SELECT v + 1 FROM secrets WHERE v IN (SELECT v FROM secrets)) SELECT v FROM secrets`, []bool{false, false, false}},
		{`WITH RECURSIVE r AS (SELECT v FROM secrets UNION ALL SELECT v FROM r), secrets AS (SELECT v FROM r) SELECT v FROM secrets`, []bool{true, false, false, false}},
	}
	for _, c := range cases {
		tr, err := tree.Parse(engine.PostgreSQL, c.q)
		require.NoError(t, err, c.q)
		tr.Bind(tables)
		var got []bool
		require.NoError(t, tree.Walk(func(n tree.Node) (bool, error) {
			if a, ok := n.(*tree.AliasedTableExpr); ok {
				if _, ok := a.Expr.(*tree.TableName); ok {
					got = append(got, a.Table != nil)
				}
			}
			return true, nil
		}, tr.Stmt))
		assert.Equal(t, c.bound, got, c.q)
		if c.bound[0] {
			out, err := tree.Printer{Scope: &tree.Scope{Tenant: tenant}}.Print(tr)
			require.NoError(t, err, c.q)
			assert.Contains(t, out, "{variables."+tenant+"}", c.q)
		}
	}
}
