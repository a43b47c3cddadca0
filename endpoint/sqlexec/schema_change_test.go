package sqlexec_test

import (
	"context"
	"database/sql"
	"slices"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/internal/stmt"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
)

// TestSchemaChangeUnderPreparedStatement: a statement kept prepared keeps
// working after its table changes shape, on every engine: SQLite prepares
// it again by itself, PostgreSQL refuses the old plan once and the
// Executor prepares it anew. A table that is gone fails the run, and the
// next run after it is back works. PostgreSQL and MySQL run when their
// variables are set (scripts/engines env).
func TestSchemaChangeUnderPreparedStatement(t *testing.T) {
	for _, e := range []struct {
		name string
		env  string
		eng  engine.Engine
		open func(testing.TB) *sql.DB
	}{
		{"sqlite", "", engine.SQLite, func(t testing.TB) *sql.DB { return openDB(t.(*testing.T)) }},
		{"postgres", testdb.PostgresEnv, engine.PostgreSQL, testdb.Postgres},
		{"mysql", testdb.MySQLEnv, engine.MySQL, testdb.MySQL},
	} {
		t.Run(e.name, func(t *testing.T) {
			if e.env != "" {
				testdb.Require(t, e.env)
			}
			db := e.open(t)
			x := sqlexec.New(db, e.eng)
			t.Cleanup(func() { x.Close() })
			ctx := context.Background()
			exec := func(q string) {
				t.Helper()
				_, err := db.ExecContext(ctx, q)
				require.NoError(t, err, "%s", q)
			}
			columns := func() []string {
				t.Helper()
				res, err := x.Query(ctx, stmt.New("SELECT * FROM shape ORDER BY a", nil), driver.Bounds{})
				require.NoError(t, err, "query")
				return res.Columns
			}
			exec("CREATE TABLE shape (a INTEGER)")
			exec("INSERT INTO shape VALUES (1)")
			got := columns()
			require.True(t, slices.Equal(got, []string{"a"}), "columns %v", got)
			exec("ALTER TABLE shape ADD COLUMN b INTEGER")
			if got := columns(); !slices.Equal(got, []string{"a", "b"}) {
				t.Fatalf("after ADD COLUMN: columns %v", got)
			}
			exec("DROP TABLE shape")
			_, err := x.Query(ctx, stmt.New("SELECT * FROM shape ORDER BY a", nil), driver.Bounds{})
			require.Error(t, err, "a query of a dropped table ran")
			exec("CREATE TABLE shape (a INTEGER, c VARCHAR(10))")
			if got := columns(); !slices.Equal(got, []string{"a", "c"}) {
				t.Fatalf("after re-creating: columns %v", got)
			}
		})
	}
}
