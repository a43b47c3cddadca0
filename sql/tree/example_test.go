package tree_test

import (
	"fmt"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/tree"
)

// Parse reads a query into a tree; Print writes it back as it was
// written, and a Printer with a Scope writes every reference to a scoped
// table as the derived table that confines it to the tenant's rows.
func Example() {
	q := "SELECT e.event, count(*) AS n -- per event\nFROM events AS e\nWHERE e.timestamp >= {variables.from} - interval '7' day\nGROUP BY 1"
	t, err := tree.Parse(engine.PostgreSQL, q)
	if err != nil {
		fmt.Println(err)
		return
	}
	out, _ := tree.Print(t)
	fmt.Println(out == q)

	t.Bind([]tree.Table{{Parts: []string{"events"}, TenantColumn: "project_id"}})
	if _, err := tree.Print(t); err != nil {
		fmt.Println(err)
	}
	scoped, _ := tree.Printer{Scope: &tree.Scope{Tenant: "tenant"}}.Print(t)
	fmt.Println(scoped)

	_, err = tree.Parse(engine.PostgreSQL, "SELECT a\nFROM t\nWHERE b IN (1, 2")
	fmt.Println(err)
	// Output:
	// true
	// sql: the reference to table "events" must be printed with the tenant's scope, and the printer was given none (line 2, column 6)
	// SELECT e.event, count(*) AS n -- per event
	// FROM (SELECT * FROM events WHERE events.project_id = {variables.tenant}) AS e
	// WHERE e.timestamp >= {variables.from} - interval '7' day
	// GROUP BY 1
	// sql: expected ) to close the ( at line 3, column 12, found the end of the query (line 3, column 17)
}
