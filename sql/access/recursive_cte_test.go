package access

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recursiveReadsTable are WITH RECURSIVE queries whose own name, in its
// body, is not the recursive reference of a UNION: ClickHouse reads the
// table of that name there (a body that is no UNION is not recursive on
// it, and the first arm of a UNION is read before the query exists), and
// the other engines refuse the query. The name is a table there, and a
// table the rules do not list is refused.
var recursiveReadsTable = []string{
	`WITH RECURSIVE secrets AS (SELECT v FROM secrets) SELECT v FROM secrets`,
	`WITH RECURSIVE secrets AS (SELECT v FROM secrets LIMIT 1) SELECT v FROM secrets`,
	`WITH RECURSIVE secrets AS ((SELECT v FROM secrets)) SELECT v FROM secrets`,
	`WITH RECURSIVE secrets AS (SELECT * FROM (SELECT v FROM secrets) AS s) SELECT * FROM secrets`,
	`WITH RECURSIVE secrets AS (SELECT 'x' AS v WHERE 'SECRET' IN (SELECT v FROM secrets)) SELECT v FROM secrets`,
	`WITH RECURSIVE secrets AS (SELECT v FROM secrets UNION ALL SELECT 'x' AS v) SELECT v FROM secrets LIMIT 5`,
	`WITH RECURSIVE secrets AS (SELECT v FROM secrets UNION ALL SELECT 'x' AS v UNION ALL SELECT v FROM secrets WHERE false) SELECT v FROM secrets`,
	`WITH RECURSIVE secrets AS (SELECT v FROM secrets INTERSECT SELECT 'SECRET') SELECT v FROM secrets`,
	`WITH RECURSIVE secrets AS (SELECT 'x' AS v EXCEPT SELECT v FROM secrets) SELECT v FROM secrets`,
	`WITH RECURSIVE r AS (SELECT 1 AS k), secrets AS (SELECT v FROM secrets) SELECT v FROM secrets`,
	`SELECT * FROM events WHERE event IN (WITH RECURSIVE secrets AS (SELECT v FROM secrets) SELECT v FROM secrets)`,
}

// TestRecursiveCTEReadsTheTableOutsideItsRecursiveArm: the tree once put
// a WITH RECURSIVE query's name in scope in the whole of its own body, so
// that Check took every mention of it there for the query itself and
// checked no table: on ClickHouse, WITH RECURSIVE secrets AS (SELECT v
// FROM secrets) reads table secrets, which the rules do not list.
func TestRecursiveCTEReadsTheTableOutsideItsRecursiveArm(t *testing.T) {
	rules := testRules()
	for _, q := range recursiveReadsTable {
		err := Check(q, rules)
		var e *Error
		if !assert.ErrorAs(t, err, &e, "Check(%q) accepted a read of table secrets", q) {
			continue
		}
		assert.Equal(t, ReasonTable, e.Reason, "Check(%q) = %v", q, err)
		assert.Equal(t, "secrets", e.Table, "Check(%q) = %v", q, err)
		_, err = Confine(q, rules, tenantVar)
		assert.ErrorAs(t, err, &e, "Confine(%q)", q)
	}
}

// TestRecursiveCTEKeepsItsRecursiveArms: the arms after the first of a
// UNION [ALL] body read the query itself, on every engine, and are
// accepted, with the tables they read confined.
func TestRecursiveCTEKeepsItsRecursiveArms(t *testing.T) {
	rules := testRules()
	for _, q := range []string{
		`WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 10) SELECT n FROM r`,
		`WITH RECURSIVE r(n) AS (SELECT 1 UNION SELECT n + 1 FROM r WHERE n < 10) SELECT n FROM r`,
		`WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3 UNION ALL SELECT n + 2 FROM r WHERE n < 3) SELECT n FROM r`,
		`WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL (SELECT n + 1 FROM r WHERE n < 10)) SELECT n FROM r`,
		`WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r JOIN events e ON e.uuid = 'x' WHERE n < 10), s AS (SELECT n FROM r) SELECT n FROM s`,
		`WITH RECURSIVE r(n) AS (SELECT count(*) FROM events UNION ALL SELECT n - 1 FROM r WHERE n > 0) SELECT n FROM r`,
	} {
		out, err := Confine(q, rules, tenantVar)
		require.NoError(t, err, "Confine(%q)", q)
		requireScoped(t, q, out, rules)
	}
}

// TestRecursiveCTEReadsTheTableOnClickHouse shows the reading the checker
// follows, on ClickHouse (chDB, with -tags chdb): a WITH RECURSIVE query's
// name outside the recursive arms of a UNION reads the table of that name,
// which holds one row ('SECRET'), in the body and in the first arm; Check
// refuses every query of recursiveReadsTable.
func TestRecursiveCTEReadsTheTableOnClickHouse(t *testing.T) {
	open, ok := formEngines["clickhouse"]
	if !ok {
		t.Skip("ClickHouse runs with -tags chdb")
	}
	x := open(t)
	n, err := x.count(`WITH RECURSIVE secrets AS (SELECT v FROM secrets) SELECT v FROM secrets WHERE v = 'SECRET'`, nil)
	require.NoError(t, err)
	require.Equal(t, 1, n, "ClickHouse reads table secrets in the body")
	n, err = x.count(`WITH RECURSIVE secrets AS (SELECT v FROM secrets UNION ALL SELECT 'x' AS v) SELECT v FROM secrets WHERE v = 'SECRET'`, nil)
	require.NoError(t, err)
	require.Equal(t, 1, n, "ClickHouse reads table secrets in the first arm")
	for _, q := range recursiveReadsTable {
		assert.Error(t, Check(q, testRules()), "Check(%q)", q)
	}
}
