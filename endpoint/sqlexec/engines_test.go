package sqlexec_test

import (
	"database/sql"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/executortest"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
)

// TestEngineConformance runs the Executor suite on PostgreSQL (pgx) and
// MySQL (go-sql-driver; MariaDB in CI), each check on a database of its
// own. An engine whose variable (scripts/engines env prints them) is unset
// is skipped, naming it.
func TestEngineConformance(t *testing.T) {
	for _, e := range []struct {
		name string
		env  string
		eng  engine.Engine
		open func(testing.TB) *sql.DB
	}{
		{"postgres", testdb.PostgresEnv, engine.PostgreSQL, testdb.Postgres},
		{"mysql", testdb.MySQLEnv, engine.MySQL, testdb.MySQL},
	} {
		t.Run(e.name, func(t *testing.T) {
			testdb.Require(t, e.env)
			executortest.Run(t, func(t *testing.T) driver.Executor {
				return sqlexec.New(e.open(t), e.eng)
			})
		})
	}
}
