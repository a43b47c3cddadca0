package sqlstore

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	epstoretest "github.com/endpointkit/endpointkit/endpoint/storetest"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	varstoretest "github.com/endpointkit/endpointkit/variable/storetest"
	"github.com/stretchr/testify/require"
)

// engines are the real servers the store's conformance suites run on, each
// named by an environment variable that scripts/engines env prints; an
// engine whose variable is unset is skipped, naming it.
var engines = []struct {
	name    string
	env     string
	dialect engine.Engine
	open    func(testing.TB) *sql.DB
}{
	{"postgres", testdb.PostgresEnv, engine.PostgreSQL, testdb.Postgres},
	{"mysql", testdb.MySQLEnv, engine.MySQL, testdb.MySQL},
}

// openEngine returns a migrated Store on a fresh database of the engine.
func openEngine(t testing.TB, d engine.Engine, open func(testing.TB) *sql.DB) *Store {
	t.Helper()
	s, err := New(open(t), d)
	require.NoError(t, err)
	require.NoError(t, s.Migrate(context.Background()), "Migrate on %s", d.Name())
	return s
}

// TestEngineConformance runs the variable and endpoint store suites on
// PostgreSQL and MySQL (MariaDB in CI), each check on a database of its
// own. The engines and the suites run in parallel (their databases are
// apart): on MariaDB the suites mostly wait for its DDL, each check's
// CREATE DATABASE and migrations.
func TestEngineConformance(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			testdb.Require(t, e.env)
			t.Run("variables", func(t *testing.T) {
				t.Parallel()
				varstoretest.Run(t, func(t *testing.T) variable.Store { return openEngine(t, e.dialect, e.open).Variables() })
			})
			t.Run("endpoints", func(t *testing.T) {
				t.Parallel()
				epstoretest.Run(t, func(t *testing.T) driver.Store { return openEngine(t, e.dialect, e.open).Endpoints() })
			})
			t.Run("result cache", func(t *testing.T) {
				t.Parallel()
				epstoretest.RunResultCache(t, func(t *testing.T) driver.ResultCache {
					return openEngine(t, e.dialect, e.open).ResultCache(CacheOptions{})
				})
			})
			t.Run("run log", func(t *testing.T) {
				t.Parallel()
				epstoretest.RunRunLog(t, func(t *testing.T, maxAge time.Duration, max int, now func() time.Time) driver.RunLog {
					return openEngine(t, e.dialect, e.open).RunLog(RunLogOptions{MaxAge: maxAge, MaxPerEndpoint: max, Now: now})
				})
			})
		})
	}
}
