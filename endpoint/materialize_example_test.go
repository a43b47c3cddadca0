package endpoint_test

import (
	"context"
	"fmt"
	"log"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/variable"
)

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
	q.SQL = "SELECT count(*) FROM orders WHERE country LIKE {variables.country}"
	_, err = svc.Create(ctx, "1", endpoint.CreateRequest{Name: "like", Query: q, IsMaterialized: true})
	fmt.Println(err)
	// Output:
	// after create: true pending
	// inline: [[2 17]] false
	// after refresh: completed
	// stored: [[2 17]] true
	// Cannot materialize endpoint. Reason: variable 'country' is used with the operator LIKE; only =, >=, >, <, <= and IN can be materialized
}
