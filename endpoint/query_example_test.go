package endpoint_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/variable"
)

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
