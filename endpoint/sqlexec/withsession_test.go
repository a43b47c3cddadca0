package sqlexec_test

import (
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
)

// TestWithSession: the host's session statements run on every connection
// after the engine's, on PostgreSQL (work_mem) and MySQL/MariaDB
// (tmp_table_size, max_heap_table_size), and on SQLite, which has no
// session statements of its own; a failing one fails the connection
// naming it.
func TestWithSession(t *testing.T) {
	check := func(t *testing.T, driverName, dsn string, e engine.Engine, set []string, q, want string) {
		t.Helper()
		db, err := sqlexec.Open(driverName, dsn, e, sqlexec.WithSession(set...))
		require.NoError(t, err)
		defer db.Close()
		db.SetMaxOpenConns(2)
		for i := 0; i < 3; i++ {
			var got string
			err := db.QueryRow(q).Scan(&got)
			require.NoError(t, err, "%s = %q, %v; want %q", q, got, err, want)
			require.Equal(t, want, got, "%s = %q, %v; want %q", q, got, err, want)
		}
		bad, err := sqlexec.Open(driverName, dsn, e, sqlexec.WithSession("SET no_such_setting_xyz = 1"))
		require.NoError(t, err)
		defer bad.Close()
		if err := bad.Ping(); err == nil || !strings.Contains(err.Error(), "no_such_setting_xyz") {
			t.Fatalf("a failing session statement: %v", err)
		}
	}
	t.Run("sqlite", func(t *testing.T) {
		check(t, "sqlite", fileDSN(t), engine.SQLite, []string{"PRAGMA cache_size = -1000"}, "PRAGMA cache_size", "-1000")
	})
	t.Run("postgres", func(t *testing.T) {
		check(t, "pgx", testdb.PostgresDSN(t), engine.PostgreSQL, []string{"SET work_mem = '8MB'"}, "SHOW work_mem", "8MB")
	})
	t.Run("mysql", func(t *testing.T) {
		check(t, "mysql", testdb.MySQLDSN(t), engine.MySQL,
			[]string{"SET SESSION tmp_table_size = 8388608", "SET SESSION max_heap_table_size = 8388608"},
			"SELECT CONCAT(@@tmp_table_size, '/', @@max_heap_table_size)", "8388608/8388608")
	})
}
