package equivalence

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/sql/engine"
)

// storage is how the events table keeps its timestamps. SQLite keeps UTC
// text whatever the storage, as the reference.
type storage string

const (
	// asText: UTC text "YYYY-MM-DD HH:MM:SS", as examples/demo writes it.
	asText storage = "text"
	// asTimestamp: PostgreSQL timestamp, MySQL DATETIME.
	asTimestamp storage = "timestamp"
	// asZoned: PostgreSQL timestamptz, MySQL TIMESTAMP; the Service's
	// connections start in a session time zone other than UTC.
	asZoned storage = "timestamptz"
)

var storages = []storage{asText, asTimestamp, asZoned}

// dialect is how a user writes tables and SQL on one engine: the column
// types of the fixture and the engine-specific syntax of a query (JSON
// access), which the corpus asks for through a few methods.
type dialect struct {
	name string // sqlite, postgres, mysql: the log's names
	e    engine.Engine
	// Fixture column types. text compares byte for byte on every engine
	// (MariaDB: utf8mb4_nopad_bin, as the documentation advises); textCI
	// is the engine's default text, which on MariaDB folds case and
	// ignores trailing spaces.
	text, textCI, integer, real, boolean, json string
	// ts are the types of a timestamp column by storage.
	ts map[storage]string
	// date is the type of a date column (SQLite: text of the day's
	// midnight, YYYY-MM-DD 00:00:00, which its bucketed reads need).
	date string
	// key is the type of the items' id, integer NOT NULL when "".
	key string
	// tableOptions follow the columns of the fixture's CREATE TABLE
	// (ClickHouse: the table engine).
	tableOptions string
}

// keyType is the type of the items' id.
func (d *dialect) keyType() string {
	if d.key != "" {
		return d.key
	}
	return d.integer + " NOT NULL"
}

var (
	sqliteDialect = &dialect{
		name: "sqlite", e: engine.SQLite,
		text: "TEXT", textCI: "TEXT", integer: "INTEGER", real: "REAL", boolean: "INTEGER", json: "TEXT",
		ts: map[storage]string{asText: "TEXT", asTimestamp: "TEXT", asZoned: "TEXT"}, date: "TEXT",
	}
	postgresDialect = &dialect{
		name: "postgres", e: engine.PostgreSQL,
		text: "text", textCI: "text", integer: "bigint", real: "double precision", boolean: "boolean", json: "text",
		ts: map[storage]string{asText: "text", asTimestamp: "timestamp", asZoned: "timestamptz"}, date: "date",
	}
	mysqlDialect = &dialect{
		name: "mysql", e: engine.MySQL,
		text:    "VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin",
		textCI:  "VARCHAR(255) CHARACTER SET utf8mb4",
		integer: "BIGINT", real: "DOUBLE", boolean: "BOOLEAN", json: "LONGTEXT CHARACTER SET utf8mb4",
		ts: map[storage]string{
			asText:      "VARCHAR(19) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin",
			asTimestamp: "DATETIME",
			asZoned:     "TIMESTAMP NULL",
		},
		date: "DATE",
	}
)

// dayOf is the value of the day column for the timestamp ts (UTC text or
// nil): its day, as the text of its midnight on SQLite.
func (d *dialect) dayOf(ts any) any {
	t, ok := ts.(string)
	if !ok {
		return nil
	}
	if d.name == "sqlite" {
		return t[:10] + " 00:00:00"
	}
	return t[:10]
}

// literal is an engine.Writer that writes bound values as string literals:
// the engine's own JSON expressions, spelled as a user would write them in
// a saved query (keys are the query's text, not run-time values).
type literal struct {
	e engine.Engine
	b []byte
}

func (l *literal) WriteString(s string) { l.b = append(l.b, s...) }

func (l *literal) Bind(v any) { l.b = l.e.AppendString(l.b, fmt.Sprint(v)) }

// jtext is the text of the top-level key of the JSON object in col, by the
// library's one JSON rule (engine.JSONText): "" when missing, null or "".
func (d *dialect) jtext(col, key string) string {
	l := &literal{e: d.e}
	d.e.JSONText(l, col, key)
	return string(l.b)
}

// jnum is the value of the key when it is a JSON number, else NULL.
func (d *dialect) jnum(col, key string) string {
	l := &literal{e: d.e}
	d.e.JSONNumber(l, col, key)
	return string(l.b)
}

// native is the JSON extraction a user of the engine writes without the
// library's rule: SQLite json_extract, PostgreSQL ->>, MySQL
// JSON_UNQUOTE(JSON_EXTRACT()), ClickHouse JSONExtractString. Its answers differ between engines (see
// docs/engines.md); the corpus uses it only in listed cases.
func (d *dialect) native(col, key string) string {
	switch d.name {
	case "postgres":
		return "(" + col + "::jsonb ->> '" + key + "')"
	case "mysql":
		return "JSON_UNQUOTE(JSON_EXTRACT(" + col + ", '$." + key + "'))"
	case "clickhouse":
		return "JSONExtractString(" + col + ", '" + key + "')"
	}
	return "json_extract(" + col + ", '$." + key + "')"
}

// item is one row of the items fixture: values chosen where engines are
// known to part (letter case, trailing spaces, unicode, NULLs, JSON null,
// numbers stored as text, bucket boundaries).
type item struct {
	id    int64
	name  any // string or nil
	grp   any
	qty   any // int64 or nil
	price any // float64 or nil
	flag  any // bool or nil
	ts    any // UTC text or nil, stored in ts_text, ts and tstz
	props any // JSON text or nil
}

var items = []item{
	{1, "apple", "x", int64(3), 1.5, true, "2025-04-28 00:00:00", `{"plan":"pro","n":12,"s":"12","b":true,"z":null,"u":"ñandú","sp":"pro ","c":"Pro"}`},
	{2, "Apple", "x", int64(5), 2.25, false, "2025-04-30 23:59:59", `{"plan":"Pro","n":3.5,"s":"3.5","b":false,"z":"null","c":"pro"}`},
	{3, "apple ", "y", int64(-2), 0.5, true, "2025-05-01 00:00:00", `{"plan":"pro ","n":-1,"s":"x","c":"PRO"}`},
	{4, "APPLE", "y", int64(0), -0.5, nil, "2025-05-01 00:00:01", `{"plan":null,"n":"7","s":7}`},
	{5, "banana", "z", int64(10), 3.75, false, "2025-05-04 23:59:59", `{"plan":"free","n":0,"sp":"free"}`},
	{6, "ñandú", "z", nil, nil, true, "2025-05-05 00:00:00", `{"plan":"ñandú","u":"\u00f1and\u00fa"}`},
	{7, "café", nil, int64(7), 1.0, false, "2025-05-05 12:30:00", `{"plan":"café","u":"Café"}`},
	{8, "Café", "x", int64(1), nil, nil, "2025-05-06 08:00:00", `{}`},
	{9, "", "y", int64(4), 2.5, true, "2025-05-07 17:45:10", `{"plan":"","z":null}`},
	{10, nil, "z", int64(6), 4.0, false, "2025-05-31 23:59:59", `{"plan":"enterprise","n":20}`},
	{11, "it's", "x", int64(2), 1.25, true, "2025-06-01 00:00:00", `{"plan":"it's","n":12}`},
	{12, "a%b", "y", int64(8), nil, false, nil, `{"plan":"a%b","s":"08"}`},
	{13, "a_b", "z", int64(9), 0.25, true, "2025-04-29 10:00:00", `{"plan":"a_b","n":"twelve"}`},
	{14, "100", "x", int64(100), 100.0, false, "2025-05-02 05:30:00", `{"plan":"100","n":100,"s":"100"}`},
	{15, "zeta", nil, nil, 9.5, nil, "2025-05-03 18:00:00", nil},
	{16, "Ünïcode", "y", int64(11), 5.5, true, "2025-05-10 23:00:00", `{"plan":"Ünïcode","sp":"Ünïcode  ","u":"ünïcode"}`},
	{17, "apple", "w", int64(3), 1.5, true, "2025-05-01 00:00:00", `{"plan":"pro","n":12.25,"sp":"pro"}`},
	{18, "pear", "w", int64(-7), 6.0, false, "2025-05-12 00:00:00", `{"plan":"free ","n":-0.5,"b":true}`},
	{19, "Pear", "w", int64(12), 0.75, true, "2025-05-19 06:00:00", `{"plan":"FREE","n":1,"b":false}`},
	{20, "pear  ", "x", int64(5), 3.0, nil, "2025-05-26 00:00:00", `{"plan":"free","z":null,"sp":"free  "}`},
}

// itemsDDL is the items table on d, and the view items_j of its JSON
// properties read by the library's rule (a user's view: JSON access is
// engine syntax, and a view keeps the endpoints' SQL shared and
// materializable).
func itemsDDL(d *dialect) []string {
	return []string{
		`CREATE TABLE items (id ` + d.keyType() + `, name ` + d.text + `, name_ci ` + d.textCI +
			`, grp ` + d.text + `, qty ` + d.integer + `, price ` + d.real + `, flag ` + d.boolean +
			`, ts_text ` + d.ts[asText] + `, ts ` + d.ts[asTimestamp] + `, tstz ` + d.ts[asZoned] + `, props ` + d.json +
			`, day ` + d.date + `)` + d.tableOptions,
		`CREATE VIEW items_j AS SELECT id, grp, qty, ts_text, ` +
			d.jtext("props", "plan") + ` AS plan, ` +
			d.jnum("props", "n") + ` AS n, ` +
			d.jtext("props", "n") + ` AS n_text, ` +
			d.jtext("props", "s") + ` AS s, ` +
			d.jtext("props", "z") + ` AS z, ` +
			d.jtext("props", "b") + ` AS b, ` +
			d.jtext("props", "u") + ` AS u, ` +
			d.jtext("props", "sp") + ` AS sp, ` +
			d.jtext("props", "c") + ` AS c, ` +
			d.jtext("props", "missing") + ` AS missing FROM items`,
	}
}

// eventsDDL creates the events table of storage s on d: examples/demo's own
// schema for text timestamps (so the test loads the demo as a user does),
// the same columns with a typed timestamp otherwise. The view events_p
// shows the demo properties as columns.
func eventsDDL(d *dialect, s storage) []string {
	var stmts []string
	if s == asText {
		stmts = demo.SchemaFor(d.e)
	} else {
		cols := make([]string, len(demo.Columns))
		for i, c := range demo.Columns {
			typ := d.e.Type(c.Kind)
			if c.Name == "timestamp" {
				typ = d.ts[s]
			}
			cols[i] = d.e.QuoteIdent(c.Name) + " " + typ
		}
		stmts = []string{"CREATE TABLE events (" + strings.Join(cols, ", ") + ")" + d.tableOptions}
	}
	return append(stmts, `CREATE VIEW events_p AS SELECT project_id, uuid, event, distinct_id, `+d.e.QuoteIdent("timestamp")+`, `+
		d.jtext("properties", "country")+` AS country, `+
		d.jtext("properties", "plan")+` AS plan, `+
		d.jtext("properties", "$browser")+` AS browser, `+
		d.jnum("properties", "amount")+` AS amount FROM events`)
}

// edgeEvents are crafted events added to the demo events: breakdown and
// property values where engines part, at bucket boundaries inside the
// insights' date ranges.
var edgeEvents = []struct {
	event, who, at, props string
}{
	{"$pageview", "edge-1", "2025-05-05 00:00:00", `{"$browser":"Chrome ","country":"US"}`},
	{"$pageview", "edge-1", "2025-05-05 23:59:59", `{"$browser":"chrome","country":"us"}`},
	{"$pageview", "edge-2", "2025-05-04 23:59:59", `{"$browser":null,"country":"DE"}`},
	{"$pageview", "edge-2", "2025-05-06 12:00:00", `{"country":"DE"}`},
	{"$pageview", "edge-3", "2025-05-06 00:00:00", `{"$browser":"","country":""}`},
	{"$pageview", "edge-3", "2025-05-12 00:00:00", `{"$browser":"Ünïcode","country":"FR "}`},
	{"$pageview", "edge-4", "2025-05-01 00:00:00", `{"$browser":12,"country":"GB"}`},
	{"$pageview", "edge-4", "2025-05-31 23:59:59", `{"$browser":"12","country":"GB"}`},
	{"$pageview", "edge-5", "2025-04-30 23:59:59", `{"$browser":"CHROME","country":"US"}`},
	{"$pageview", "edge-5", "2025-05-19 00:00:00", `{"$browser":"Safari","country":"null"}`},
	{"signed_up", "edge-6", "2025-05-20 00:00:00", `{"$browser":"Chrome ","country":"US"}`},
	{"$pageview", "edge-6", "2025-05-21 00:00:00", `{"$browser":"Chrome ","country":"US"}`},
	{"$pageview", "edge-6", "2025-05-27 09:00:00", `{"$browser":"Chrome ","country":"US"}`},
	{"signed_up", "edge-7", "2025-05-22 23:59:59", `{"$browser":"ünïcode","country":"FR"}`},
	{"$pageview", "edge-7", "2025-05-23 00:00:00", `{"$browser":"ünïcode","country":"FR"}`},
	{"purchase", "edge-8", "2025-05-05 00:00:00", `{"$browser":"Chrome","country":"US","amount":"50"}`},
	{"purchase", "edge-8", "2025-05-06 00:00:00", `{"$browser":"Chrome","country":"US","amount":null}`},
	{"purchase", "edge-8", "2025-05-07 00:00:00", `{"$browser":"Chrome","country":"US","amount":2.5}`},
	{"purchase", "edge-9", "2025-05-08 00:00:00", `{"$browser":"Chrome ","country":"US","amount":-3}`},
	{"purchase", "edge-9", "2025-05-09 00:00:00", `{"$browser":"Firefox","country":"DE","amount":true}`},
	{"purchase", "edge-9", "2025-05-10 00:00:00", `{"$browser":"Firefox","country":"DE","amount":"1e3"}`},
	{"$pageview", "edge-10", "2025-03-31 23:59:59", `{"$browser":"Edge","country":"GB","plan":"pro"}`},
	{"$pageview", "edge-10", "2025-04-01 00:00:00", `{"$browser":"Edge","country":"GB","plan":"Pro"}`},
}

// load creates the fixture of storage s on db (whose session is UTC):
// the events table with demoEvents demo events of project "1" and the edge
// events, and, for text storage, the items table.
func load(ctx context.Context, db *sql.DB, d *dialect, s storage, demoEvents int) error {
	return loadVia(ctx, sqlExec{db}, d, s, demoEvents)
}

// sqlExec is a database/sql pool as a demo.Loader.
type sqlExec struct{ db *sql.DB }

func (x sqlExec) Load(ctx context.Context, query string, args []any) error {
	_, err := x.db.ExecContext(ctx, query, args...)
	return err
}

// loadVia is load through x: a pool (sqlExec), or an executor on a
// database of its own (ClickHouse).
func loadVia(ctx context.Context, x demo.Loader, d *dialect, s storage, demoEvents int) error {
	stmts := eventsDDL(d, s)
	if s == asText {
		stmts = append(stmts, itemsDDL(d)...)
	}
	for _, q := range stmts {
		if err := x.Load(ctx, q, nil); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	var err error
	if pool, ok := x.(sqlExec); ok {
		err = demo.Insert(ctx, pool.db, d.e, "1", demoEvents, 42)
	} else {
		err = demo.InsertWith(ctx, x, d.e, "1", demoEvents, 42)
	}
	if err != nil {
		return err
	}
	var rows [][]any
	for i, ev := range edgeEvents {
		rows = append(rows, []any{"1", fmt.Sprintf("edge-%04d", i), ev.event, ev.who, ev.at, ev.props})
	}
	if err := insertEvents(ctx, x, d.e, rows); err != nil {
		return err
	}
	if s != asText {
		return nil
	}
	rows = rows[:0]
	for _, it := range items {
		rows = append(rows, []any{it.id, it.name, it.name, it.grp, it.qty, it.price, it.flag, it.ts, it.ts, it.ts, it.props, d.dayOf(it.ts)})
	}
	return insert(ctx, x, d.e, "items", []string{"id", "name", "name_ci", "grp", "qty", "price", "flag", "ts_text", "ts", "tstz", "props", "day"}, rows)
}

// insertEvents inserts rows of events: project_id, uuid, event,
// distinct_id, timestamp (UTC text) and properties (JSON text).
func insertEvents(ctx context.Context, x demo.Loader, e engine.Engine, rows [][]any) error {
	for len(rows) > 0 {
		n := min(len(rows), 200)
		if err := insert(ctx, x, e, "events", []string{"project_id", "uuid", "event", "distinct_id", "timestamp", "properties"}, rows[:n]); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

// insert inserts rows into table, every value bound as the engine binds
// it; nil is written NULL, which every engine reads alike (a ClickHouse
// parameter has a type, and NULL none).
func insert(ctx context.Context, x demo.Loader, e engine.Engine, table string, cols []string, rows [][]any) error {
	q := []byte("INSERT INTO " + e.QuoteIdent(table) + " (")
	for i, c := range cols {
		if i > 0 {
			q = append(q, ", "...)
		}
		q = append(q, e.QuoteIdent(c)...)
	}
	q = append(q, ") VALUES "...)
	var args []any
	for i, row := range rows {
		if i > 0 {
			q = append(q, ", "...)
		}
		q = append(q, '(')
		for j, v := range row {
			if j > 0 {
				q = append(q, ", "...)
			}
			if v == nil {
				q = append(q, "NULL"...)
				continue
			}
			v, typ, err := e.Arg(v)
			if err != nil {
				return err
			}
			args = append(args, v)
			q = e.Marker(q, len(args), typ)
		}
		q = append(q, ')')
	}
	if err := x.Load(ctx, string(q), args); err != nil {
		return fmt.Errorf("insert into %s: %w", table, err)
	}
	return nil
}

// at parses a fixture time.
func at(s string) time.Time {
	t, err := time.Parse(demo.TimeLayout, s)
	if err != nil {
		panic(err)
	}
	return t
}
