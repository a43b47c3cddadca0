//go:build chdb

package equivalence

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/chdb"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// With -tags chdb the corpus also runs on chDB, ClickHouse in the process,
// which TestMain closes once the tests are done: left open, a process
// built with -race hangs on exit.
func init() {
	targets = append(targets, target{d: clickhouseDialect, direct: chdbDatabase})
	closeEngines = append(closeEngines, func() {
		if chdbEngine.x != nil {
			chdbEngine.x.Close()
		}
	})
}

// The process's one chDB: it runs one engine per process.
var chdbEngine struct {
	once sync.Once
	x    *chdb.Executor
	err  error
	// mu keeps a database's USE and its statement together.
	mu sync.Mutex
	// databases counts the databases chdbDatabase made, naming each.
	databases atomic.Int64
	// current is the session's database (USE), "" when unknown; mu is
	// held.
	current string
}

// openChDB starts chDB in the time zone clickhouseZone (chDB's default
// session zone is the process's, TZ), as a host's server may run, and
// checks that it took it.
func openChDB() (*chdb.Executor, error) {
	old, had := os.LookupEnv("TZ")
	os.Setenv("TZ", clickhouseZone)
	defer func() {
		if had {
			os.Setenv("TZ", old)
		} else {
			os.Unsetenv("TZ")
		}
	}()
	x, err := chdb.Open("")
	if err != nil {
		return nil, err
	}
	res, err := x.Read(context.Background(), "SELECT serverTimezone() AS zone", nil)
	if err != nil {
		return nil, err
	}
	if len(res.Rows) != 1 || res.Rows[0][0] != clickhouseZone {
		return nil, fmt.Errorf("chDB runs in %v, want %s", res.Rows, clickhouseZone)
	}
	return x, nil
}

// chdbDatabase is the process's chDB on a fresh database for storage s,
// dropped when t ends. Each call has a database of its own: the matrices
// run at the same time (TestMain), each with its databases.
func chdbDatabase(t *testing.T, s storage) loadingExecutor {
	t.Helper()
	chdbEngine.once.Do(func() { chdbEngine.x, chdbEngine.err = openChDB() })
	require.NoError(t, chdbEngine.err)
	name := fmt.Sprintf("equivalence_%s_%d", s, chdbEngine.databases.Add(1))
	for _, q := range []string{"DROP DATABASE IF EXISTS " + name, "CREATE DATABASE " + name} {
		require.NoError(t, chdbEngine.x.Load(context.Background(), q, nil))
	}
	t.Cleanup(func() {
		chdbEngine.mu.Lock()
		defer chdbEngine.mu.Unlock()
		if chdbEngine.current == name {
			chdbEngine.current = ""
		}
		assert.NoError(t, chdbEngine.x.Load(context.Background(), "DROP DATABASE IF EXISTS "+name, nil), "dropping %s", name)
	})
	return &chdbIn{db: name}
}

// chdbIn is the chDB executor in one database: each statement runs after a
// USE of it, together.
type chdbIn struct{ db string }

func (c *chdbIn) Engine() engine.Engine { return chdbEngine.x.Engine() }

// use makes c's database the session's, unless it is already; chdbEngine.mu
// is held. A USE is a statement of the host's, which chdb.Executor.Load
// follows with a check of the session's settings: 23 ms a USE, against
// 1.5 for a SELECT 1, before every statement of the corpus, most of the
// chDB part's time.
func (c *chdbIn) use() error {
	if chdbEngine.current == c.db {
		return nil
	}
	chdbEngine.current = ""
	if err := chdbEngine.x.Load(context.Background(), "USE "+c.db, nil); err != nil {
		return err
	}
	chdbEngine.current = c.db
	return nil
}

func (c *chdbIn) Query(ctx context.Context, st driver.Statement, b driver.Bounds) (*driver.Result, error) {
	chdbEngine.mu.Lock()
	defer chdbEngine.mu.Unlock()
	if err := c.use(); err != nil {
		return nil, err
	}
	return chdbEngine.x.Query(ctx, st, b)
}

func (c *chdbIn) Exec(ctx context.Context, stmts []driver.Statement, tx driver.Write) error {
	chdbEngine.mu.Lock()
	defer chdbEngine.mu.Unlock()
	if err := c.use(); err != nil {
		return err
	}
	return chdbEngine.x.Exec(ctx, stmts, tx)
}

func (c *chdbIn) Load(ctx context.Context, query string, args []any) error {
	chdbEngine.mu.Lock()
	defer chdbEngine.mu.Unlock()
	if err := c.use(); err != nil {
		return err
	}
	return chdbEngine.x.Load(ctx, query, args)
}

// QueryRows is Query with the rows handed to sink as chDB streams them
// (chdb.Executor.QueryRows), in c's database: the streamed ways.
func (c *chdbIn) QueryRows(ctx context.Context, st driver.Statement, b driver.Bounds, sink driver.RowSink) (*driver.Result, error) {
	chdbEngine.mu.Lock()
	defer chdbEngine.mu.Unlock()
	if err := c.use(); err != nil {
		return nil, err
	}
	return chdbEngine.x.QueryRows(ctx, st, b, sink)
}
