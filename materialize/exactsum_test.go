package materialize

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/tree"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// floatSales is a sales table on SQLite whose amount * 0.1 adds up, over
// days 2 to 4, to 375.90000000000003 row by row and to 375.9 as the sum
// of the days' sums: floating-point addition in another order.
func floatSales(t *testing.T) *sql.DB {
	t.Helper()
	db := testdb.SQLite(t)
	_, err := db.Exec("CREATE TABLE sales (ts TEXT, amount INTEGER)")
	require.NoError(t, err)
	amounts := [][]int{{44, 662, 283}, {88, 706, 327}, {132, 750, 371}, {176, 794, 415}}
	for d, day := range amounts {
		for _, a := range day {
			_, err := db.Exec("INSERT INTO sales VALUES (?, ?)", fmt.Sprintf("2025-05-0%d 12:00:00", d+1), a)
			require.NoError(t, err)
		}
	}
	return db
}

// readAndInline materializes query on db and returns the first value of
// the inline answer and of the read, for values.
func readAndInline(t *testing.T, db *sql.DB, a *Analysis, query string, values map[string]any) (inline, read any) {
	t.Helper()
	r, err := a.Plan.Refresh("stored_sales")
	require.NoError(t, err)
	_, _ = db.Exec("DROP TABLE IF EXISTS stored_sales")
	for _, st := range r.Statements() {
		_, err := db.Exec(st)
		require.NoError(t, err, st)
	}
	tpl, err := placeholder.Compile(query)
	require.NoError(t, err)
	q, args, err := tpl.Render(engine.SQLite, values)
	require.NoError(t, err)
	want := query1(t, db, q, args)
	rq, rargs, err := a.Plan.Read("stored_sales", values)
	require.NoError(t, err)
	return want, query1(t, db, rq, rargs)
}

func query1(t *testing.T, db *sql.DB, q string, args []any) any {
	t.Helper()
	res := query(t, db, q, args)
	require.Len(t, res.rows, 1, q)
	return res.rows[0][0]
}

// TestFloatSumExact: a sum of floating-point values over a range, whose
// read would add up the days' stored sums in another order than the
// query adds up its rows, is refused, with the aggregate, its place and
// a rewrite to an integer sum; the rewrite materializes, and its read
// equals inline on the rows where the float sums part.
func TestFloatSumExact(t *testing.T) {
	db := floatSales(t)
	from := map[string]any{"from": time.Date(2025, 5, 2, 0, 0, 0, 0, time.UTC)}
	opts := Options{Engine: engine.SQLite, Types: map[string]variable.Type{"from": variable.Date}}

	// The rows part: inline adds them in one order, the days in another.
	require.NotEqual(t, query1(t, db, "SELECT sum(amount * 0.1) FROM sales WHERE ts >= '2025-05-02'", nil),
		query1(t, db, "SELECT sum(s) FROM (SELECT substr(ts, 1, 10) AS d, sum(amount * 0.1) AS s FROM sales GROUP BY d) WHERE d >= '2025-05-02'", nil))

	const float = "SELECT sum(amount * 0.1) AS s FROM sales WHERE ts >= {variables.from}"
	a, err := Analyze(float, opts)
	require.NoError(t, err)
	if a.Materializable() {
		inline, read := readAndInline(t, db, a, float, from)
		require.Equal(t, inline, read, "a materialized float sum read differently from inline")
	}
	require.False(t, a.Materializable())
	require.Equal(t, CodeAggregate, a.Reasons[0].Code)
	assert.Equal(t, 1, a.Reasons[0].Line)
	assert.Equal(t, 8, a.Reasons[0].Column)
	assert.Contains(t, a.Reasons[0].Message, "sum(amount * 0.1) adds up floating-point values")
	assert.Contains(t, a.Reasons[0].Message, "sum(CAST(round((amount * 0.1) * 100) AS INTEGER)) / 100.0")

	const cents = "SELECT sum(CAST(round((amount * 0.1) * 100) AS INTEGER)) / 100.0 AS s FROM sales WHERE ts >= {variables.from}"
	a, err = Analyze(cents, opts)
	require.NoError(t, err)
	require.True(t, a.Materializable(), "%v", a.Reasons)
	inline, read := readAndInline(t, db, a, cents, from)
	require.Equal(t, inline, read)
	require.Equal(t, 375.9, read)
}

// TestFloatSumVerdicts: which sums a read may add up again, per engine:
// a literal's type is the engine's (0.1 a double on SQLite and ClickHouse,
// a numeric on PostgreSQL, a DECIMAL on MySQL, where 1e1 is a DOUBLE); a
// column's type is unknown, refused with StrictSums (the safe side) and
// taken for exact without; count, min, max pass; a sum
// that one stored row answers (every variable compared with =, or each
// group in one bucket) passes whatever its type; a live tail adds up.
func TestFloatSumVerdicts(t *testing.T) {
	sqlite, pg, my, ch := engine.SQLite, engine.PostgreSQL, engine.MySQL, engine.ClickHouse
	all := []engine.Engine{sqlite, pg, my, ch}
	cases := []struct {
		query string
		ok    []engine.Engine // the engines that materialize it with StrictSums
		tail  bool
		// loose are the engines that materialize it without StrictSums,
		// where a column is taken for exact; nil: ok.
		loose []engine.Engine
	}{
		{"SELECT sum(2 * 3) AS s FROM t WHERE ts >= {variables.from}", all, false, nil},
		{"SELECT sum(x * 0.1) AS s FROM t WHERE ts >= {variables.from}", nil, false, []engine.Engine{pg, my}},
		{"SELECT sum(CAST(x AS INTEGER) * 0.1) AS s FROM t WHERE ts >= {variables.from}", []engine.Engine{pg, my}, false, nil},
		{"SELECT sum(CAST(x AS INTEGER) * 1e1) AS s FROM t WHERE ts >= {variables.from}", []engine.Engine{pg}, false, nil},
		{"SELECT sum(CAST(x AS INTEGER) / 2) AS s FROM t WHERE ts >= {variables.from}", []engine.Engine{sqlite, pg, my}, false, nil},
		{"SELECT avg(CAST(x AS DECIMAL(12, 2))) AS s FROM t WHERE ts >= {variables.from}", []engine.Engine{pg, my, ch}, false, nil},
		{"SELECT sum(CASE WHEN x > 1 THEN 1 ELSE 0 END) AS s FROM t WHERE ts >= {variables.from}", all, false, nil},
		{"SELECT sum(x > 1) AS s FROM t WHERE ts >= {variables.from}", all, false, nil},
		{"SELECT sum(CAST(x AS double precision)) AS s FROM t WHERE ts >= {variables.from}", nil, false, nil},
		{"SELECT sum(x) AS s FROM t WHERE ts >= {variables.from}", nil, false, all},
		{"SELECT sum(DISTINCT x) AS s FROM t WHERE ts >= {variables.from}", nil, false, all},
		{"SELECT count(x) AS n, min(x) AS lo, max(x * 0.1) AS hi, count(DISTINCT x) AS k FROM t WHERE ts >= {variables.from}", all, false, nil},
		{"SELECT sum(x * 0.1) AS s FROM t WHERE c = {variables.c}", all, false, nil},
		{"SELECT sum(x * 0.1) AS s FROM t WHERE c = {variables.c}", nil, true, []engine.Engine{pg, my}},
		{"SELECT sum(x * 0.1) AS s FROM t WHERE c IN {variables.list}", nil, false, []engine.Engine{pg, my}},
		{"SELECT date(ts) AS d, sum(x * 0.1) AS s FROM t WHERE ts >= {variables.from} GROUP BY date(ts)", []engine.Engine{sqlite, pg, my}, false, nil},
		// Computed over the read of its subquery, whose rows come in
		// another order: the outer sum of floats is refused, of counts not.
		{"SELECT sum(a) AS s FROM (SELECT d, sum(CAST(x AS INTEGER) * 0.1) AS a FROM t WHERE c = {variables.c} GROUP BY d) u", []engine.Engine{pg, my}, false, nil},
		{"SELECT sum(n) AS s, avg(n) AS m FROM (SELECT d, count(*) AS n FROM t WHERE c = {variables.c} GROUP BY d) u", all, false, nil},
	}
	for _, c := range cases {
		for _, strict := range []bool{true, false} {
			ok := c.ok
			if !strict && c.loose != nil {
				ok = c.loose
			}
			for _, e := range all {
				opts := Options{Engine: e, Types: map[string]variable.Type{"from": variable.Date, "list": variable.List}, StrictSums: strict}
				if c.tail {
					opts.TailColumn = "ts"
				}
				a, err := Analyze(c.query, opts)
				require.NoError(t, err)
				want := false
				for _, o := range ok {
					want = want || o == e
				}
				if !assert.Equal(t, want, a.Materializable(), "%s on %s (tail %v, strict %v): %v", c.query, e.Name(), c.tail, strict, a.Reasons) || want {
					continue
				}
				assert.Equal(t, CodeAggregate, a.Reasons[0].Code, "%s on %s", c.query, e.Name())
				assert.Contains(t, a.Reasons[0].Message, "in another order", "%s on %s", c.query, e.Name())
			}
		}
	}
	// Listed exact, a column is exact either way.
	a, err := Analyze("SELECT sum(t.x) AS s FROM t WHERE ts >= {variables.from}",
		Options{Engine: sqlite, Types: map[string]variable.Type{"from": variable.Date}, StrictSums: true, ExactColumns: []string{"T.X"}})
	require.NoError(t, err)
	assert.True(t, a.Materializable(), "%v", a.Reasons)
}

// typeCase is a text and the type it has on each engine.
type typeCase struct {
	text                   string
	sqlite, pg, mysql, ch_ numType
}

// checkTypes checks that typeOf gives each case's type on each engine.
func checkTypes(t *testing.T, cases []typeCase, typeOf func(e engine.Engine, text string) numType) {
	t.Helper()
	for _, c := range cases {
		for e, want := range map[engine.Engine]numType{engine.SQLite: c.sqlite, engine.PostgreSQL: c.pg, engine.MySQL: c.mysql, engine.ClickHouse: c.ch_} {
			assert.Equal(t, want, typeOf(e, c.text), "%q on %s", c.text, e.Name())
		}
	}
}

// TestNumType: the type of a summed expression, per engine.
func TestNumType(t *testing.T) {
	cases := []typeCase{
		{"1", numExact, numExact, numExact, numExact},
		{"0.1", numFloat, numExact, numExact, numFloat},
		{"1e3", numFloat, numExact, numFloat, numFloat},
		{"x", numUnknown, numUnknown, numUnknown, numUnknown},
		{"CAST(x AS REAL)", numFloat, numFloat, numFloat, numFloat},
		{"CAST(x AS BIGINT) * 2 - 1", numExact, numExact, numExact, numExact},
		{"CAST(x AS DECIMAL(10, 2))", numFloat, numExact, numExact, numExact},
		{"CAST(x AS INTEGER) / 3", numExact, numExact, numExact, numFloat},
		{"abs(CAST(x AS INTEGER))", numExact, numExact, numExact, numExact},
		{"coalesce(CAST(x AS INTEGER), 0.5)", numFloat, numExact, numExact, numFloat},
		{"sqrt(4)", numFloat, numFloat, numFloat, numFloat},
		{"CASE WHEN x THEN 1 END", numExact, numExact, numExact, numExact},
		{"'1.5'", numUnknown, numUnknown, numUnknown, numUnknown},
		// A number taken out of JSON: a REAL or a DOUBLE with a fraction
		// on SQLite and MySQL, text or JSON elsewhere until typed.
		{"json_extract(p, '$.amount')", numFloat, numUnknown, numFloat, numUnknown},
		{"p ->> '$.amount'", numFloat, numUnknown, numFloat, numUnknown},
		{"JSONExtractFloat(p, 'amount')", numFloat, numFloat, numFloat, numFloat},
		{"JSONExtractInt(p, 'amount')", numExact, numExact, numExact, numExact},
	}
	checkTypes(t, cases, func(e engine.Engine, expr string) numType {
		tr, err := tree.Parse(e, "SELECT "+expr)
		require.NoError(t, err, expr)
		b := &builder{d: e}
		return b.numTypeOf(tr.Stmt.(*tree.Select).SelectExprs[0].(*tree.AliasedExpr).Expr)
	})
}

// TestColumnTypeNames: a column's declared type as each engine's catalog
// names it, read with SQLite's affinities there.
func TestColumnTypeNames(t *testing.T) {
	cases := []typeCase{
		{"REAL", numFloat, numFloat, numFloat, numFloat},
		{"double precision", numFloat, numFloat, numFloat, numFloat},
		{"FLOAT8", numFloat, numFloat, numFloat, numFloat},
		{"FLOAT4", numFloat, numFloat, numFloat, numFloat},
		{"DOUBLE", numFloat, numFloat, numFloat, numFloat},
		{"Nullable(Float64)", numFloat, numFloat, numFloat, numFloat},
		{"LowCardinality(Nullable(Float32))", numFloat, numFloat, numFloat, numFloat},
		{"NUMERIC", numFloat, numExact, numExact, numExact},
		{"DECIMAL(12,2)", numFloat, numExact, numExact, numExact},
		{"Nullable(Decimal(38, 10))", numFloat, numExact, numExact, numExact},
		{"INTEGER", numUnknown, numExact, numExact, numExact},
		{"BIGINT UNSIGNED", numUnknown, numExact, numExact, numExact},
		{"INT8", numUnknown, numExact, numExact, numExact},
		{"UInt32", numUnknown, numExact, numExact, numExact},
		{"FLOATING POINT", numUnknown, numFloat, numFloat, numFloat}, // SQLite: INT first
		{"TEXT", numUnknown, numUnknown, numUnknown, numUnknown},
		{"point", numUnknown, numUnknown, numUnknown, numUnknown},
		{"interval", numUnknown, numUnknown, numUnknown, numUnknown},
		{"", numFloat, numUnknown, numUnknown, numUnknown}, // SQLite: no declared type keeps a REAL as it comes
	}
	checkTypes(t, cases, func(e engine.Engine, name string) numType { return typeNamed(e, name, true) })
}

// TestFloatColumnSums: a sum or avg of a column Options.ColumnTypes
// declares floating point, whose stored parts a read adds up again, is
// refused with CodeAggregate at the aggregate, naming the column and a
// rewrite in the engine's exact type; of an integer or decimal column it
// materializes even with StrictSums; where one stored row answers each
// group it materializes whatever the type. Without the table's types the
// verdict is today's, and Analysis.Untyped names the tables whose types
// would decide it.
func TestFloatColumnSums(t *testing.T) {
	types := map[engine.Engine]map[string]string{
		engine.SQLite:     {"price": "REAL", "qty": "INTEGER", "ts": "TEXT", "grp": "TEXT"},
		engine.PostgreSQL: {"price": "FLOAT8", "qty": "INT8", "ts": "TIMESTAMP", "grp": "TEXT"},
		engine.MySQL:      {"price": "DOUBLE", "qty": "BIGINT", "ts": "DATETIME", "grp": "VARCHAR"},
		engine.ClickHouse: {"price": "Nullable(Float64)", "qty": "Nullable(Int64)", "ts": "DateTime", "grp": "String"},
	}
	opts := func(e engine.Engine, typed, strict bool) Options {
		o := Options{Engine: e, Types: map[string]variable.Type{"from": variable.Date, "grp": variable.String}, StrictSums: strict}
		if typed {
			o.ColumnTypes = map[string]map[string]string{"Shop.Items": types[e]}
		}
		return o
	}
	for _, e := range []engine.Engine{engine.SQLite, engine.PostgreSQL, engine.MySQL, engine.ClickHouse} {
		for _, q := range []struct{ sql, call, arg string }{
			{"SELECT grp, sum(price) AS s FROM shop.items WHERE ts >= {variables.from} GROUP BY grp", "sum(price)", "price"},
			{"SELECT i.grp, avg(i.price) AS m FROM shop.items AS i WHERE i.ts >= {variables.from} GROUP BY i.grp", "avg(i.price)", "i.price"},
			{"SELECT sum(price * qty) AS s FROM shop.items WHERE ts >= {variables.from}", "sum(price * qty)", "price * qty"},
			{"SELECT sum(p) AS s FROM (SELECT price AS p, ts FROM shop.items) AS u WHERE ts >= {variables.from}", "sum(p)", "p"},
		} {
			// Untyped: materializes as today, naming the table.
			a, err := Analyze(q.sql, opts(e, false, false))
			require.NoError(t, err)
			require.True(t, a.Materializable(), "%s on %s: %v", q.sql, e.Name(), a.Reasons)
			assert.Equal(t, []Table{{Name: "shop.items", Text: "shop.items"}}, a.Untyped, "%s on %s", q.sql, e.Name())
			// Typed: refused, with the rewrite.
			a, err = Analyze(q.sql, opts(e, true, false))
			require.NoError(t, err)
			require.False(t, a.Materializable(), "%s on %s", q.sql, e.Name())
			r := a.Reasons[0]
			assert.Equal(t, CodeAggregate, r.Code)
			assert.Empty(t, a.Untyped)
			assert.Contains(t, r.Message, q.call+" adds up floating-point values (price of shop.items, a column of type "+types[e]["price"]+")")
			name := q.call[:3]
			if x := e.ExactSumType(); x != "" {
				assert.Contains(t, r.Message, "add up an exact type instead: "+name+"(CAST("+q.arg+" AS "+x+"))", "%s on %s", q.sql, e.Name())
			} else {
				assert.Contains(t, r.Message, "add up an integer instead, such as cents: "+name+"(CAST(round(("+q.arg+") * 100) AS INTEGER)) / 100.0")
			}
			assert.Equal(t, 1, r.Line)
			assert.Equal(t, strings.Index(q.sql, q.call)+1, r.Column, "%s on %s", q.sql, e.Name())
		}
		// An integer column: exact on the servers even with StrictSums;
		// on SQLite an INTEGER column may hold a REAL, taken for exact
		// without StrictSums.
		a, err := Analyze("SELECT sum(qty) AS s FROM shop.items WHERE ts >= {variables.from}", opts(e, true, e != engine.SQLite))
		require.NoError(t, err)
		assert.True(t, a.Materializable(), "%s: %v", e.Name(), a.Reasons)
		assert.Empty(t, a.Untyped)
		// One stored row per group: the float sum passes through.
		a, err = Analyze("SELECT grp, sum(price) AS s FROM shop.items WHERE grp = {variables.grp} GROUP BY grp", opts(e, true, true))
		require.NoError(t, err)
		assert.True(t, a.Materializable(), "%s: %v", e.Name(), a.Reasons)
		// A column the typed table does not have is the other table's,
		// untyped.
		a, err = Analyze("SELECT sum(amount) AS s FROM shop.items JOIN orders ON orders.id = items.qty WHERE ts >= {variables.from}", opts(e, true, false))
		require.NoError(t, err)
		if assert.True(t, a.Materializable(), "%s: %v", e.Name(), a.Reasons) {
			assert.Equal(t, []Table{{Name: "orders", Text: "orders"}}, a.Untyped)
		}
	}
	// Computed over the read of its subquery: the outer sum of the
	// subquery's float sums is refused, the tables named untyped.
	outer := "SELECT sum(s) AS total FROM (SELECT ts, sum(price) AS s FROM shop.items WHERE grp = {variables.grp} GROUP BY ts) u"
	for _, e := range []engine.Engine{engine.SQLite, engine.PostgreSQL, engine.MySQL, engine.ClickHouse} {
		a, err := Analyze(outer, opts(e, false, false))
		require.NoError(t, err)
		require.True(t, a.Materializable(), "%s: %v", e.Name(), a.Reasons)
		assert.Equal(t, []Table{{Name: "shop.items", Text: "shop.items"}}, a.Untyped, e.Name())
		a, err = Analyze(outer, opts(e, true, false))
		require.NoError(t, err)
		require.False(t, a.Materializable(), e.Name())
		assert.Equal(t, CodeAggregate, a.Reasons[0].Code)
		assert.Contains(t, a.Reasons[0].Message, "sum(s) adds up floating-point values (price of shop.items, a column of type "+types[e]["price"]+") over the rows of its subquery")
		assert.Equal(t, [2]int{1, 8}, [2]int{a.Reasons[0].Line, a.Reasons[0].Column})
	}
	// Quoted names: Text keeps the quotes, Name does not.
	a, err := Analyze(`SELECT sum("Price") AS s FROM "Shop"."Items" WHERE ts >= {variables.from}`, Options{Engine: engine.PostgreSQL, Types: map[string]variable.Type{"from": variable.Date}})
	require.NoError(t, err)
	assert.Equal(t, []Table{{Name: "Shop.Items", Text: `"Shop"."Items"`}}, a.Untyped)
}
