//go:build chdb

package chdb

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/internal/stmt"
	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWithClause: where a statement's SETTINGS clause goes.
func TestWithClause(t *testing.T) {
	const l = "max_execution_time = 5"
	for _, c := range []struct{ query, want string }{
		{"SELECT 1", "SELECT 1 SETTINGS " + l},
		{"SELECT 1;  ", "SELECT 1 SETTINGS " + l},
		{"SELECT 1 -- done\n", "SELECT 1 SETTINGS " + l},
		{"SELECT 1 # done", "SELECT 1 SETTINGS " + l},
		{"SELECT 'a;b' /* c */ ;", "SELECT 'a;b' SETTINGS " + l},
		{"SELECT 1 SETTINGS readonly = 1", "SELECT 1 SETTINGS readonly = 1 SETTINGS " + l},
		{"CREATE TABLE t ENGINE = MergeTree ORDER BY tuple() AS SELECT 1", "CREATE TABLE t ENGINE = MergeTree ORDER BY tuple() AS SELECT 1 SETTINGS " + l},
		{"CREATE TABLE t (x Int64) ENGINE = MergeTree ORDER BY (x)", "CREATE TABLE t (x Int64) ENGINE = MergeTree ORDER BY (x) SETTINGS " + l},
		{"DROP TABLE IF EXISTS `t`", "DROP TABLE IF EXISTS `t` SETTINGS " + l},
		{"EXCHANGE TABLES a AND b", "EXCHANGE TABLES a AND b SETTINGS " + l},
		{"CREATE TABLE view AS SELECT 1 AS view", "CREATE TABLE view AS SELECT 1 AS view SETTINGS " + l},
		{"ALTER TABLE t MODIFY COLUMN x String", "ALTER TABLE t MODIFY COLUMN x String SETTINGS " + l},
		{"CREATE TABLE t ENGINE = MergeTree ORDER BY x AS SELECT 1 AS x FROM view", "CREATE TABLE t ENGINE = MergeTree ORDER BY x AS SELECT 1 AS x FROM view SETTINGS " + l},
		{"INSERT INTO t (x) VALUES (1), (2)", "INSERT INTO t (x) SETTINGS " + l + " VALUES (1), (2)"},
		{"insert into t values ('select (', 'values')", "insert into t SETTINGS " + l + " values ('select (', 'values')"},
		{"INSERT INTO t FORMAT TabSeparated 1\n", "INSERT INTO t SETTINGS " + l + " FORMAT TabSeparated 1\n"},
		{"INSERT INTO t (x) SELECT 1 UNION ALL SELECT 2", "INSERT INTO t (x) SETTINGS " + l + " SELECT 1 UNION ALL SELECT 2"},
		{"INSERT INTO t (SELECT 1)", "INSERT INTO t SETTINGS " + l + " (SELECT 1)"},
		{"INSERT INTO t (x) WITH w AS (SELECT 1) SELECT * FROM w", "INSERT INTO t (x) SETTINGS " + l + " WITH w AS (SELECT 1) SELECT * FROM w"},
		{"WITH w AS (SELECT 1 AS x) INSERT INTO t (x) SELECT x FROM w", "WITH w AS (SELECT 1 AS x) INSERT INTO t (x) SETTINGS " + l + " SELECT x FROM w"},
		{"INSERT INTO FUNCTION file('f', 'CSV') SELECT 1", "INSERT INTO FUNCTION file('f', 'CSV') SETTINGS " + l + " SELECT 1"},
		{"INSERT INTO t SETTINGS async_insert = 0 VALUES (1)", "INSERT INTO t SETTINGS async_insert = 0, " + l + " VALUES (1)"},
		{"INSERT INTO t SELECT * FROM s WHERE x IN (SELECT 1)", "INSERT INTO t SETTINGS " + l + " SELECT * FROM s WHERE x IN (SELECT 1)"},
	} {
		got, ok := withClause(c.query, l)
		if assert.Equal(t, c.want, got, "withClause(%q) = %q, %v; want %q, true", c.query, got, ok, c.want) {
			assert.True(t, ok, "withClause(%q) = %q, %v; want %q, true", c.query, got, ok, c.want)
		}
	}
	for _, q := range []string{"USE db", "set max_threads = 1", "SYSTEM FLUSH LOGS", "", "  -- nothing",
		"CREATE VIEW v AS SELECT 1", "CREATE OR REPLACE VIEW v AS SELECT 1", "CREATE MATERIALIZED VIEW m TO t AS SELECT x FROM s",
		"ATTACH VIEW v AS SELECT 1", "ALTER TABLE m MODIFY QUERY SELECT x FROM s"} {
		got, ok := withClause(q, l)
		if assert.Equal(t, q, got, "withClause(%q) = %q, %v; want it unchanged, false", q, got, ok) {
			assert.False(t, ok, "withClause(%q) = %q, %v; want it unchanged, false", q, got, ok)
		}
	}
}

// TestLoadCarriesTheTimeLimit: a deadline reaches each statement of Load
// and Exec in the statement's own SETTINGS clause, which the engine reads
// (a slow statement stops at the limit), and no SET statement changes the
// session's max_execution_time around it (ClickHouse marks a setting a
// SET statement sent as changed, even back to its default).
func TestLoadCarriesTheTimeLimit(t *testing.T) {
	x := executor(t)
	changed := func() int64 {
		t.Helper()
		res, err := x.Read(context.Background(), "SELECT changed FROM system.settings WHERE name = 'max_execution_time'", nil)
		require.NoError(t, err)
		return res.Rows[0][0].(int64)
	}
	require.Equal(t, int64(0), changed(), "before: the session's max_execution_time is changed")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, q := range []string{
		"DROP TABLE IF EXISTS load_limit",
		"CREATE TABLE load_limit (x Int64) ENGINE = MergeTree ORDER BY (x)",
		"INSERT INTO load_limit (x) VALUES (1), (2) -- two",
		"INSERT INTO load_limit SELECT number FROM numbers(3);",
		"DROP TABLE IF EXISTS load_limit_copy",
		"CREATE TABLE load_limit_copy ENGINE = MergeTree ORDER BY tuple() AS SELECT * FROM load_limit",
		"CREATE TABLE IF NOT EXISTS load_limit_live AS load_limit_copy",
		"EXCHANGE TABLES load_limit_copy AND load_limit_live",
	} {
		require.NoError(t, x.Exec(ctx, []driver.Statement{stmt.New(q, nil)}, driver.Write{}), "%s", q)
	}
	res, err := x.Read(ctx, "SELECT count() AS n, sum(x) AS s FROM load_limit_live", nil)
	require.NoError(t, err)
	if got, want := res.Rows[0], []any{int64(5), int64(6)}; got[0] != want[0] || got[1] != want[1] {
		t.Errorf("the rows loaded: %v, want %v", got, want)
	}
	res, err = x.Read(ctx, "SELECT name, engine_full, create_table_query FROM system.tables WHERE name LIKE 'load\\_limit%' AND database = currentDatabase()", nil)
	require.NoError(t, err)
	require.Len(t, res.Rows, 3, "the tables")
	for _, row := range res.Rows {
		assert.NotContains(t, fmt.Sprint(row[1:]...), "max_execution_time", "the time limit is not table %s's setting", row[0])
	}
	// Nor a view's, which would keep it for every later read.
	require.NoError(t, x.Load(ctx, "CREATE OR REPLACE VIEW load_limit_view AS SELECT 1 AS x", nil))
	res, err = x.Read(ctx, "SELECT create_table_query FROM system.tables WHERE name = 'load_limit_view' AND database = currentDatabase()", nil)
	require.NoError(t, err)
	s := res.Rows[0][0].(string)
	assert.NotContains(t, s, "max_execution_time", "the time limit is not kept in the view")
	assert.Equal(t, int64(0), changed(), "a statement of its own set the session's max_execution_time (changed")

	// A statement slower than the deadline stops at it, in the engine: 8
	// blocks of 0.5 s each, 4 s, stopped after 1.
	short, cancel := context.WithTimeout(context.Background(), 900*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = x.Load(short, "INSERT INTO load_limit SELECT sleepEachRow(0.5) FROM numbers(8) SETTINGS max_block_size = 1", nil)
	if assert.ErrorIs(t, err, context.DeadlineExceeded, "error %v is not the engine's timeout", err) {
		assert.Contains(t, err.Error(), "TIMEOUT_EXCEEDED", "error %v is not the engine's timeout", err)
	}
	assert.LessOrEqual(t, time.Since(start), 3*time.Second, "the slow statement took")
	assert.Equal(t, int64(0), changed(), "a statement of its own set the session's max_execution_time (changed")
	for _, q := range []string{"DROP TABLE load_limit", "DROP TABLE load_limit_copy", "DROP TABLE load_limit_live", "DROP VIEW load_limit_view"} {
		assert.NoError(t, x.Load(context.Background(), q, nil), "%s", q)
	}
}

// FuzzWithClause: whatever the text, withClause does not panic, and the
// statement it returns is the text with the settings put in once (a start
// of the text, the clause, an end of it), or the text unchanged.
func FuzzWithClause(f *testing.F) {
	for _, s := range []string{"SELECT 1", "INSERT INTO t VALUES (1)", "INSERT INTO t SETTINGS a = 1 SELECT 2", "WITH x AS (SELECT 1) INSERT INTO t (SELECT * FROM x)",
		"USE db", "SELECT ')' -- (", "INSERT INTO t ((", "SELECT 'open", "/* c */ ;", "insert INSERT insert"} {
		f.Add(s)
	}
	const l = "max_execution_time = 7"
	f.Fuzz(func(t *testing.T, query string) {
		if strings.Contains(query, "max_execution_time") {
			return
		}
		got, ok := withClause(query, l)
		if !ok {
			require.Equal(t, query, got, "withClause")
			return
		}
		i := strings.Index(got, l)
		require.GreaterOrEqual(t, i, 0, "withClause(%q) = %q: the settings not there once", query, got)
		require.Equal(t, 1, strings.Count(got, l), "withClause(%q) = %q: the settings not there once", query, got)
		before, after := got[:i], got[i+len(l):]
		kept := false
		for _, sep := range []string{" SETTINGS ", "SETTINGS ", ", "} {
			if p, ok := strings.CutSuffix(before, sep); ok && p != "" && strings.HasPrefix(query, p) {
				kept = true
			}
		}
		require.True(t, kept, "withClause(%q) = %q: the text around the settings changed", query, got)
		require.True(t, strings.HasSuffix(query, strings.TrimPrefix(after, " ")), "withClause(%q) = %q: the text around the settings changed", query, got)
	})
}

// TestRunClauseLeavesOutTheSession: while the session holds what Open put
// it in, a run's SETTINGS clause carries only what is the run's own (its
// row bound, its time limit, readonly); once it may not, the clause
// carries every setting, as the session would have it.
func TestRunClauseLeavesOutTheSession(t *testing.T) {
	x := executor(t)
	lean := x.withSettings("SELECT 1", 5*time.Second, driver.Bounds{MaxRows: 10}, true)
	assert.Equal(t, "SELECT 1 SETTINGS max_result_rows = 10, result_overflow_mode = 'break', optimize_move_to_prewhere = 0, max_execution_time = 5, readonly = 1", lean, "kept session")
	assert.Equal(t, "SELECT 1 SETTINGS optimize_move_to_prewhere = 0, readonly = 1", x.withSettings("SELECT 1", 0, driver.Bounds{}, true), "kept session, no bounds")
	full := x.withSettings("SELECT 1", 5*time.Second, driver.Bounds{MaxRows: 10}, false)
	for _, sub := range []string{"max_memory_usage = 1073741824", "max_bytes_before_external_group_by = 536870912",
		"output_format_binary_write_json_as_string = 1", "session_timezone = 'UTC'", "max_execution_time = 5", "readonly = 1"} {
		assert.Contains(t, full, sub, "session not kept")
	}
	assert.True(t, strings.HasSuffix(full, "readonly = 1"), "readonly comes last: %q", full)
}

// sessionSettings is what a run reads of the settings Open puts the
// session in.
const sessionSettings = "SELECT getSetting('max_memory_usage') AS m, getSetting('max_bytes_before_external_group_by') AS g, " +
	"getSetting('session_timezone') AS z, getSetting('readonly') AS r, toTypeName(CAST('{\"a\":1}', 'JSON')) AS j, CAST('{\"a\":1}', 'JSON') AS v"

// wantSession checks that a run has the settings Open put the session in.
func wantSession(t *testing.T, x *Executor, when string) {
	t.Helper()
	res, err := x.Query(context.Background(), stmt.New(sessionSettings, nil), driver.Bounds{Timeout: time.Minute})
	require.NoError(t, err, "%s", when)
	got, want := fmt.Sprint(res.Rows[0]), fmt.Sprint([]any{int64(DefaultMaxMemoryUsage), int64(DefaultMaxBytesBeforeExternalGroupBy), "UTC", int64(1), "JSON", `{"a":1}`})
	assert.Equal(t, want, got, "%s: a run's settings are", when)
}

// TestRunCannotEscapeTheSession: a run cannot change the session whose
// settings its SETTINGS clause leaves out: a SET sent as a run and a run
// whose own SETTINGS clause raises a bound are refused, and the run after
// them has the session's settings; a SET of the host's (Load) that
// changes one of them makes the runs after it carry every setting in
// their clause, until the session holds them again.
func TestRunCannotEscapeTheSession(t *testing.T) {
	x := executor(t)
	ctx := context.Background()
	wantSession(t, x, "at first")
	x.mu.Lock()
	kept := x.kept
	x.mu.Unlock()
	require.True(t, kept, "the session opened holds its settings: kept = false")
	for _, q := range []string{
		"SET readonly = 0",
		"SET max_memory_usage = 0",
		"SELECT 1 AS n SETTINGS max_memory_usage = 0",
		"SELECT 1 AS n SETTINGS readonly = 0",
		"SELECT 1 AS n SETTINGS session_timezone = 'Asia/Tokyo'",
		"SELECT 1 AS n; SET max_memory_usage = 0",
	} {
		_, err := x.Query(ctx, stmt.New(q, nil), driver.Bounds{})
		assert.Error(t, err, "%s: got no error, want one", q)
		wantSession(t, x, "after "+q)
	}

	for _, set := range []string{
		"SET max_memory_usage = 0",
		"SET max_bytes_before_external_group_by = 0",
		"SET session_timezone = 'Asia/Tokyo'",
		"SET output_format_binary_write_json_as_string = 0",
	} {
		require.NoError(t, x.Load(ctx, set, nil), "%s", set)
		x.mu.Lock()
		kept := x.kept
		x.mu.Unlock()
		assert.False(t, kept, "%s: the session holds its settings: kept = true", set)
		wantSession(t, x, "after the host's "+set)
		restore := "SET " + strings.TrimPrefix(set, "SET ")[:strings.Index(strings.TrimPrefix(set, "SET "), " =")] + " = "
		for _, s := range x.session {
			if strings.HasPrefix(set, "SET "+s.Name+" =") {
				restore += settingValue(s.Value)
			}
		}
		require.NoError(t, x.Load(ctx, restore, nil), "%s", restore)
		x.mu.Lock()
		kept = x.kept
		x.mu.Unlock()
		assert.True(t, kept, "%s: the session holds its settings again: kept = false", restore)
	}
}

// TestSessionChangesWhileRunsRun: runs that run while the host changes
// the session and back have the session's settings, each of them.
func TestSessionChangesWhileRunsRun(t *testing.T) {
	x := executor(t)
	ctx := context.Background()
	done := make(chan struct{})
	errs := make(chan error, 1)
	go func() {
		defer close(errs)
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			set := "SET max_memory_usage = 0, session_timezone = 'Asia/Tokyo'"
			if i%2 == 1 {
				set = "SET max_memory_usage = 1073741824, session_timezone = 'UTC'"
			}
			if err := x.Load(ctx, set, nil); err != nil {
				errs <- err
				return
			}
		}
	}()
	for range 100 {
		wantSession(t, x, "while the session changes")
	}
	close(done)
	err := <-errs
	require.NoError(t, err)
	require.NoError(t, x.Load(ctx, "SET max_memory_usage = 1073741824, session_timezone = 'UTC'", nil))
}

// TestOtherTenantsRowsNeverReachAnError: ClickHouse moved a condition of
// the query's WHERE into the PREWHERE of the scoped table's read, ahead of
// the tenant's condition (optimize_move_to_prewhere; the tenant column
// leads the primary key, whose conditions go last), so that the query's
// expressions ran on every project's rows: toInt64(event) failed on
// project 2's "x" and the 400 answered to project 1 said "Cannot parse
// string 'x'", and whether a run failed told whether another project held
// a value (intDiv(1, n - 1)). The engine's guard turns the move off: the
// tenant's condition filters the rows first.
func TestOtherTenantsRowsNeverReachAnError(t *testing.T) {
	x := executor(t)
	ctx := context.Background()
	require.NoError(t, x.Load(ctx, `CREATE TABLE tenant_errors (project_id String, event String, n Int64) ENGINE = MergeTree ORDER BY (project_id, n)`, nil))
	t.Cleanup(func() { _ = x.Load(context.Background(), `DROP TABLE IF EXISTS tenant_errors`, nil) })
	require.NoError(t, x.Load(ctx, `INSERT INTO tenant_errors VALUES ('1', '7', 7), ('1', '13', 13), ('2', 'x', 1), ('2', 'y', 0)`, nil))
	policy, err := access.NewStatic(access.Rules{Tables: []access.Table{{Name: "tenant_errors", TenantColumn: "project_id"}}}, nil)
	require.NoError(t, err)
	svc, err := endpoint.New(endpoint.Config{Endpoints: memstore.New(), Variables: variable.NewMemoryStore(), Executor: x, Access: policy})
	require.NoError(t, err)
	for name, sql := range map[string]string{
		"parse":    "SELECT count() AS c FROM tenant_errors WHERE toInt64(event) > 0",
		"uuid":     "SELECT count() AS c FROM tenant_errors WHERE toUUID(concat(event, '0000000-0000-0000-0000-000000000000')) IS NOT NULL AND toInt64(event) > 0",
		"division": "SELECT count() AS c FROM tenant_errors WHERE intDiv(1, n - 1) >= 0 AND intDiv(1, n) >= 0",
	} {
		_, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: name, Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: sql}})
		require.NoError(t, err, "%s", sql)
		res, err := svc.Run(ctx, "1", name, endpoint.RunRequest{})
		if assert.NoError(t, err, "%s: project 1's run met project 2's rows", name) {
			assert.Equal(t, [][]any{{int64(2)}}, res.Results, "%s", name)
		}
	}
}
