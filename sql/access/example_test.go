package access_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/endpointkit/endpointkit/sql/access"
)

// A host allows the events table to every project, scoped by its
// project_id column, and one project a users table too, with two of its
// columns.
func ExampleNewStatic() {
	events := access.Table{Name: "events", TenantColumn: "project_id"}
	policy, err := access.NewStatic(
		access.Rules{Tables: []access.Table{events}},
		map[string]access.Rules{"7": {Tables: []access.Table{
			events,
			{Name: "users", Columns: []string{"id", "name"}, TenantColumn: "project_id"},
		}}},
	)
	if err != nil {
		panic(err)
	}
	rules, _ := policy.Rules(context.Background(), "1")
	fmt.Println(access.Check("SELECT count(*) FROM users", rules))
	rules, _ = policy.Rules(context.Background(), "7")
	fmt.Println(access.Check("SELECT count(*) FROM users", rules))
	// Output:
	// access: the query reads table "users", which endpoints of this project may not read (line 1, column 22)
	// <nil>
}

func ExampleCheck() {
	rules := &access.Rules{Tables: []access.Table{{Name: "events"}}}
	for _, q := range []string{
		"SELECT event, count(*) FROM events WHERE timestamp >= {variables.from} GROUP BY event",
		"SELECT * FROM events WHERE uuid IN (SELECT name FROM sqlite_master)",
		"SELECT pg_read_file('/etc/passwd')",
		"SELECT * FROM events; DELETE FROM events",
	} {
		err := access.Check(q, rules)
		var e *access.Error
		if errors.As(err, &e) {
			fmt.Printf("%s table=%q function=%q\n", e.Reason, e.Table, e.Function)
			continue
		}
		fmt.Println(err)
	}
	// Output:
	// <nil>
	// system_catalog table="sqlite_master" function=""
	// function_not_allowed table="" function="pg_read_file"
	// not_a_single_select table="" function=""
}

func ExampleConfine() {
	rules := &access.Rules{Tables: []access.Table{{Name: "events", TenantColumn: "project_id"}}}
	q, err := access.Confine(
		"SELECT a.distinct_id, count(*) FROM events a JOIN events b ON b.distinct_id = a.distinct_id GROUP BY 1",
		rules, "__endpointkit_tenant")
	if err != nil {
		panic(err)
	}
	fmt.Println(q)
	// Output:
	// SELECT a.distinct_id, count(*) FROM (SELECT * FROM events WHERE events.project_id = {variables.__endpointkit_tenant}) AS a JOIN (SELECT * FROM events WHERE events.project_id = {variables.__endpointkit_tenant}) AS b ON b.distinct_id = a.distinct_id GROUP BY 1
}
