package placeholder_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
)

func ExampleScan() {
	phs, err := placeholder.Scan(`SELECT count(*) FROM events
WHERE event = { variables.event } -- not {variables.here}
  AND country IN {variables.countries}
  AND properties = '{variables.nor_here}'`)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range phs {
		fmt.Printf("%s at line %d, column %d, in list: %v\n", p.Name, p.Line, p.Column, p.InList)
	}

	_, err = placeholder.Scan("SELECT *\nFROM events WHERE event = {variables.}")
	fmt.Println(err, errors.Is(err, placeholder.ErrSyntax))
	// Output:
	// event at line 2, column 15, in list: false
	// countries at line 3, column 18, in list: true
	// placeholder: line 2, column 38: missing code name after "variables." true
}

func ExampleCompile() {
	t, err := placeholder.Compile("SELECT * FROM events WHERE event = {variables.event} AND {variables.event} <> {variables.other}")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(t.Names())
	// Output: [event other]
}

func ExampleTemplate_Render() {
	t, err := placeholder.Compile(`SELECT count(*) FROM events
WHERE timestamp >= {variables.since} AND event = {variables.event}
  AND country IN {variables.countries} AND {variables.event} <> ''`)
	if err != nil {
		fmt.Println(err)
		return
	}
	values := map[string]any{
		"since":     variable.Timestamp{Time: time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC), DateOnly: true},
		"event":     "signed_up",
		"countries": []string{"FR", "DE"},
	}
	for _, d := range []engine.Engine{engine.SQLite, engine.MySQL, engine.PostgreSQL, engine.ClickHouse} {
		query, args, err := t.Render(d, values)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s:\n%s\n%v\n", d.Name(), query, args)
	}
	// Output:
	// sqlite:
	// SELECT count(*) FROM events
	// WHERE timestamp >= ? AND event = ?
	//   AND country IN (?, ?) AND ? <> ''
	// [2025-05-01 signed_up FR DE signed_up]
	// mysql:
	// SELECT count(*) FROM events
	// WHERE timestamp >= ? AND event = ?
	//   AND country IN (?, ?) AND ? <> ''
	// [2025-05-01 signed_up FR DE signed_up]
	// postgresql:
	// SELECT count(*) FROM events
	// WHERE timestamp >= $1 AND event = $2
	//   AND country IN ($3, $4) AND $2 <> ''
	// [2025-05-01 signed_up FR DE]
	// clickhouse:
	// SELECT count(*) FROM events
	// WHERE timestamp >= {p1:String} AND event = {p2:String}
	//   AND country IN ({p3:String}, {p4:String}) AND {p2:String} <> ''
	// [2025-05-01 signed_up FR DE]
}

func ExampleTemplate_Render_errors() {
	t, err := placeholder.Compile("SELECT * FROM events WHERE event = {variables.event}")
	if err != nil {
		fmt.Println(err)
		return
	}
	_, _, err = t.Render(engine.SQLite, map[string]any{})
	fmt.Println(err)
	_, _, err = t.Render(engine.SQLite, map[string]any{"event": []string{"a", "b"}})
	fmt.Println(errors.Is(err, placeholder.ErrListPosition))
	// Output:
	// placeholder: variable "event" at line 1, column 36: missing value
	// true
}

func ExampleTemplate_CheckLists() {
	t, err := placeholder.Compile("SELECT * FROM events WHERE country = {variables.countries}")
	if err != nil {
		fmt.Println(err)
		return
	}
	isMulti := func(codeName string) bool { return codeName == "countries" }
	fmt.Println(t.CheckLists(isMulti))
	// Output:
	// placeholder: variable "countries" at line 1, column 38: list value outside IN: a multi-valued list renders only as IN {variables.countries} or IN ({variables.countries})
}

func ExampleBuilder() {
	b := placeholder.NewBuilder(engine.PostgreSQL)
	b.WriteString("SELECT ")
	b.WriteIdent("country")
	b.WriteString(", count(*) FROM events WHERE event = ")
	b.Bind("purchase")
	b.WriteString(" AND country IN (")
	b.Bind([]string{"FR", "DE"})
	b.WriteString(") GROUP BY 1")
	if err := b.Err(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(b.SQL())
	fmt.Println(b.Args())
	// Output:
	// SELECT "country", count(*) FROM events WHERE event = $1 AND country IN ($2, $3) GROUP BY 1
	// [purchase FR DE]
}

func ExampleTemplate_Statement() {
	for _, sql := range []string{
		"SELECT * FROM events WHERE event = {variables.event}; -- latest first?\n",
		"SELECT 1;\nDROP TABLE events",
	} {
		t, err := placeholder.Compile(sql)
		if err != nil {
			fmt.Println(err)
			return
		}
		st := t.Statement()
		if st.Second >= 0 {
			fmt.Printf("second statement after the ';' at line %d, column %d\n", st.Line, st.Column)
			continue
		}
		fmt.Printf("SELECT count(*) FROM (%s) AS q\n", st.Body)
	}
	// Output:
	// SELECT count(*) FROM (SELECT * FROM events WHERE event = {variables.event}) AS q
	// second statement after the ';' at line 1, column 9
}

func ExampleCompileFor() {
	const sql = `SELECT 'C:\' || path AS p FROM files WHERE owner = {variables.owner} -- not {variables.here}`
	_, err := placeholder.Compile(sql) // backslashes escape, as on MySQL
	fmt.Println(err)

	t, err := placeholder.CompileFor(engine.SQLite.Lexical(), sql) // SQLite has no escapes
	if err != nil {
		fmt.Println(err)
		return
	}
	q, args, _ := t.Render(engine.SQLite, map[string]any{"owner": "ana"})
	fmt.Println(q, args)
	for _, p := range t.Inert() {
		fmt.Printf("inert: %s at column %d\n", p.Name, p.Column)
	}
	// Output:
	// placeholder: line 1, column 8: string literal starting with ' is never closed
	// SELECT 'C:\' || path AS p FROM files WHERE owner = ? -- not {variables.here} [ana]
	// inert: here at column 77
}
