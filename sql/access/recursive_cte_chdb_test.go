//go:build chdb

package access

import (
	"context"
	"fmt"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/chdb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRecursiveCTEReadsTheTableOnClickHouse shows the reading the
// checker follows: on ClickHouse, a WITH RECURSIVE query's name outside
// the recursive arms of a UNION reads the table of that name, so each of
// recursiveReadsTable that runs there answers the table's row; Check
// refuses every one.
func TestRecursiveCTEReadsTheTableOnClickHouse(t *testing.T) {
	x, err := chdb.Open("")
	require.NoError(t, err)
	t.Cleanup(func() { x.Close() })
	ctx := context.Background()
	require.NoError(t, x.Load(ctx, `CREATE TABLE secrets (v String) ENGINE = Memory`, nil))
	require.NoError(t, x.Load(ctx, `INSERT INTO secrets VALUES ('SECRET')`, nil))
	const q = `WITH RECURSIVE secrets AS (SELECT v FROM secrets) SELECT v FROM secrets`
	res, err := x.Read(ctx, q, nil)
	require.NoError(t, err, "%s", q)
	require.Equal(t, "[[SECRET]]", fmt.Sprint(res.Rows), "ClickHouse reads table secrets in the body")
	const anchor = `WITH RECURSIVE secrets AS (SELECT v FROM secrets UNION ALL SELECT 'x' AS v) SELECT v FROM secrets LIMIT 5`
	res, err = x.Read(ctx, anchor, nil)
	require.NoError(t, err, "%s", anchor)
	require.Contains(t, fmt.Sprint(res.Rows), "SECRET", "ClickHouse reads table secrets in the first arm")
	for _, q := range recursiveReadsTable {
		assert.Error(t, Check(q, testRules()), "Check(%q)", q)
	}
}
