//go:build chdb

package chdb

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/internal/jsonrule"
	"github.com/endpointkit/endpointkit/internal/stmt"
	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestJSONRule checks the library's one JSON rule on ClickHouse, with the
// rows of the engine package's TestJSONRule (which runs on the
// database/sql engines): the text of a property is empty when it is
// missing, JSON null or "", the value of a string, and the JSON text of a
// number or of true and false; its number is the value of a JSON number
// and NULL for anything else, a number stored as text included.
func TestJSONRule(t *testing.T) {
	x := executor(t)
	ctx := context.Background()
	rows := jsonrule.Cases
	e := engine.ClickHouse
	for _, q := range []string{"DROP TABLE IF EXISTS json_rule", "CREATE TABLE json_rule (id Int64, p Nullable(String)) ENGINE = MergeTree ORDER BY id"} {
		require.NoError(t, x.Exec(ctx, []driver.Statement{stmt.New(q, nil)}, driver.Write{Tx: false}))
	}
	for i, r := range rows {
		b := placeholder.NewBuilder(e)
		b.WriteString("INSERT INTO json_rule VALUES (")
		b.Bind(int64(i))
		b.WriteString(", ")
		if r.JSON == nil {
			b.WriteString("NULL")
		} else {
			b.Bind(r.JSON)
		}
		b.WriteString(")")
		require.NoError(t, x.Exec(ctx, []driver.Statement{stmt.New(b.SQL(), b.Args())}, driver.Write{Tx: false}))
	}
	b := placeholder.NewBuilder(e)
	b.WriteString("SELECT ")
	e.JSONText(b, "p", "k")
	b.WriteString(" AS text, ")
	e.JSONNumber(b, "p", "k")
	b.WriteString(" AS num FROM json_rule ORDER BY id")
	res, err := x.Query(ctx, stmt.New(b.SQL(), b.Args()), driver.Bounds{})
	require.NoError(t, err, "%v", b.SQL())
	require.Len(t, res.Rows, len(rows))
	for i, r := range rows {
		got, want := res.Rows[i][0], r.Text
		assert.Equal(t, want, got, "text of %v: res.Rows[i][0]", r.JSON)
		if got, want := res.Rows[i][1], r.Num; !reflect.DeepEqual(got, want) {
			t.Errorf("number of %v: res.Rows[i][1] = %+v, want %+v", r.JSON, got, want)
		}
	}
	got, want := res.Types, ([]string{"String", "Nullable(Float64)"})
	assert.Equal(t, want, got, "the text is never NULL: res.Types")
}

// TestTimesInUTC: the session is UTC whatever the process's zone (chDB's
// default) and whatever a session set before (a query's guard sends
// session_timezone): a DateTime without a zone of its own compares with
// text as UTC, and every date-time answers as a time.Time in UTC, a Date
// as its day.
func TestTimesInUTC(t *testing.T) {
	x := executor(t)
	ctx := context.Background()
	for _, q := range []string{
		"DROP TABLE IF EXISTS times",
		"CREATE TABLE times (plain DateTime, utc DateTime('UTC'), la DateTime64(3, 'America/Los_Angeles'), day Date) ENGINE = MergeTree ORDER BY plain",
		"INSERT INTO times VALUES ('2025-05-01 00:00:00', '2025-05-01 00:00:00', '2025-05-01 00:00:00.250', '2025-05-01')",
	} {
		require.NoError(t, x.Exec(ctx, []driver.Statement{stmt.New(q, nil)}, driver.Write{Tx: false}))
	}
	require.NoError(t, x.Exec(ctx, []driver.Statement{stmt.New("SET session_timezone = 'America/Los_Angeles'", nil)}, driver.Write{Tx: false}))
	t.Cleanup(func() {
		require.NoError(t, x.Exec(context.Background(), []driver.Statement{stmt.New("SET session_timezone = 'UTC'", nil)}, driver.Write{Tx: false}))
	})
	b := placeholder.NewBuilder(engine.ClickHouse)
	b.WriteString("SELECT plain, utc, la, day, toUnixTimestamp(plain) AS unix FROM times WHERE plain = ")
	b.Bind(time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC))
	res, err := x.Query(ctx, stmt.New(b.SQL(), b.Args()), driver.Bounds{})
	require.NoError(t, err)
	got := len(res.Rows)
	require.Equal(t, 1, got, "the bound UTC text matches the stored instant: len(res.Rows) = %d, want %d: %v", got, 1, res.Rows)
	may := time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC)
	if got, want := res.Rows[0], ([]any{may, may, time.Date(2025, 5, 1, 7, 0, 0, 250e6, time.UTC), may, may.Unix()}); !reflect.DeepEqual(got, want) {
		t.Errorf("res.Rows[0] = %+v, want %+v", got, want)
	}
	for _, v := range res.Rows[0][:4] {
		got, want := v.(time.Time).Location(), time.UTC
		assert.Equal(t, want, got, "v.(time.Time).Location()")
	}
}

// TestExecWithDeadline: a statement run with a deadline gets it as
// max_execution_time, whatever its kind (an INSERT ... VALUES cannot end
// with SETTINGS), and the session's limit is reset after it.
func TestExecWithDeadline(t *testing.T) {
	x := executor(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, q := range []string{
		"DROP TABLE IF EXISTS deadline",
		"CREATE TABLE deadline (n Int64) ENGINE = MergeTree ORDER BY n",
		"INSERT INTO deadline VALUES (1), (2)",
	} {
		require.NoError(t, x.Exec(ctx, []driver.Statement{stmt.New(q, nil)}, driver.Write{Tx: false}), "%v", q)
	}
	short, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	err := x.Exec(short, []driver.Statement{stmt.New("INSERT INTO deadline SELECT number FROM numbers(50) WHERE sleepEachRow(0.05) = 0 SETTINGS max_block_size = 10", nil)}, driver.Write{Tx: false})
	require.ErrorIs(t, err, context.DeadlineExceeded, "the engine stops the statement at its limit")
	a, b := time.Since(start), 2*time.Second
	assert.True(t, (a < b), "time.Since(start) = %v, want < %v", a, b)

	res, err := x.Query(context.Background(), stmt.New("SELECT count() AS n, getSetting('max_execution_time') AS limit FROM deadline", nil), driver.Bounds{})
	require.NoError(t, err)
	if got, want := res.Rows[0][0], any(int64(2)); got != want {
		t.Errorf("count() = %#v, want %#v", got, want)
	}
	if got, want := res.Rows[0][1], any(0.0); got != want {
		t.Errorf("reset after the statement: max_execution_time = %#v, want %#v", got, want)
	}
}

// TestClusterDDLParses runs every statement the engine of a cluster
// writes (expanded as an executor runs them) on chDB, which has no
// cluster: each must fail for the cluster, a table or distributed DDL
// being missing, never as a syntax error (Code: 62), so the text is
// ClickHouse's.
func TestClusterDDLParses(t *testing.T) {
	x := executor(t)
	e, err := engine.ClickHouseCluster("{cluster}")
	require.NoError(t, err)
	ex := e.(engine.Expander)
	var stmts []string
	stmts = append(stmts, ex.Expand(e.CreateTableAs("c_next", "SELECT 'a' AS k, count() AS n FROM numbers({p1:Int64}) GROUP BY k"))...)
	stmts = append(stmts, ex.Expand(e.CreateTable("c_next", []engine.Column{{Name: "k", Kind: engine.Text}, {Name: "value", Kind: engine.Float}}))...)
	swap, _ := e.Swap("c_next", "c")
	for _, s := range swap {
		stmts = append(stmts, ex.Expand(s)...)
	}
	stmts = append(stmts, ex.Expand(e.DropTable("c"))...)
	for _, s := range stmts {
		err := x.Exec(context.Background(), []driver.Statement{stmt.New(s, []any{"10"})}, driver.Write{Tx: false})
		require.Error(t, err, "%v: got no error, want one", s)
		for _, sub := range []string{"Code: 62.", "SYNTAX_ERROR"} {
			assert.NotContains(t, err.Error(), sub, "%v: error %q contains", s, err)
		}
	}
	res, err := x.Query(context.Background(), stmt.New(e.Tables(), nil), driver.Bounds{})
	require.NoError(t, err, "the cluster's list of tables runs on one server")
	assert.Equal(t, []string{"name"}, res.Columns)
}
