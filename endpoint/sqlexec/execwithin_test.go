package sqlexec_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/internal/stmt"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
)

// TestExecWithinOnSQLite: a statement that would grow the database by
// more than Write.MaxBytes fails as it grows, with ErrWriteLimit, and
// the file grows by about the bound, not by what the statement asked for;
// the connection's own bound is back afterwards, so a later write of the
// same size succeeds.
func TestExecWithinOnSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	require.NoError(t, err)
	db.SetMaxOpenConns(1) // the bounded connection is the one every later write gets
	t.Cleanup(func() { db.Close() })
	mustExec(t, db, "CREATE TABLE seed (x INTEGER)")
	x := sqlexec.New(db, engine.SQLite)
	ctx := context.Background()
	fileSize := func() int64 {
		fi, err := os.Stat(path)
		require.NoError(t, err)
		return fi.Size()
	}
	before := fileSize()
	// 200 rows of 100 KB: 20 MB, under a bound of 2 MB.
	const big = "CREATE TABLE big AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 200) SELECT n, printf('%.*c', 100000, 'x') AS pad FROM r"
	for _, tx := range []bool{false, true} {
		err := x.Exec(ctx, []driver.Statement{stmt.New(big, nil)}, driver.Write{Tx: tx, MaxBytes: 2 << 20})
		require.ErrorIs(t, err, driver.ErrWriteLimit, "tx %v: 20 MB under a 2 MB bound", tx)
	}
	grew := fileSize() - before
	require.LessOrEqual(t, grew, int64(3<<20), "the file grew by")
	require.NoError(t, x.Exec(ctx, []driver.Statement{stmt.New("CREATE TABLE small AS SELECT printf('%.*c', 100000, 'x') AS pad", nil)}, driver.Write{MaxBytes: 2 << 20}), "100 KB under a 2 MB bound")
	require.NoError(t, x.Exec(ctx, []driver.Statement{stmt.New(big, nil)}, driver.Write{Tx: false}), "the same write unbounded after")
}
