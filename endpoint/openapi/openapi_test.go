package openapi_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/openapi"
	"github.com/endpointkit/endpointkit/insight"
	"github.com/endpointkit/endpointkit/internal/openapitest"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
)

const path = "/api/projects/1/endpoints/daily/run"

// sqlSchema has a variable of every type.
var sqlSchema = endpoint.RunSchema{
	Name: "daily", Description: "Daily purchases", Kind: endpoint.KindSQL, Version: 2, IsCurrent: true,
	Variables: []endpoint.RunVariable{
		{CodeName: "country", Name: "Country", Type: variable.String, Required: true},
		{CodeName: "from", Name: "From", Type: variable.Date, Required: true},
		{CodeName: "min", Name: "Min", Type: variable.Number, Required: true},
		{CodeName: "paid", Name: "Paid", Type: variable.Boolean, Required: true},
		{CodeName: "plan", Name: "Plan", Type: variable.List, Values: []string{"free", "pro"}, Required: true},
		{CodeName: "plans", Name: "Plans", Type: variable.List, Values: []string{"free", "pro"}, IsMulti: true, Required: true},
	},
	Columns: []string{"day", "purchases"}, Types: []string{"TEXT", "INTEGER"},
	DefaultLimit: 1000, MaxLimit: 50000,
}

// load validates doc as an OpenAPI 3.0.3 document and returns it with a
// function that tells whether it accepts a run request's body at path.
func load(t *testing.T, doc map[string]any) (*openapi3.T, func(body string) error) {
	t.Helper()
	b, err := json.Marshal(doc)
	require.NoError(t, err)
	d, validate := openapitest.Validator(t, b)
	return d, func(body string) error { return validate(path, body) }
}

// TestNumberKeepsItsValue: a Number variable is a double, so that a
// generated client does not type it float32 (oapi-codegen did, and sent
// 123456790 for 123456789).
func TestNumberKeepsItsValue(t *testing.T) {
	d, validate := load(t, openapi.Document(sqlSchema, openapi.Options{Path: path}))
	body := d.Paths.Find(path).Post.RequestBody.Value.Content["application/json"].Schema.Value
	min := body.Properties["variables"].Value.Properties["min"].Value
	require.Equal(t, "number", min.Type.Slice()[0], "min: type %v format", min.Type)
	require.Equal(t, "double", min.Format, "min: type %v format", min.Type)
	require.NoError(t, validate(`{"variables": {"country": "US", "from": "2025-05-01", "min": 123456789, "paid": true, "plan": "pro", "plans": ["pro"]}}`), "a large integer is refused")
}

// TestDocumentSQL: a valid document whose request schema accepts what the
// server accepts and refuses, case by case, what it refuses.
func TestDocumentSQL(t *testing.T) {
	d, validate := load(t, openapi.Document(sqlSchema, openapi.Options{Path: path}))
	op := d.Paths.Find(path).Post
	require.NotNil(t, op, "operation %+v, info %+v", op, d.Info)
	require.Equal(t, "run_daily", op.OperationID, "operation %+v, info %+v", op, d.Info)
	require.Equal(t, "2", d.Info.Version, "operation %+v, info %+v", op, d.Info)
	require.Equal(t, "bearer", d.Components.SecuritySchemes["bearerAuth"].Value.Scheme, "no Bearer scheme")
	require.Len(t, d.Security, 1, "no Bearer scheme")
	answer := op.Responses.Value("200").Value.Content.Get("application/json").Schema.Value
	cols := answer.Properties["columns"].Value
	if got := cols.Items.Value.Enum; len(got) != 2 || got[0] != "day" || got[1] != "purchases" {
		t.Fatalf("columns enum %v", got)
	}
	rows := answer.Properties["results"].Value.Items.Value
	require.Equal(t, uint64(2), rows.MinItems, "row schema %+v", rows)
	require.Equal(t, uint64(2), *rows.MaxItems, "row schema %+v", rows)
	good := `"country": "US", "from": "2025-05-01", "min": 1.5, "paid": true, "plan": "pro", "plans": ["free", "pro"]`
	for _, tc := range []struct {
		name, body string
		ok         bool
	}{
		{"every variable", `{"variables": {` + good + `}}`, true},
		{"options", `{"variables": {` + good + `}, "limit": 10, "offset": 5, "refresh": "force", "debug": true, "version": 2}`, true},
		{"date-time", `{"variables": {"country": "US", "from": "2025-05-01T10:00:00Z", "min": 1, "paid": false, "plan": "free", "plans": ["pro"]}}`, true},
		{"date and time with a space", `{"variables": {"country": "US", "from": "2025-05-01 10:00", "min": 1, "paid": false, "plan": "free", "plans": ["pro"]}}`, true},
		{"relative date", `{"variables": {"country": "US", "from": "-7d", "min": 1, "paid": false, "plan": "free", "plans": ["pro"]}}`, true},
		{"month start", `{"variables": {"country": "US", "from": "-1mStart", "min": 1, "paid": false, "plan": "free", "plans": ["pro"]}}`, true},
		{"missing variable", `{"variables": {"country": "US"}}`, false},
		{"no variables", `{}`, false},
		{"unknown variable", `{"variables": {` + good + `, "x": 1}}`, false},
		{"unknown option", `{"variables": {` + good + `}, "limti": 10}`, false},
		{"number as bool", `{"variables": {"country": "US", "from": "2025-05-01", "min": 1, "paid": 1, "plan": "free", "plans": ["pro"]}}`, false},
		{"not a date", `{"variables": {"country": "US", "from": "yesterday", "min": 1, "paid": true, "plan": "free", "plans": ["pro"]}}`, false},
		{"option not listed", `{"variables": {"country": "US", "from": "2025-05-01", "min": 1, "paid": true, "plan": "gold", "plans": ["pro"]}}`, false},
		{"empty multi list", `{"variables": {"country": "US", "from": "2025-05-01", "min": 1, "paid": true, "plan": "free", "plans": []}}`, false},
		{"limit too large", `{"variables": {` + good + `}, "limit": 50001}`, false},
		{"negative offset", `{"variables": {` + good + `}, "offset": -1}`, false},
		{"direct on an endpoint not materialized", `{"variables": {` + good + `}, "refresh": "direct"}`, false},
		{"another version", `{"variables": {` + good + `}, "version": 1}`, false},
	} {
		err := validate(tc.body)
		assert.Equal(t, tc.ok, err == nil, "%s: %s: valid %v (%v), want %v", tc.name, tc.body, err == nil, err, tc.ok)
	}
}

// TestDocumentFixedAndVersion: an embed token's view leaves its fixed
// variables out; a document of an older version requires that version.
func TestDocumentFixedAndVersion(t *testing.T) {
	old := sqlSchema
	old.IsCurrent, old.Version = false, 1
	_, validate := load(t, openapi.Document(old, openapi.Options{Path: path, Fixed: []string{"country", "plan", "plans"}}))
	vars := `"from": "2025-05-01", "min": 1, "paid": true`
	require.NoError(t, validate(`{"variables": {`+vars+`}, "version": 1}`), "the token's request")
	require.Error(t, validate(`{"variables": {`+vars+`, "country": "US"}, "version": 1}`), "a fixed variable is in the token's view")
	require.Error(t, validate(`{"variables": {`+vars+`}}`), "a document of version 1 accepted a run of the current version")
}

// TestDocumentInsight: an insight endpoint takes no limit or offset; its
// variables may be omitted; a materialized one takes direct.
func TestDocumentInsight(t *testing.T) {
	rs := endpoint.RunSchema{Name: "trends-by-browser", Kind: endpoint.KindTrends, Version: 1, IsCurrent: true, Materialized: true,
		Variables:    []endpoint.RunVariable{{CodeName: "$browser", Name: "$browser", Type: variable.String, Required: true}},
		DefaultLimit: 1000, MaxLimit: 50000, Columns: []string{}, Types: []string{}}
	d, validate := load(t, openapi.Document(rs, openapi.Options{Path: path}))
	require.Equal(t, "run_trends_by_browser", d.Paths.Find(path).Post.OperationID, "operationId")
	for body, ok := range map[string]bool{
		`{"variables": {"$browser": "Chrome"}, "refresh": "direct"}`: true,
		`{"variables": {"$browser": "Chrome"}, "limit": 1}`:          false,
		`{"variables": {}}`: false,
		`{"variables": {"$browser": "Chrome", "date_from": "-7d"}}`: false,
	} {
		err := validate(body)
		assert.Equal(t, ok, err == nil, "%s: valid %v (%v), want %v", body, err == nil, err, ok)
	}
	retention := rs
	retention.Kind, retention.Materialized, retention.Variables = endpoint.KindRetention, false, []endpoint.RunVariable{
		{CodeName: "date_from", Name: "date_from", Type: variable.Date},
	}
	_, validate = load(t, openapi.Document(retention, openapi.Options{Path: path}))
	require.NoError(t, validate(``), "an empty body, with no variable required")
}

// TestDocumentLifecycle: a lifecycle endpoint's document describes
// PostHog's four status series, and a lifecycle result fits it.
func TestDocumentLifecycle(t *testing.T) {
	rs := endpoint.RunSchema{Name: "lifecycle", Kind: endpoint.KindLifecycle, Version: 1, IsCurrent: true,
		Variables:    []endpoint.RunVariable{{CodeName: "date_from", Name: "date_from", Type: variable.Date}, {CodeName: "date_to", Name: "date_to", Type: variable.Date}},
		DefaultLimit: 1000, MaxLimit: 50000, Columns: []string{}, Types: []string{}}
	d, validate := load(t, openapi.Document(rs, openapi.Options{Path: path}))
	require.NoError(t, validate(`{"variables": {"date_from": "-30d"}}`))
	results := d.Paths.Find(path).Post.Responses.Status(200).Value.Content["application/json"].Schema.Value.Properties["results"].Value
	q, err := insight.Decode([]byte(`{"kind":"LifecycleQuery","series":[{"kind":"EventsNode","event":"$pageview"}],"dateRange":{"date_from":"2025-05-01","date_to":"2025-05-02"}}`))
	require.NoError(t, err)
	c, err := insight.Compile(q, engine.SQLite, time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	res, err := c.Shape([][]any{{int64(0), int64(1), int64(3)}, {int64(3), int64(2), int64(1)}})
	require.NoError(t, err)
	var v any
	b, _ := json.Marshal(res)
	require.NoError(t, json.Unmarshal(b, &v))
	require.NoError(t, results.VisitJSON(v), "a lifecycle result does not fit its schema\n%s", b)
	trends := []any{map[string]any{"label": "x", "count": 1.0, "data": []any{1.0}, "days": []any{"2025-05-01"}, "labels": []any{"1-May-2025"}}}
	require.Error(t, results.VisitJSON(trends), "a trends result fits the lifecycle schema")
}

// TestDocumentFormats: the request takes "format" (json and each format
// given, for a SQL endpoint; json alone for an insight), refuses another,
// and the answer names each format's media type and the headers of the
// columns and types.
func TestDocumentFormats(t *testing.T) {
	formats := []openapi.Format{{Name: "csv", MediaType: "text/csv"}, {Name: "ndjson", MediaType: "application/x-ndjson"},
		{Name: "parquet", MediaType: "application/vnd.apache.parquet", Binary: true}}
	d, validate := load(t, openapi.Document(sqlSchema, openapi.Options{Path: path, Formats: formats}))
	good := `{"variables": {"country": "US", "from": "2025-05-01", "min": 1, "paid": true, "plan": "pro", "plans": ["pro"]}`
	for _, tc := range []struct {
		format string
		ok     bool
	}{{"json", true}, {"csv", true}, {"ndjson", true}, {"parquet", true}, {"xml", false}, {"CSV", false}} {
		err := validate(good + `, "format": "` + tc.format + `"}`)
		assert.Equal(t, tc.ok, err == nil, "format %s: valid %v (%v), want %v", tc.format, err == nil, err, tc.ok)
	}
	ok := d.Paths.Find(path).Post.Responses.Value("200").Value
	for _, f := range formats {
		mt := ok.Content.Get(f.MediaType)
		require.NotNil(t, mt, "no %s answer", f.MediaType)
		got := mt.Schema.Value.Format
		assert.Equal(t, f.Binary, got == "binary", "%s: format %q", f.Name, got)
	}
	for _, h := range []string{"X-Endpointkit-Columns", "X-Endpointkit-Types", "X-Endpointkit-Has-More"} {
		assert.NotNil(t, ok.Headers[h], "no header %s", h)
	}

	// An insight answers JSON only.
	ins := endpoint.RunSchema{Name: "daily", Kind: endpoint.KindTrends, Version: 1, IsCurrent: true, Columns: []string{}, Types: []string{}}
	d, validate = load(t, openapi.Document(ins, openapi.Options{Path: path, Formats: formats}))
	assert.Error(t, validate(`{"format": "csv"}`), "an insight's document accepts format csv")
	assert.NoError(t, validate(`{"format": "json"}`), "an insight's document refuses format json")
	assert.Len(t, d.Paths.Find(path).Post.Responses.Value("200").Value.Content, 1, "an insight answers JSON only")
}
