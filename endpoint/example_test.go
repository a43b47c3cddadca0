package endpoint_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	_ "modernc.org/sqlite"
)

// newExampleService returns a Service over in-memory stores and an
// in-memory SQLite database with a small orders table.
func newExampleService() *endpoint.Service {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		log.Fatal(err)
	}
	db.SetMaxOpenConns(1) // every connection to :memory: is a database of its own
	_, err = db.Exec(`CREATE TABLE orders (id INTEGER, country TEXT, amount REAL);
		INSERT INTO orders VALUES (1, 'US', 10), (2, 'DE', 25.5), (3, 'US', 7), (4, 'FR', 12)`)
	if err != nil {
		log.Fatal(err)
	}
	svc, err := endpoint.New(endpoint.Config{
		Endpoints: memstore.New(),
		Variables: variable.NewMemoryStore(),
		Executor:  sqlexec.New(db, engine.SQLite),
	})
	if err != nil {
		log.Fatal(err)
	}
	return svc
}

func ExampleService_Create() {
	ctx := context.Background()
	svc := newExampleService()
	country, err := svc.CreateVariable(ctx, "1", variable.Variable{Name: "Country", Type: variable.String})
	if err != nil {
		log.Fatal(err)
	}
	var q endpoint.Query
	err = json.Unmarshal([]byte(`{
		"kind": "HogQLQuery",
		"query": "SELECT id, amount FROM orders WHERE country = {variables.country} ORDER BY id",
		"variables": {"`+country.ID+`": {"variableId": "`+country.ID+`", "code_name": "country"}}
	}`), &q)
	if err != nil {
		log.Fatal(err)
	}
	e, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "orders_by_country", Query: &q})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(e.Name, "version", e.CurrentVersion, "active", e.IsActive)

	// A placeholder without a variable is refused when saved, not when run.
	bad := endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT * FROM orders WHERE amount > {variables.min_amount}"}
	_, err = svc.Create(ctx, "1", endpoint.CreateRequest{Name: "big_orders", Query: &bad})
	var eerr *endpoint.Error
	if errors.As(err, &eerr) {
		fmt.Println(eerr.Status, eerr.Code, eerr.Detail)
	}
	// Output:
	// orders_by_country version 1 active true
	// 400 undefined_variable Query references undefined variable(s): min_amount
}

func ExampleService_Run() {
	ctx := context.Background()
	svc := newExampleService()
	country, _ := svc.CreateVariable(ctx, "1", variable.Variable{Name: "Country", Type: variable.String})
	q := endpoint.Query{
		Kind: endpoint.KindSQL,
		SQL:  "SELECT id, amount FROM orders WHERE country = {variables.country} ORDER BY id",
		Variables: map[string]endpoint.VariableRef{
			country.ID: {VariableID: country.ID, CodeName: "country"},
		},
	}
	if _, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "orders_by_country", Query: &q}); err != nil {
		log.Fatal(err)
	}
	res, err := svc.Run(ctx, "1", "orders_by_country", endpoint.RunRequest{
		Variables: map[string]any{"country": "US"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Columns, res.Results, res.HasMore)

	// Every variable must be given: a default never fills in.
	_, err = svc.Run(ctx, "1", "orders_by_country", endpoint.RunRequest{})
	fmt.Println(err)
	// Output:
	// [id amount] [[1 10] [3 7]] false
	// Required variable(s) 'country' not provided
}

func ExampleService_Update() {
	ctx := context.Background()
	svc := newExampleService()
	minAmount, _ := svc.CreateVariable(ctx, "1", variable.Variable{Name: "min amount", Type: variable.Number})
	q := endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT count(*) AS n FROM orders"}
	if _, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "order_count", Query: &q}); err != nil {
		log.Fatal(err)
	}
	// A new query makes version 2; version 1 can still be run.
	q2 := endpoint.Query{
		Kind:      endpoint.KindSQL,
		SQL:       "SELECT count(*) AS n FROM orders WHERE amount >= {variables.min_amount}",
		Variables: map[string]endpoint.VariableRef{minAmount.ID: {CodeName: "min_amount"}},
	}
	e, err := svc.Update(ctx, "1", "order_count", endpoint.UpdateRequest{Query: &q2})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("current version", e.CurrentVersion)

	latest, _ := svc.Run(ctx, "1", "order_count", endpoint.RunRequest{Variables: map[string]any{"min_amount": "11"}})
	one := 1
	first, _ := svc.Run(ctx, "1", "order_count", endpoint.RunRequest{Version: &one})
	fmt.Println("v2:", latest.Results, "v1:", first.Results)

	// A value is checked against the variable's type before anything runs.
	_, err = svc.Run(ctx, "1", "order_count", endpoint.RunRequest{Variables: map[string]any{"min_amount": "lots"}})
	fmt.Println(err)
	// Output:
	// current version 2
	// v2: [[2]] v1: [[4]]
	// Invalid value for variable 'min_amount': expected Number, got "lots": not a number
}

func ExampleNewMemoryStore() {
	ctx := context.Background()
	store := memstore.New()
	e := driver.Endpoint{ID: "e1", ProjectID: "1", Name: "daily", CurrentVersion: 1, VersionsCount: 1,
		Query: driver.Query{Kind: endpoint.KindSQL, SQL: "SELECT 1"}}
	if err := store.Create(ctx, e, driver.Version{Number: 1, Query: e.Query}); err != nil {
		log.Fatal(err)
	}
	// A second endpoint of the same name in the project is a conflict.
	err := store.Create(ctx, driver.Endpoint{ID: "e2", ProjectID: "1", Name: "daily"}, driver.Version{Number: 1})
	fmt.Println(errors.Is(err, endpoint.ErrConflict))
	// Projects are isolated.
	_, err = store.Get(ctx, "2", "daily")
	fmt.Println(errors.Is(err, endpoint.ErrNotFound))
	// Output:
	// true
	// true
}
