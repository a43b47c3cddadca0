package openapi_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/openapi"
)

// TestDocumentTypesColumns: each column of the answer has its JSON type,
// by name in the Row object and in the results rows (one type when the
// columns share it, so that a generated client reads [][]int64), and the
// document names its server when the host knows it; kin-openapi validates
// it.
func TestDocumentTypesColumns(t *testing.T) {
	rs := endpoint.RunSchema{Name: "daily", Kind: endpoint.KindSQL, Version: 1, IsCurrent: true,
		Columns: []string{"day", "n", "avg", "total", "ok"}, Types: []string{"TIMESTAMPTZ", "INT8", "FLOAT8", "NUMERIC", "BOOL"},
		Kinds:        []endpoint.ColumnKind{endpoint.KindTime, endpoint.KindInteger, endpoint.KindFloat, endpoint.KindDecimal, endpoint.KindBoolean},
		DefaultLimit: 100, MaxLimit: 1000}
	doc := openapi.Document(rs, openapi.Options{Path: "/run", ServerURL: "http://localhost:8080"})
	load(t, doc)
	assert.Equal(t, []any{map[string]any{"url": "http://localhost:8080"}}, doc["servers"])
	row := doc["components"].(map[string]any)["schemas"].(map[string]any)["Row"].(map[string]any)
	props := row["properties"].(map[string]any)
	assert.Equal(t, "integer", props["n"].(map[string]any)["type"])
	assert.Equal(t, "int64", props["n"].(map[string]any)["format"])
	assert.Equal(t, "number", props["avg"].(map[string]any)["type"])
	assert.Equal(t, "string", props["total"].(map[string]any)["type"])
	assert.Equal(t, "date-time", props["day"].(map[string]any)["format"])
	assert.Equal(t, "boolean", props["ok"].(map[string]any)["type"])

	ints := rs
	ints.Columns, ints.Types, ints.Kinds = []string{"a", "b"}, []string{"INT8", "INT8"}, []endpoint.ColumnKind{endpoint.KindInteger, endpoint.KindInteger}
	doc = openapi.Document(ints, openapi.Options{Path: "/run"})
	load(t, doc)
	_, hasServers := doc["servers"]
	assert.False(t, hasServers)
	answer := doc["paths"].(map[string]any)["/run"].(map[string]any)["post"].(map[string]any)["responses"].(map[string]any)["200"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
	items := answer["properties"].(map[string]any)["results"].(map[string]any)["items"].(map[string]any)["items"].(map[string]any)
	require.Equal(t, "integer", items["type"])
	assert.Equal(t, "int64", items["format"])
}
