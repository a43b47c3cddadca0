package openapi_test

import (
	"encoding/json"
	"fmt"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/openapi"
	"github.com/endpointkit/endpointkit/variable"
)

func ExampleDocument() {
	rs := endpoint.RunSchema{
		Name: "daily", Kind: endpoint.KindSQL, Version: 1, IsCurrent: true,
		Variables:    []endpoint.RunVariable{{CodeName: "event", Name: "Event", Type: variable.String, Required: true}},
		Columns:      []string{"day", "events"},
		DefaultLimit: 100, MaxLimit: 50000,
	}
	doc := openapi.Document(rs, openapi.Options{Path: "/api/projects/1/endpoints/daily/run"})
	post := doc["paths"].(map[string]any)["/api/projects/1/endpoints/daily/run"].(map[string]any)["post"].(map[string]any)
	schema := post["requestBody"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
	vars, _ := json.Marshal(schema["properties"].(map[string]any)["variables"])
	fmt.Println(doc["openapi"], post["operationId"])
	fmt.Println(string(vars))
	// Output:
	// 3.0.3 run_daily
	// {"additionalProperties":false,"description":"A value for each variable of the endpoint, by code name.","properties":{"event":{"description":"Event","type":"string"}},"required":["event"],"type":"object"}
}
