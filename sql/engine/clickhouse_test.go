package engine

import (
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestClickHouseDDL pins the DDL of stored tables on one server: MergeTree
// tables, swapped with EXCHANGE TABLES, each statement complete (Expand
// leaves it as it is). endpoint/chdb runs these on chDB.
func TestClickHouseDDL(t *testing.T) {
	e := ClickHouse
	cols := []Column{{"bucket", Text}, {"n", Int}, {"value", Float}}
	assert.Equal(t, "CREATE TABLE `t_next` ENGINE = MergeTree ORDER BY tuple() AS SELECT 1", e.CreateTableAs("t_next", "SELECT 1"))
	assert.Equal(t, "CREATE TABLE `t_next` (`bucket` String, `n` Int64, `value` Float64) ENGINE = MergeTree ORDER BY (`bucket`, `n`)", e.CreateTable("t_next", cols))
	assert.Equal(t, "DROP TABLE IF EXISTS `t`", e.DropTable("t"))
	swap, inTx := e.Swap("t_next", "t")
	assert.False(t, inTx, "inTx is true")
	assert.Equal(t, []string{
		"CREATE TABLE IF NOT EXISTS `t` AS `t_next`",
		"EXCHANGE TABLES `t_next` AND `t`",
		"DROP TABLE IF EXISTS `t_next`",
	}, swap)
	assert.Equal(t, "SELECT name FROM system.tables WHERE database = currentDatabase()", e.Tables())
	for _, stmt := range append(swap, e.CreateTableAs("t_next", "SELECT 1"), e.CreateTable("t", cols)) {
		assert.Equal(t, []string{stmt}, e.(Expander).Expand(stmt))
	}
}

// clusterEngine is the engine of the cluster "events".
func clusterEngine(t testing.TB) Engine {
	e, err := ClickHouseCluster("events")
	require.NoError(t, err)
	return e
}

// TestClickHouseClusterDDL pins the DDL of stored tables on a cluster, as
// an executor runs it (each statement expanded): Replicated local tables
// and a Distributed table created ON CLUSTER, filled once through the
// Distributed table, the local tables swapped with EXCHANGE TABLES ON
// CLUSTER, both dropped together. chDB has no cluster: endpoint/chdb runs
// each statement there to show that ClickHouse parses it.
func TestClickHouseClusterDDL(t *testing.T) {
	e := clusterEngine(t)
	x := e.(Expander)
	const on = " ON CLUSTER 'events'"
	const rmt = " ENGINE = ReplicatedMergeTree('/clickhouse/tables/{uuid}/{shard}', '{replica}')"
	dist := func(table string) string {
		return "CREATE TABLE `" + table + "`" + on + " AS `" + table + "_local` ENGINE = Distributed('events', currentDatabase(), '" + table + "_local', rand())"
	}
	query := "SELECT `event`, count(*) AS `n` FROM `events` WHERE `project_id` = {p1:String} GROUP BY `event`"

	got, want := x.Expand(e.CreateTableAs("t_next", query)), ([]string{
		"CREATE TABLE `t_next_local`" + on + rmt + " ORDER BY tuple() EMPTY AS " + query,
		dist("t_next"),
		"INSERT INTO `t_next` SETTINGS distributed_foreground_insert = 1 " + query,
	})
	assert.Equal(t, want, got, "x.Expand(e.CreateTableAs(\"t_next\", query))")

	cols := []Column{{"bucket", Text}, {"n", Int}, {"value", Float}}
	if got, want := x.Expand(e.CreateTable("t_next", cols)), ([]string{
		"CREATE TABLE `t_next_local`" + on + " (`bucket` String, `n` Int64, `value` Float64)" + rmt + " ORDER BY (`bucket`, `n`)",
		dist("t_next"),
	}); !reflect.DeepEqual(got, want) {
		t.Errorf("x.Expand(e.CreateTable(\"t_next\", cols)) = %+v, want %+v", got, want)
	}

	assert.Equal(t, []string{"DROP TABLE IF EXISTS `t`" + on, "DROP TABLE IF EXISTS `t_local`" + on}, x.Expand(e.DropTable("t")))

	swap, inTx := e.Swap("t_next", "t")
	assert.False(t, inTx, "inTx is true")
	assert.Equal(t, []string{
		"CREATE TABLE IF NOT EXISTS `t_local`" + on + " AS `t_next_local`",
		"SYSTEM FLUSH DISTRIBUTED `t_next`" + on,
		"EXCHANGE TABLES `t_next_local` AND `t_local`" + on,
		"CREATE TABLE IF NOT EXISTS `t`" + on + " AS `t_local` ENGINE = Distributed('events', currentDatabase(), 't_local', rand())",
		"DROP TABLE IF EXISTS `t_next`" + on,
		"DROP TABLE IF EXISTS `t_next_local`" + on,
	}, swap)
	var expanded []string
	for _, s := range swap {
		expanded = append(expanded, x.Expand(s)...)
	}
	if got, want := expanded, append(swap[:5:5], "DROP TABLE IF EXISTS `t_next_local`"+on, swap[5]); !reflect.DeepEqual(got, want) {
		t.Errorf("the swap's drop of the next table drops its local tables too; a local table's drop is not expanded: expanded = %+v, want %+v", got, want)
	}

	assert.Equal(t, "SELECT DISTINCT if(endsWith(name, '_local'), substring(name, 1, length(name) - 6), name) AS name FROM system.tables WHERE database = currentDatabase()", e.Tables())
	assert.Equal(t, "", e.CreateIndex("i", "t", []string{"a"}), "(e.CreateIndex(\"i\", \"t\", []string{\"a\"}))")

	// What is not the engine's DDL of a stored table runs as it is.
	for _, stmt := range []string{
		"INSERT INTO `t_next` (`n`) SELECT 1",
		"CREATE TABLE `x`" + on + " (`a` String) ENGINE = Memory",
		"CREATE TABLE `t_next_local` ENGINE = MergeTree ORDER BY tuple() AS SELECT 1",
		"DROP TABLE IF EXISTS `t`",
		"DROP TABLE IF EXISTS `t` ON CLUSTER 'other'",
		"CREATE TABLE `unterminated",
		"",
	} {
		got, want := x.Expand(stmt), ([]string{stmt})
		assert.Equal(t, want, got, "%q: x.Expand(stmt)", stmt)
	}

	// The rest of the engine is ClickHouse's.
	assert.Equal(t, "clickhouse", e.Name())
	assert.Equal(t, ClickHouse.Guard(time.Second, false), e.Guard(time.Second, false))
	assert.Equal(t, ClickHouse.Page("q", "l", "o"), e.Page("q", "l", "o"))
}

// TestClickHouseClusterNames: a macro and the usual names are accepted
// and quoted; anything that could leave the literal is refused, naming
// what was wrong.
func TestClickHouseClusterNames(t *testing.T) {
	for _, name := range []string{"events", "{cluster}", "prod-eu.1", "a_b"} {
		e, err := ClickHouseCluster(name)
		require.NoError(t, err, "%v", name)
		s, sub := e.DropTable("t"), " ON CLUSTER '"+name+"'"
		assert.Contains(t, s, sub)
	}
	for _, name := range []string{"", "a b", "it's", "x\\", "a`b", "é", "c;DROP", strings.Repeat("c", 256)} {
		_, err := ClickHouseCluster(name)
		assert.ErrorIs(t, err, ErrCluster, "%q", name)
	}
}

// FuzzClickHouseClusterExpand: whatever the table name and the query, the
// expansion of the cluster's CREATE ... AS creates the local and
// Distributed tables of that name and inserts the query's text unchanged,
// and the drop drops both.
func FuzzClickHouseClusterExpand(f *testing.F) {
	for _, s := range [][2]string{
		{"t", "SELECT 1"},
		{"a`b", "SELECT '` AS x ON CLUSTER' AS y"},
		{"t_local", " ENGINE = x EMPTY AS SELECT 2"},
		{"", ""},
	} {
		f.Add(s[0], s[1])
	}
	e := clusterEngine(f)
	x := e.(Expander)
	f.Fuzz(func(t *testing.T, table, query string) {
		got := x.Expand(e.CreateTableAs(table, query))
		require.Len(t, got, 3)
		assert.Equal(t, e.CreateTableAs(table, query), got[0])
		if got, want := got[1], "CREATE TABLE "+e.QuoteIdent(table)+" ON CLUSTER 'events' AS "+e.QuoteIdent(table+"_local")+
			" ENGINE = Distributed('events', currentDatabase(), "+string(e.AppendString(nil, table+"_local"))+", rand())"; got != want {
			t.Errorf("got[1] = %q, want %q", got, want)
		}
		if got, want := got[2], "INSERT INTO "+e.QuoteIdent(table)+" SETTINGS distributed_foreground_insert = 1 "+query; got != want {
			t.Errorf("got[2] = %q, want %q", got, want)
		}

		drops := x.Expand(e.DropTable(table))
		if strings.HasSuffix(table, "_local") {
			got, want := drops, ([]string{e.DropTable(table)})
			assert.Equal(t, want, got, "drops")
		} else {
			got, want := drops, ([]string{e.DropTable(table), e.DropTable(table + "_local")})
			assert.Equal(t, want, got, "drops")
		}
	})
}

// TestClickHouseJSONSQL pins the JSON rule's SQL: the key is bound, the
// type of the property decides (a string's value, a number's or a
// boolean's JSON text, a JSON null's or a missing key's empty text; a
// number only for a JSON number). endpoint/chdb checks the answers.
func TestClickHouseJSONSQL(t *testing.T) {
	w := &recorder{}
	ClickHouse.JSONText(w, "`p`", "k")
	got, want := w.sql, "multiIf(JSONType(ifNull(`p`, ''), ?) = 'String', JSONExtractString(ifNull(`p`, ''), ?), "+
		"JSONType(ifNull(`p`, ''), ?) = 'Null', '', JSONExtractRaw(ifNull(`p`, ''), ?))"
	assert.Equal(t, want, got, "w.sql")
	assert.Equal(t, []any{"k", "k", "k", "k"}, w.args)
	w = &recorder{}
	ClickHouse.JSONNumber(w, "`p`", "k")
	assert.Equal(t, "if(JSONType(`p`, ?) IN ('Int64', 'UInt64', 'Double'), JSONExtractFloat(`p`, ?), NULL)", w.sql)
	assert.Equal(t, []any{"k", "k"}, w.args)
}
