package sqlexec_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/internal/stmt"
	"github.com/endpointkit/endpointkit/sql/engine"
)

// TestExecWithinOnSQLite: a statement that would grow the database by
// more than Write.MaxBytes fails as it grows, with ErrWriteLimit, and
// the file grows by about the bound, not by what the statement asked for;
// the connection's own bound is back afterwards, so a later write of the
// same size succeeds.
func TestExecWithinOnSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1) // the bounded connection is the one every later write gets
	t.Cleanup(func() { db.Close() })
	mustExec(t, db, "CREATE TABLE seed (x INTEGER)")
	x := sqlexec.New(db, engine.SQLite)
	ctx := context.Background()
	fileSize := func() int64 {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	before := fileSize()
	// 200 rows of 100 KB: 20 MB, under a bound of 2 MB.
	const big = "CREATE TABLE big AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 200) SELECT n, printf('%.*c', 100000, 'x') AS pad FROM r"
	for _, tx := range []bool{false, true} {
		err := x.Exec(ctx, []driver.Statement{stmt.New(big, nil)}, driver.Write{Tx: tx, MaxBytes: 2 << 20})
		if !errors.Is(err, driver.ErrWriteLimit) {
			t.Fatalf("tx %v: 20 MB under a 2 MB bound: %v", tx, err)
		}
	}
	if grew := fileSize() - before; grew > 3<<20 {
		t.Fatalf("the file grew by %d bytes under a 2 MB bound", grew)
	}
	if err := x.Exec(ctx, []driver.Statement{stmt.New("CREATE TABLE small AS SELECT printf('%.*c', 100000, 'x') AS pad", nil)}, driver.Write{MaxBytes: 2 << 20}); err != nil {
		t.Fatalf("100 KB under a 2 MB bound: %v", err)
	}
	if err := x.Exec(ctx, []driver.Statement{stmt.New(big, nil)}, driver.Write{Tx: false}); err != nil {
		t.Fatalf("the same write unbounded after: %v", err)
	}
}
