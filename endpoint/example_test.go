package endpoint_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"time"

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
func newExampleService(opts ...func(*endpoint.Config)) *endpoint.Service {
	return exampleService(`CREATE TABLE orders (id INTEGER, country TEXT, amount REAL);
		INSERT INTO orders VALUES (1, 'US', 10), (2, 'DE', 25.5), (3, 'US', 7), (4, 'FR', 12)`, opts...)
}

// exampleService returns a Service over in-memory stores and an in-memory
// SQLite database that ddl makes, whose Config each of opts sets further.
func exampleService(ddl string, opts ...func(*endpoint.Config)) *endpoint.Service {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		log.Fatal(err)
	}
	db.SetMaxOpenConns(1) // every connection to :memory: is a database of its own
	if _, err := db.Exec(ddl); err != nil {
		log.Fatal(err)
	}
	cfg := endpoint.Config{
		Endpoints: memstore.New(),
		Variables: variable.NewMemoryStore(),
		Executor:  sqlexec.New(db, engine.SQLite),
	}
	for _, o := range opts {
		o(&cfg)
	}
	svc, err := endpoint.New(cfg)
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

// An editor runs a query before it is saved: the test value of min_amount
// runs, country takes its default, and the answer says whether the query
// could be materialized once saved.
func ExampleService_RunQuery() {
	ctx := context.Background()
	svc := newExampleService()
	country, _ := svc.CreateVariable(ctx, "1", variable.Variable{Name: "Country", Type: variable.String, DefaultValue: "US"})
	amount, _ := svc.CreateVariable(ctx, "1", variable.Variable{Name: "Min amount", Type: variable.Number})
	var req endpoint.QueryRequest
	err := json.Unmarshal([]byte(`{"query": {
		"kind": "HogQLQuery",
		"query": "SELECT id, amount FROM orders WHERE country = {variables.country} AND amount >= {variables.min_amount} ORDER BY id",
		"variables": {
			"`+country.ID+`": {"variableId": "`+country.ID+`", "code_name": "country"},
			"`+amount.ID+`": {"variableId": "`+amount.ID+`", "code_name": "min_amount", "value": 8}
		}
	}}`), &req)
	if err != nil {
		log.Fatal(err)
	}
	res, err := svc.RunQuery(ctx, "1", req)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Placeholders, res.Columns, res.Results)
	for _, v := range res.Variables {
		fmt.Println(v.CodeName, v.Value, v.Source)
	}
	fmt.Println("can materialize:", res.Materialization.CanMaterialize)
	// Output:
	// [country min_amount] [id amount] [[1 10]]
	// country US default
	// min_amount 8 test
	// can materialize: true
}

func ExampleService_Materialize() {
	ctx := context.Background()
	svc := newExampleService()
	country, err := svc.CreateVariable(ctx, "1", variable.Variable{Name: "Country", Type: variable.String})
	if err != nil {
		log.Fatal(err)
	}
	q := &endpoint.Query{
		Kind:      endpoint.KindSQL,
		SQL:       "SELECT count(*) AS orders, sum(amount) AS revenue FROM orders WHERE country = {variables.country}",
		Variables: map[string]endpoint.VariableRef{country.ID: {VariableID: country.ID, CodeName: "country"}},
	}
	e, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "revenue", Query: q, IsMaterialized: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("after create:", e.Materialization.CanMaterialize, e.Materialization.Status)

	// Until the first refresh, runs go inline.
	req := endpoint.RunRequest{Variables: map[string]any{"country": "US"}}
	res, err := svc.Run(ctx, "1", "revenue", req)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("inline:", res.Results, res.EndpointMaterialized)

	if err := svc.Materialize(ctx, "1", "revenue"); err != nil {
		log.Fatal(err)
	}
	if e, err = svc.Get(ctx, "1", "revenue"); err != nil {
		log.Fatal(err)
	}
	fmt.Println("after refresh:", e.Materialization.Status)
	res, err = svc.Run(ctx, "1", "revenue", req)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("stored:", res.Results, res.EndpointMaterialized)

	// A query that cannot be materialized is refused with its reason.
	q.SQL = "SELECT count(*) FROM orders WHERE country GLOB {variables.country}"
	_, err = svc.Create(ctx, "1", endpoint.CreateRequest{Name: "like", Query: q, IsMaterialized: true})
	fmt.Println(err)
	// Output:
	// after create: true pending
	// inline: [[2 17]] false
	// after refresh: completed
	// stored: [[2 17]] true
	// Cannot materialize endpoint. Reason: variable 'country' is used with the operator GLOB; only =, !=, >=, >, <, <=, [NOT] IN, [NOT] LIKE and [NOT] ILIKE can be materialized
}

// A Service with a result cache answers a repeated run from it; the run
// log records both runs, newest first, without their values.
func ExampleConfig_resultCache() {
	ctx := context.Background()
	svc := newExampleService(func(c *endpoint.Config) { c.ResultCache = memstore.NewResultCache(16 << 20) })
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

// An insight endpoint needs no variables of its own: its breakdown
// properties and date_from/date_to are its variables, and each may be
// omitted.
func ExampleService_Run_insight() {
	ctx := context.Background()
	svc := exampleService(`CREATE TABLE events (uuid TEXT, event TEXT, distinct_id TEXT, timestamp TEXT, properties TEXT);
		INSERT INTO events VALUES
		('1', '$pageview', 'ann', '2025-05-01 09:00:00', '{"$browser": "Chrome"}'),
		('2', '$pageview', 'ann', '2025-05-02 10:00:00', '{"$browser": "Chrome"}'),
		('3', '$pageview', 'bob', '2025-05-03 23:59:59', '{"$browser": "Safari"}')`,
		func(c *endpoint.Config) {
			c.Now = func() time.Time { return time.Date(2025, 5, 4, 0, 0, 0, 0, time.UTC) }
		})
	var q endpoint.Query
	err := json.Unmarshal([]byte(`{"kind": "TrendsQuery",
		"series": [{"kind": "EventsNode", "event": "$pageview"}],
		"interval": "day",
		"dateRange": {"date_from": "2025-05-01", "date_to": "2025-05-03"},
		"breakdownFilter": {"breakdown": "$browser", "breakdown_type": "event"}}`), &q)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "pageviews", Query: &q}); err != nil {
		log.Fatal(err)
	}
	for _, vars := range []map[string]any{
		{"$browser": "Chrome"},
		{"$browser": "Safari", "date_from": "2025-05-03"},
		{"browser": "Chrome"},
	} {
		res, err := svc.Run(ctx, "1", "pageviews", endpoint.RunRequest{Variables: vars})
		if err != nil {
			fmt.Println(err)
			continue
		}
		out, _ := json.Marshal(res.Results)
		fmt.Println(string(out))
	}
	// Output:
	// [{"label":"Chrome","breakdown_value":"Chrome","count":2,"data":[1,1,0],"days":["2025-05-01","2025-05-02","2025-05-03"],"labels":["1-May-2025","2-May-2025","3-May-2025"]}]
	// [{"label":"Safari","breakdown_value":"Safari","count":1,"data":[1],"days":["2025-05-03"],"labels":["3-May-2025"]}]
	// Unknown variable(s): browser
}
