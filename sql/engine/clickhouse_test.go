package engine

import (
	"errors"
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
	if got, want := e.CreateTableAs("t_next", "SELECT 1"), "CREATE TABLE `t_next` ENGINE = MergeTree ORDER BY tuple() AS SELECT 1"; got != want {
		t.Errorf("e.CreateTableAs(\"t_next\", \"SELECT 1\") = %q, want %q", got, want)
	}
	if got, want := e.CreateTable("t_next", cols), "CREATE TABLE `t_next` (`bucket` String, `n` Int64, `value` Float64) ENGINE = MergeTree ORDER BY (`bucket`, `n`)"; got != want {
		t.Errorf("e.CreateTable(\"t_next\", cols) = %q, want %q", got, want)
	}
	if got, want := e.DropTable("t"), "DROP TABLE IF EXISTS `t`"; got != want {
		t.Errorf("e.DropTable(\"t\") = %q, want %q", got, want)
	}
	swap, inTx := e.Swap("t_next", "t")
	if inTx {
		t.Errorf("inTx is true")
	}
	if got, want := swap, ([]string{
		"CREATE TABLE IF NOT EXISTS `t` AS `t_next`",
		"EXCHANGE TABLES `t_next` AND `t`",
		"DROP TABLE IF EXISTS `t_next`",
	}); !reflect.DeepEqual(got, want) {
		t.Errorf("swap = %+v, want %+v", got, want)
	}
	if got, want := e.Tables(), "SELECT name FROM system.tables WHERE database = currentDatabase()"; got != want {
		t.Errorf("e.Tables() = %q, want %q", got, want)
	}
	for _, stmt := range append(swap, e.CreateTableAs("t_next", "SELECT 1"), e.CreateTable("t", cols)) {
		if got, want := e.(Expander).Expand(stmt), ([]string{stmt}); !reflect.DeepEqual(got, want) {
			t.Errorf("e.(Expander).Expand(stmt) = %+v, want %+v", got, want)
		}
	}
}

// clusterEngine is the engine of the cluster "events".
func clusterEngine(t testing.TB) Engine {
	e, err := ClickHouseCluster("events")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
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

	if got, want := x.Expand(e.CreateTableAs("t_next", query)), ([]string{
		"CREATE TABLE `t_next_local`" + on + rmt + " ORDER BY tuple() EMPTY AS " + query,
		dist("t_next"),
		"INSERT INTO `t_next` SETTINGS distributed_foreground_insert = 1 " + query,
	}); !reflect.DeepEqual(got, want) {
		t.Errorf("x.Expand(e.CreateTableAs(\"t_next\", query)) = %+v, want %+v", got, want)
	}

	cols := []Column{{"bucket", Text}, {"n", Int}, {"value", Float}}
	if got, want := x.Expand(e.CreateTable("t_next", cols)), ([]string{
		"CREATE TABLE `t_next_local`" + on + " (`bucket` String, `n` Int64, `value` Float64)" + rmt + " ORDER BY (`bucket`, `n`)",
		dist("t_next"),
	}); !reflect.DeepEqual(got, want) {
		t.Errorf("x.Expand(e.CreateTable(\"t_next\", cols)) = %+v, want %+v", got, want)
	}

	if got, want := x.Expand(e.DropTable("t")), ([]string{"DROP TABLE IF EXISTS `t`" + on, "DROP TABLE IF EXISTS `t_local`" + on}); !reflect.DeepEqual(got, want) {
		t.Errorf("x.Expand(e.DropTable(\"t\")) = %+v, want %+v", got, want)
	}

	swap, inTx := e.Swap("t_next", "t")
	if inTx {
		t.Errorf("inTx is true")
	}
	if got, want := swap, ([]string{
		"CREATE TABLE IF NOT EXISTS `t_local`" + on + " AS `t_next_local`",
		"SYSTEM FLUSH DISTRIBUTED `t_next`" + on,
		"EXCHANGE TABLES `t_next_local` AND `t_local`" + on,
		"CREATE TABLE IF NOT EXISTS `t`" + on + " AS `t_local` ENGINE = Distributed('events', currentDatabase(), 't_local', rand())",
		"DROP TABLE IF EXISTS `t_next`" + on,
		"DROP TABLE IF EXISTS `t_next_local`" + on,
	}); !reflect.DeepEqual(got, want) {
		t.Errorf("swap = %+v, want %+v", got, want)
	}
	var expanded []string
	for _, s := range swap {
		expanded = append(expanded, x.Expand(s)...)
	}
	if got, want := expanded, append(swap[:5:5], "DROP TABLE IF EXISTS `t_next_local`"+on, swap[5]); !reflect.DeepEqual(got, want) {
		t.Errorf("the swap's drop of the next table drops its local tables too; a local table's drop is not expanded: expanded = %+v, want %+v", got, want)
	}

	if got, want := e.Tables(), "SELECT DISTINCT if(endsWith(name, '_local'), substring(name, 1, length(name) - 6), name) AS name FROM system.tables WHERE database = currentDatabase()"; got != want {
		t.Errorf("e.Tables() = %q, want %q", got, want)
	}
	if got, want := (e.CreateIndex("i", "t", []string{"a"})), ""; got != want {
		t.Errorf("(e.CreateIndex(\"i\", \"t\", []string{\"a\"})) = %q, want %q", got, want)
	}

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
		if got, want := x.Expand(stmt), ([]string{stmt}); !reflect.DeepEqual(got, want) {
			t.Errorf("%q: x.Expand(stmt) = %+v, want %+v", stmt, got, want)
		}
	}

	// The rest of the engine is ClickHouse's.
	if got, want := e.Name(), "clickhouse"; got != want {
		t.Errorf("e.Name() = %q, want %q", got, want)
	}
	if got, want := e.Guard(time.Second, false), ClickHouse.Guard(time.Second, false); !reflect.DeepEqual(got, want) {
		t.Errorf("e.Guard(time.Second, false) = %+v, want %+v", got, want)
	}
	if got, want := e.Page("q", "l", "o"), ClickHouse.Page("q", "l", "o"); got != want {
		t.Errorf("e.Page(\"q\", \"l\", \"o\") = %q, want %q", got, want)
	}
}

// TestClickHouseClusterNames: a macro and the usual names are accepted
// and quoted; anything that could leave the literal is refused, naming
// what was wrong.
func TestClickHouseClusterNames(t *testing.T) {
	for _, name := range []string{"events", "{cluster}", "prod-eu.1", "a_b"} {
		e, err := ClickHouseCluster(name)
		if err != nil {
			t.Fatalf("%v: unexpected error: %v", name, err)
		}
		if s, sub := e.DropTable("t"), " ON CLUSTER '"+name+"'"; !strings.Contains(s, sub) {
			t.Errorf("%q does not contain %q", s, sub)
		}
	}
	for _, name := range []string{"", "a b", "it's", "x\\", "a`b", "é", "c;DROP", strings.Repeat("c", 256)} {
		_, err := ClickHouseCluster(name)
		if !errors.Is(err, ErrCluster) {
			t.Errorf("%q: %v: errors.Is(err, ErrCluster) is false", name, err)
		}
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
		if got := len(got); got != 3 {
			t.Fatalf("len(got) = %d, want %d: %v", got, 3, got)
		}
		if got, want := got[0], e.CreateTableAs(table, query); got != want {
			t.Errorf("got[0] = %q, want %q", got, want)
		}
		if got, want := got[1], "CREATE TABLE "+e.QuoteIdent(table)+" ON CLUSTER 'events' AS "+e.QuoteIdent(table+"_local")+
			" ENGINE = Distributed('events', currentDatabase(), "+string(e.AppendString(nil, table+"_local"))+", rand())"; got != want {
			t.Errorf("got[1] = %q, want %q", got, want)
		}
		if got, want := got[2], "INSERT INTO "+e.QuoteIdent(table)+" SETTINGS distributed_foreground_insert = 1 "+query; got != want {
			t.Errorf("got[2] = %q, want %q", got, want)
		}

		drops := x.Expand(e.DropTable(table))
		if strings.HasSuffix(table, "_local") {
			if got, want := drops, ([]string{e.DropTable(table)}); !reflect.DeepEqual(got, want) {
				t.Errorf("drops = %+v, want %+v", got, want)
			}
		} else {
			if got, want := drops, ([]string{e.DropTable(table), e.DropTable(table + "_local")}); !reflect.DeepEqual(got, want) {
				t.Errorf("drops = %+v, want %+v", got, want)
			}
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
	if got, want := w.sql, "multiIf(JSONType(ifNull(`p`, ''), ?) = 'String', JSONExtractString(ifNull(`p`, ''), ?), "+
		"JSONType(ifNull(`p`, ''), ?) = 'Null', '', JSONExtractRaw(ifNull(`p`, ''), ?))"; got != want {
		t.Errorf("w.sql = %q, want %q", got, want)
	}
	if got, want := w.args, ([]any{"k", "k", "k", "k"}); !reflect.DeepEqual(got, want) {
		t.Errorf("w.args = %+v, want %+v", got, want)
	}
	w = &recorder{}
	ClickHouse.JSONNumber(w, "`p`", "k")
	if got, want := w.sql, "if(JSONType(`p`, ?) IN ('Int64', 'UInt64', 'Double'), JSONExtractFloat(`p`, ?), NULL)"; got != want {
		t.Errorf("w.sql = %q, want %q", got, want)
	}
	if got, want := w.args, ([]any{"k", "k"}); !reflect.DeepEqual(got, want) {
		t.Errorf("w.args = %+v, want %+v", got, want)
	}
}
