package sqlstore

import (
	"context"
	"database/sql"
	"sync"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/budget"
	"github.com/endpointkit/endpointkit/endpoint/budget/budgettest"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
)

// sharedCounters returns a newCounter for budgettest whose calls within
// one test return Counters of distinct Stores on one database, as two
// processes would hold: open makes the database on the first call, again
// opens another Store on it.
func sharedCounters(open func(t *testing.T) *sql.DB, again func(t *testing.T, db *sql.DB) *sql.DB, d engine.Engine) func(t *testing.T) budget.Counter {
	var mu sync.Mutex
	dbs := map[string]*sql.DB{}
	return func(t *testing.T) budget.Counter {
		mu.Lock()
		db, ok := dbs[t.Name()]
		if !ok {
			db = open(t)
			dbs[t.Name()] = db
		} else {
			db = again(t, db)
		}
		mu.Unlock()
		s, err := New(db, d)
		require.NoError(t, err)
		require.NoError(t, s.Migrate(context.Background()))
		return s.Counter()
	}
}

// TestCounterConformance runs budgettest on the SQL counter: on SQLite (a
// file two pools open), PostgreSQL and MySQL (MariaDB) when their servers
// are named. The engines run in parallel, with the package's other
// parallel tests (each on a database of its own): the suite mostly sleeps
// through its windows.
func TestCounterConformance(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		paths := sync.Map{}
		budgettest.Run(t, sharedCounters(func(t *testing.T) *sql.DB {
			p := tempFile(t)
			_, db := openFile(t, p)
			paths.Store(db, p)
			return db
		}, func(t *testing.T, db *sql.DB) *sql.DB {
			p, _ := paths.Load(db)
			_, other := openFile(t, p.(string))
			return other
		}, engine.SQLite), budgettest.Options{Shared: true})
	})
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			testdb.Require(t, e.env)
			budgettest.Run(t, sharedCounters(func(t *testing.T) *sql.DB { return e.open(t) },
				func(t *testing.T, db *sql.DB) *sql.DB { return db }, e.dialect), budgettest.Options{Shared: true})
		})
	}
}

// TestCounterExpires: a Take deletes the rows that weigh nothing, once per
// CounterExpiry.
func TestCounterExpires(t *testing.T) {
	s := openMemory(t)
	c := s.Counter()
	ctx := context.Background()
	_, err := c.Take(ctx, "old", 1, 1000)
	require.Error(t, err, "a window under a millisecond")
	_, err = s.db.Exec(`INSERT INTO ` + countersTable + ` (counter_key, window_ms, start_ms, prev, curr, ok, expires_ms, info) VALUES ('x', 1000, 0, 0, 1, 1, 2000, 0)`)
	require.NoError(t, err)
	d, err := c.Take(ctx, "new", 1, 60_000_000_000)
	require.NoError(t, err)
	require.True(t, d.Allowed)
	var n int
	require.NoError(t, s.db.QueryRow(`SELECT COUNT(*) FROM `+countersTable).Scan(&n))
	require.Equal(t, 1, n, "the expired row is deleted, the new one kept")
	require.Zero(t, c.ExpiryFailures())
}

// BenchmarkCounterTake is the cost of counting one run in a budget (one
// Take; a run costs one to five: the project's minute and hour, the key's
// minute and hour, a token's minute), over 1,000 keys, in this process
// (memory) and in each SQL store (a shared counter). Run with
//
//	go test ./endpoint/sqlstore -run '^$' -bench CounterTake -benchtime 2s
func BenchmarkCounterTake(b *testing.B) {
	b.Run("memory", func(b *testing.B) { budgettest.BenchTake(b, budget.NewMemory(budget.MemoryConfig{})) })
	b.Run("sqlite", func(b *testing.B) {
		s, _ := openFile(b, tempFile(b))
		budgettest.BenchTake(b, s.Counter())
	})
	for _, e := range engines {
		b.Run(e.name, func(b *testing.B) {
			testdb.Require(b, e.env)
			budgettest.BenchTake(b, openEngine(b, e.dialect, e.open).Counter())
		})
	}
}
