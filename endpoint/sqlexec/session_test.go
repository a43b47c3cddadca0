package sqlexec_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOpenSessionInUTC: a pool from Open puts every connection in UTC
// whatever zone the server (here the DSN) starts sessions in, so that a
// Date value selects the same instants of a timestamptz (MySQL: TIMESTAMP)
// column as of the same instants stored as text. A pool opened as
// sql.Open does, in that zone, selects others: that is what Open prevents.
func TestOpenSessionInUTC(t *testing.T) {
	for _, c := range []struct {
		name, env, driver string
		e                 engine.Engine
		dsn               func(testing.TB) string
		zoneQuery, utc    string
		ddl               string
	}{
		{"postgres", testdb.PostgresEnv, "pgx", engine.PostgreSQL, testdb.PostgresDSN, "SHOW TIME ZONE", "UTC",
			"CREATE TABLE t (at timestamptz)"},
		{"mysql", testdb.MySQLEnv, "mysql", engine.MySQL, testdb.MySQLDSN, "SELECT @@session.time_zone", "+00:00",
			"CREATE TABLE t (at TIMESTAMP NULL)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			testdb.Require(t, c.env)
			// One database, loaded in UTC, read in another zone.
			base := c.dsn(t)
			loader, err := sql.Open(c.driver, zone(t, c.name, base, false))
			require.NoError(t, err)
			defer loader.Close()
			for _, q := range []string{c.ddl,
				"INSERT INTO t VALUES ('2025-04-30 23:59:59'), ('2025-05-01 00:00:00'), ('2025-05-01 03:00:00'), ('2025-05-01 12:00:00'), ('2025-05-02 00:00:00')"} {
				_, err := loader.Exec(q)
				require.NoError(t, err, "%s", q)
			}
			zoned := zone(t, c.name, base, true)

			db, err := sqlexec.Open(c.driver, zoned, c.e)
			require.NoError(t, err)
			defer db.Close()
			// Several connections at once, each set up on its own.
			var wg sync.WaitGroup
			conns := make([]*sql.Conn, 4)
			for i := range conns {
				conns[i], err = db.Conn(context.Background())
				require.NoError(t, err)
			}
			for _, conn := range conns {
				wg.Go(func() {
					var z string
					err := conn.QueryRowContext(context.Background(), c.zoneQuery).Scan(&z)
					if assert.NoError(t, err, "a connection of Open is in zone %q (%v), want %s", z, err, c.utc) {
						assert.Equal(t, c.utc, z, "a connection of Open is in zone %q (%v), want %s", z, err, c.utc)
					}
				})
			}
			wg.Wait()
			for _, conn := range conns {
				conn.Close()
			}

			day := variable.Timestamp{Time: time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC), DateOnly: true}
			next := variable.Timestamp{Time: time.Date(2025, 5, 2, 0, 0, 0, 0, time.UTC), DateOnly: true}
			count := func(db *sql.DB) int64 {
				b := []byte("SELECT count(*) AS n FROM t WHERE at >= ")
				args := make([]any, 2)
				for i, v := range []any{day, next} {
					arg, typ, err := c.e.Arg(v)
					require.NoError(t, err)
					if i > 0 {
						b = append(b, " AND at < "...)
					}
					args[i] = arg
					b = c.e.Marker(b, i+1, typ)
				}
				res, err := sqlexec.New(db, c.e).Read(context.Background(), string(b), args)
				require.NoError(t, err)
				return res.Rows[0][0].(int64)
			}
			assert.Equal(t, int64(3), count(db), "through Open")
			plain, err := sql.Open(c.driver, zoned)
			require.NoError(t, err)
			defer plain.Close()
			assert.NotEqual(t, int64(3), count(plain), "a pool in another zone answered as in UTC: the test shows nothing")
		})
	}
}

// zone returns dsn with its sessions starting in UTC, or in a zone other
// than UTC when other.
func zone(t *testing.T, name, dsn string, other bool) string {
	t.Helper()
	my, pg := "'+00:00'", "UTC"
	if other {
		my, pg = "'-07:00'", "America/Los_Angeles"
	}
	if name == "mysql" {
		cfg, err := mysql.ParseDSN(dsn)
		require.NoError(t, err)
		if cfg.Params == nil {
			cfg.Params = map[string]string{}
		}
		cfg.Params["time_zone"] = my
		return cfg.FormatDSN()
	}
	if !strings.HasPrefix(dsn, "postgres") {
		return dsn + " timezone=" + pg
	}
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	q := u.Query()
	q.Set("timezone", pg)
	u.RawQuery = q.Encode()
	return u.String()
}

// TestOpenWithoutSession: on an engine without session statements, Open
// is sql.Open.
func TestOpenWithoutSession(t *testing.T) {
	db, err := sqlexec.Open("sqlite", ":memory:", engine.SQLite)
	require.NoError(t, err)
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT 1").Scan(&n); err != nil || n != 1 {
		t.Fatalf("SELECT 1 = %d, %v", n, err)
	}
	if _, err := sqlexec.Open("no-such-driver", "", engine.PostgreSQL); err == nil {
		t.Fatal("an unknown driver opened")
	}
}

// TestConnectorRunsSession: each new connection runs the engine's session
// statements before use; a connection whose statement fails is closed and
// its error returned, naming the statement.
func TestConnectorRunsSession(t *testing.T) {
	fc := &fakeConnector{}
	db := sql.OpenDB(sqlexec.Connector(fc, engine.PostgreSQL))
	defer db.Close()
	require.NoError(t, db.Ping())
	got := fc.executed()
	require.Len(t, got, 1, "session statements run: %q", got)
	require.Equal(t, "SET TIME ZONE 'UTC'", got[0], "session statements run: %q", got)
	db.Close()
	assert.True(t, fc.closed, "closing the pool did not close the connector")

	fc = &fakeConnector{fail: errors.New("permission denied")}
	db = sql.OpenDB(sqlexec.Connector(fc, engine.MySQL))
	defer db.Close()
	err := db.Ping()
	if err == nil || !strings.Contains(err.Error(), "permission denied") || !strings.Contains(err.Error(), "SET time_zone") {
		t.Fatalf("Ping = %v, want the session statement's error", err)
	}
	assert.Equal(t, 0, fc.open)
	if c := sqlexec.Connector(fc, engine.SQLite); c != driver.Connector(fc) {
		t.Error("an engine without session statements got a wrapped connector")
	}
}

// fakeConnector opens fakeConns that record what they execute.
type fakeConnector struct {
	mu     sync.Mutex
	fail   error
	stmts  []string
	open   int
	closed bool
}

func (c *fakeConnector) Connect(context.Context) (driver.Conn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.open++
	return &fakeConn{c: c}, nil
}

func (c *fakeConnector) Driver() driver.Driver { return nil }

func (c *fakeConnector) Close() error { c.closed = true; return nil }

func (c *fakeConnector) executed() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.stmts...)
}

type fakeConn struct{ c *fakeConnector }

func (f *fakeConn) ExecContext(_ context.Context, q string, _ []driver.NamedValue) (driver.Result, error) {
	f.c.mu.Lock()
	defer f.c.mu.Unlock()
	f.c.stmts = append(f.c.stmts, q)
	if f.c.fail != nil {
		return nil, f.c.fail
	}
	return driver.RowsAffected(0), nil
}

func (f *fakeConn) Prepare(string) (driver.Stmt, error) {
	return nil, errors.New("fake: no statements")
}

func (f *fakeConn) Close() error {
	f.c.mu.Lock()
	defer f.c.mu.Unlock()
	f.c.open--
	return nil
}

func (f *fakeConn) Begin() (driver.Tx, error) { return nil, errors.New("fake: no transactions") }

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
