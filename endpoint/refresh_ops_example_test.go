package endpoint_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
)

// A Service with a result cache answers a repeated run from it; the run
// log records both runs, newest first, without their values.
func ExampleConfig_resultCache() {
	ctx := context.Background()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		log.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE orders (id INTEGER, country TEXT); INSERT INTO orders VALUES (1, 'US'), (2, 'DE'), (3, 'US')`); err != nil {
		log.Fatal(err)
	}
	svc, err := endpoint.New(endpoint.Config{
		Endpoints:   memstore.New(),
		Variables:   variable.NewMemoryStore(),
		Executor:    sqlexec.New(db, engine.SQLite),
		ResultCache: memstore.NewResultCache(16 << 20),
	})
	if err != nil {
		log.Fatal(err)
	}
	country, _ := svc.CreateVariable(ctx, "1", variable.Variable{Name: "Country", Type: variable.String})
	q := endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT id FROM orders WHERE country = {variables.country} ORDER BY id",
		Variables: map[string]endpoint.VariableRef{country.ID: {VariableID: country.ID, CodeName: "country"}}}
	if _, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "by_country", Query: &q}); err != nil {
		log.Fatal(err)
	}
	for range 2 {
		res, err := svc.Run(ctx, "1", "by_country", endpoint.RunRequest{Variables: map[string]any{"country": "US"}})
		if err != nil {
			log.Fatal(err)
		}
		rows, _ := json.Marshal(res.Results)
		fmt.Println("cached:", res.IsCached, "rows:", string(rows))
	}
	logs, _, _ := svc.Logs(ctx, "1", "by_country", 10, "")
	for _, e := range logs {
		fmt.Println("logged: status", e.Status, "cached", e.Cached, "rows", *e.Rows)
	}
	// Output:
	// cached: false rows: [[1],[3]]
	// cached: true rows: [[1],[3]]
	// logged: status 200 cached true rows 2
	// logged: status 200 cached false rows 2
}
