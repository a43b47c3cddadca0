package sqlexec_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/internal/stmt"
	"github.com/endpointkit/endpointkit/sql/engine"
)

// TestExplain: Explain answers the engine's plan of a query, arguments
// bound, without running it, and refuses any statement but a query, as
// Query does: the EXPLAIN is the executor's own.
func TestExplain(t *testing.T) {
	db := tableTDB(t)
	_, err := db.Exec("CREATE INDEX t_id ON t (id)")
	require.NoError(t, err)
	x := sqlexec.New(db, engine.SQLite)
	ctx := context.Background()
	res, err := x.Explain(ctx, stmt.New("SELECT name FROM t WHERE id > ? AND id < ?", []any{int64(1), int64(3)}))
	require.NoError(t, err)
	require.Len(t, res.Columns, 4)
	require.NotEmpty(t, res.Rows)
	assert.Contains(t, res.Rows[len(res.Rows)-1][3], "SEARCH t USING INDEX t_id")

	for _, q := range []string{"DROP TABLE t", "DELETE FROM t", "PRAGMA query_only = 0", "ANALYZE SELECT 1"} {
		_, err := x.Explain(ctx, stmt.New(q, nil))
		assert.ErrorContains(t, err, "begins with SELECT", q)
	}
	var n int
	require.NoError(t, db.QueryRow("SELECT count(*) FROM t").Scan(&n))
	assert.Equal(t, 3, n)
}
