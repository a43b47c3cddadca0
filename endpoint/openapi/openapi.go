// Package openapi describes how to run an endpoint as an OpenAPI 3.0.3
// document, for client generators and API explorers: the run path, the
// Bearer scheme, the request body (each variable with its JSON type and
// format, the run options) and the answer, naming its columns.
//
// It does no I/O: Document takes the endpoint.RunSchema a Service gives
// (Service.RunSchema) and returns the document as a JSON-encodable value.
// The request schema is as strict as the server where JSON Schema can say
// it: unknown keys are refused (additionalProperties: false), as the
// server refuses them, and so are refresh modes, limits and versions the
// server would refuse.
package openapi

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/variable"
)

// Version is the OpenAPI version of the documents.
const Version = "3.0.3"

// Options say where the endpoint is run and for whom.
type Options struct {
	// Path is the run path, as a client requests it
	// ("/api/projects/1/endpoints/daily/run").
	Path string
	// Fixed names variables that the caller's credentials set (an embed
	// token's fixed variables): they are left out of the request schema,
	// since the token gives them.
	Fixed []string
	// Formats are the answer formats the server serves beside JSON (the
	// HTTP API's CSV and NDJSON, and those its host registered): each is a
	// value of the request's "format" and a media type of the answer of a
	// SQL endpoint. An insight answers JSON only.
	Formats []Format
	// ServerURL is where the API is reached ("https://api.example.com"),
	// the document's servers entry; none when "" (the host does not know
	// its base URL).
	ServerURL string
}

// Format is an answer format beside JSON: the request's "format" value
// that asks for it, and its media type (Content-Type, and Accept).
type Format struct {
	Name, MediaType string
	// Binary tells that the answer is not text (Parquet).
	Binary bool
}

// Document returns the OpenAPI document of running one version of an
// endpoint. A document of a version other than the current one requires
// that version in the request, so that a client generated from it keeps
// running what it was generated for.
func Document(rs endpoint.RunSchema, opts Options) map[string]any {
	op := obj{
		"operationId": "run_" + operationName(rs.Name),
		"summary":     "Run endpoint " + rs.Name,
		"requestBody": requestBody(rs, opts),
		"responses":   responses(rs, opts),
	}
	if rs.Description != "" {
		op["description"] = rs.Description
	}
	info := obj{
		"title":   "Endpoint " + rs.Name,
		"version": strconv.Itoa(rs.Version),
	}
	if rs.Description != "" {
		info["description"] = rs.Description
	}
	schemas := obj{"Error": errorSchema()}
	if rs.Kind == endpoint.KindSQL {
		schemas["Row"] = rowObject(rs)
	}
	doc := obj{
		"openapi": Version,
		"info":    info,
		"paths":   obj{opts.Path: obj{"post": op}},
		"components": obj{
			"securitySchemes": obj{"bearerAuth": obj{
				"type": "http", "scheme": "bearer",
				"description": "An API key of the project (a stored key needs the scope endpoint:read and, if it names endpoints, this one), or an embed token that names this endpoint.",
			}},
			"schemas": schemas,
		},
		"security": []any{obj{"bearerAuth": []any{}}},
	}
	if opts.ServerURL != "" {
		doc["servers"] = []any{obj{"url": opts.ServerURL}}
	}
	return doc
}

// columnSchema is the JSON type of the values of a column of kind k (null
// in every kind).
func columnSchema(k endpoint.ColumnKind) obj {
	var s obj
	switch k {
	case endpoint.KindInteger:
		s = obj{"type": "integer", "format": "int64"}
	case endpoint.KindFloat:
		s = obj{"type": "number", "format": "double"}
	case endpoint.KindDecimal:
		s = obj{"type": "string", "format": "decimal", "description": "An exact decimal, as text."}
	case endpoint.KindString:
		s = obj{"type": "string"}
	case endpoint.KindBoolean:
		s = obj{"type": "boolean"}
	case endpoint.KindTime:
		s = obj{"type": "string", "format": "date-time"}
	default:
		return obj{"nullable": true}
	}
	s["nullable"] = true
	return s
}

// kindAt is the kind of column i of rs, KindOther when unknown.
func kindAt(rs endpoint.RunSchema, i int) endpoint.ColumnKind {
	if i < len(rs.Kinds) {
		return rs.Kinds[i]
	}
	return endpoint.KindOther
}

// rowObject is a row as an object: each column by name (a repeated name
// with "_2", "_3", ..., as NDJSON and Parquet name it) with its JSON
// type. It is the line of an NDJSON answer, and what a client makes of a
// row of results, whose values are in the same order.
func rowObject(rs endpoint.RunSchema) obj {
	props := obj{}
	required := []any{}
	for i, name := range ColumnNames(rs.Columns) {
		col := columnSchema(kindAt(rs, i))
		if i < len(rs.Types) && rs.Types[i] != "" {
			col["description"] = "Column " + strconv.Itoa(i+1) + " of the results, of database type " + rs.Types[i] + "."
		}
		props[name] = col
		required = append(required, name)
	}
	s := obj{"type": "object", "properties": props, "additionalProperties": false,
		"description": "A row: each column by name (the columns in order: " + strings.Join(rs.Columns, ", ") + ")."}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// rowArray is a row of results: its values in column order. OpenAPI 3.0
// has no schema per position of an array (3.1's prefixItems), so every
// value has the one type of the columns when they share it (a generated
// client then reads [][]int64, say), and one of the columns' types
// otherwise; Row types each by name.
func rowArray(rs endpoint.RunSchema) obj {
	n := len(rs.Columns)
	var kinds []endpoint.ColumnKind
	for i := range n {
		if k := kindAt(rs, i); !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	items := obj{}
	switch {
	case len(kinds) == 1:
		items = columnSchema(kinds[0])
	case len(kinds) > 1 && !slices.Contains(kinds, endpoint.KindOther):
		var one []any
		for _, k := range kinds {
			one = append(one, columnSchema(k))
		}
		items = obj{"anyOf": one}
	}
	return obj{"type": "array", "minItems": n, "maxItems": n, "items": items,
		"description": "A row: its values in column order (" + strings.Join(rs.Columns, ", ") + "); #/components/schemas/Row types each by name."}
}

// ColumnNames are a run's columns as unique names, as the document names
// the fields of a row and as package httpapi answers in formats whose
// columns are keyed by name (Table.Names): a name that repeats an earlier
// one gets "_2", "_3", ... (the first that is free).
func ColumnNames(cols []string) []string {
	seen := make(map[string]bool, len(cols))
	out := make([]string, len(cols))
	for i, c := range cols {
		name := c
		for n := 2; seen[name]; n++ {
			name = c + "_" + strconv.Itoa(n)
		}
		seen[name] = true
		out[i] = name
	}
	return out
}

type obj = map[string]any

// RequestSchema returns the JSON Schema of the request body that runs the
// endpoint: the schema Document puts under the run's requestBody, with
// the variables opts.Fixed names left out. Package endpoint/mcp gives it
// as the input schema of the endpoint's tool.
func RequestSchema(rs endpoint.RunSchema, opts Options) map[string]any {
	return requestBody(rs, opts)["content"].(obj)["application/json"].(obj)["schema"].(obj)
}

// requestBody is the run request: variables and the run options the
// endpoint takes.
func requestBody(rs endpoint.RunSchema, opts Options) obj {
	fixed := map[string]bool{}
	for _, f := range opts.Fixed {
		fixed[f] = true
	}
	props := obj{}
	var required []any
	for _, v := range rs.Variables {
		if fixed[v.CodeName] {
			continue
		}
		props[v.CodeName] = variableSchema(v)
		if v.Required {
			required = append(required, v.CodeName)
		}
	}
	vars := obj{"type": "object", "properties": props, "additionalProperties": false,
		"description": "A value for each variable of the endpoint, by code name."}
	if len(required) > 0 {
		vars["required"] = required
	}
	refresh := []any{endpoint.RefreshCache, endpoint.RefreshForce}
	if rs.Materialized {
		refresh = append(refresh, endpoint.RefreshDirect)
	}
	body := obj{
		"variables": vars,
		"version": obj{"type": "integer", "enum": []any{rs.Version},
			"description": "The version to run; this document describes version " + strconv.Itoa(rs.Version) + "."},
		"refresh": obj{"type": "string", "enum": refresh, "default": endpoint.RefreshCache,
			"description": "cache: a fresh cached answer when there is one; force: computed now; direct (materialized endpoints): read from the stored table."},
		"debug": obj{"type": "boolean", "description": "Add the executed SQL and timings to the answer."},
	}
	formats := []any{"json"}
	if rs.Kind == endpoint.KindSQL {
		for _, f := range opts.Formats {
			formats = append(formats, f.Name)
		}
	}
	body["format"] = obj{"type": "string", "enum": formats, "default": "json",
		"description": "The format of the answer: json, or a format of rows (SQL endpoints) streamed with the columns and types in the headers " +
			"X-Endpointkit-Columns and X-Endpointkit-Types; Accept may ask for it too, and this field wins. A streamed answer cut after its first byte " +
			"ends with the trailer X-Endpointkit-Error and, in CSV, a last record of one field more than the header starting #endpointkit-error, " +
			"in NDJSON, a last line {\"error\": {\"code\", \"detail\"}}."}
	if rs.Kind == endpoint.KindSQL {
		body["limit"] = obj{"type": "integer", "minimum": 0, "maximum": rs.MaxLimit, "default": rs.DefaultLimit}
		body["offset"] = obj{"type": "integer", "minimum": 0, "default": 0}
	}
	schema := obj{"type": "object", "properties": body, "additionalProperties": false}
	var top []any
	if len(required) > 0 {
		top = append(top, "variables")
	}
	if !rs.IsCurrent {
		top = append(top, "version")
	}
	if len(top) > 0 {
		schema["required"] = top
	}
	return obj{
		"required": len(top) > 0,
		"content":  obj{"application/json": obj{"schema": schema}},
	}
}

// Patterns of the date grammar beyond JSON Schema's date and date-time
// formats: a date and time with a space or a T, seconds and zone optional;
// and relative dates (see variable.ParseDate).
const (
	dateTimePattern = `^[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,9})?)?(Z|[+-][0-9]{2}:[0-9]{2})?$`
	relativePattern = `^(-[0-9]+(h|[dwmy](Start|End)?)|[dwmy](Start|End))$`
)

// variableSchema is the JSON type and format of a variable's value.
func variableSchema(v endpoint.RunVariable) obj {
	var s obj
	switch v.Type {
	case variable.Number:
		// double: a generator reading a bare number may type it float32,
		// which cannot hold 123456789 (it sends 123456790).
		s = obj{"type": "number", "format": "double"}
	case variable.Boolean:
		s = obj{"type": "boolean"}
	case variable.Date:
		s = obj{"type": "string", "anyOf": []any{
			obj{"format": "date"},
			obj{"format": "date-time"},
			obj{"pattern": dateTimePattern},
			obj{"pattern": relativePattern},
		}, "example": "2025-05-01"}
	case variable.List:
		one := obj{"type": "string"}
		if len(v.Values) > 0 {
			enum := make([]any, len(v.Values))
			for i, x := range v.Values {
				enum[i] = x
			}
			one["enum"] = enum
		}
		if v.IsMulti {
			s = obj{"type": "array", "items": one, "minItems": 1}
		} else {
			s = one
		}
	default:
		s = obj{"type": "string"}
	}
	desc := v.Name
	switch {
	case v.Type == variable.Date:
		desc += ": " + variable.DateForms + "."
	case v.Name == v.CodeName:
		desc = ""
	}
	if desc != "" {
		s["description"] = desc
	}
	return s
}

// responses are the answer of a run and its errors.
func responses(rs endpoint.RunSchema, opts Options) obj {
	errRef := obj{"content": obj{"application/json": obj{"schema": obj{"$ref": "#/components/schemas/Error"}}}}
	withDesc := func(d string) obj {
		r := obj{"description": d}
		for k, v := range errRef {
			r[k] = v
		}
		return r
	}
	ok := obj{"description": "The answer of the run.", "content": obj{"application/json": obj{"schema": answerSchema(rs)}}}
	if rs.Kind == endpoint.KindSQL && len(opts.Formats) > 0 {
		content := ok["content"].(obj)
		for _, f := range opts.Formats {
			s := obj{"type": "string", "description": "The rows in " + f.Name + "; columns in order: " + strings.Join(rs.Columns, ", ") + "."}
			if f.Binary {
				s["format"] = "binary"
			}
			if f.Name == "ndjson" {
				s["description"] = "The rows in ndjson: a line a row, each an object as #/components/schemas/Row types it."
			}
			content[f.MediaType] = obj{"schema": s}
		}
		list := func(d string, example []string) obj {
			schema := obj{"type": "string"}
			if example != nil {
				b, _ := json.Marshal(example)
				schema["example"] = string(b)
			}
			return obj{"description": d, "schema": schema}
		}
		ok["headers"] = obj{
			"X-Endpointkit-Columns": list("Answers other than JSON: the column names (keys of NDJSON, Parquet), a JSON array of strings in ASCII: "+
				strings.Join(rs.Columns, ", ")+".", rs.Columns),
			"X-Endpointkit-Types":        list("Answers other than JSON: the database types of the columns, a JSON array of strings in ASCII, the same in every answer of this version.", rs.Types),
			"X-Endpointkit-Has-More":     list("Answers other than JSON: true when rows past the page exist (the JSON's hasMore).", nil),
			"X-Endpointkit-Execution-Id": list("Answers other than JSON: the run's execution_id.", nil),
		}
	}
	return obj{
		"200": ok,
		"400": withDesc("A variable is missing, unknown or of the wrong type, or an option is invalid."),
		"401": withDesc("No credential, or one that is not valid."),
		"403": withDesc("The credential may not run this endpoint, changes a variable its token fixes, or is an embed token asking for debug."),
		"404": withDesc("No such endpoint, version, or the endpoint is not active."),
		"429": withDesc("Too many runs (the project's limits, or the key's or the token's own budget, which the detail names); retry after the Retry-After header's seconds."),
		"502": withDesc("The database failed the query."),
		"504": withDesc("The query ran out of time."),
	}
}

// answerSchema is the run answer; for a SQL endpoint it names the columns.
func answerSchema(rs endpoint.RunSchema) obj {
	nullableTime := obj{"type": "string", "format": "date-time", "nullable": true}
	props := obj{
		"name":                     obj{"type": "string"},
		"endpoint_version":         obj{"type": "integer"},
		"hasMore":                  obj{"type": "boolean"},
		"endpoint_materialized":    obj{"type": "boolean"},
		"endpoint_materialized_at": obj{"type": "string", "format": "date-time"},
		"inline_reason": obj{"type": "string",
			"description": "Why a run of a materialized endpoint ran inline instead of reading its stored table; absent when the table answered."},
		"execution_id":                obj{"type": "string"},
		"endpoint_version_created_at": nullableTime,
		"is_cached":                   obj{"type": "boolean"},
		"last_refresh":                nullableTime,
		"statistics": obj{"type": "object", "nullable": true, "properties": obj{
			"elapsed_ms": obj{"type": "number"},
			"rows_read":  obj{"type": "integer", "nullable": true},
			"bytes_read": obj{"type": "integer", "nullable": true},
		}},
		"debug": obj{"type": "object", "properties": obj{
			"sql": obj{"type": "string"}, "arg_count": obj{"type": "integer"},
			"render_ms": obj{"type": "number"}, "execute_ms": obj{"type": "number"},
		}},
		"types": obj{"type": "array", "items": obj{"type": "string"}},
	}
	if rs.Kind == endpoint.KindSQL {
		cols := make([]any, len(rs.Columns))
		for i, c := range rs.Columns {
			cols[i] = c
		}
		order := strings.Join(rs.Columns, ", ")
		colSchema := obj{"type": "array", "items": obj{"type": "string"}, "example": cols,
			"description": "The columns, in order: " + order + "."}
		if len(cols) > 0 {
			colSchema["items"] = obj{"type": "string", "enum": uniq(cols)}
		}
		props["columns"] = colSchema
		props["results"] = obj{"type": "array", "description": "The rows, each an array of values in column order: " + order + ".",
			"items": rowArray(rs)}
		types := make([]any, len(rs.Types))
		for i, t := range rs.Types {
			types[i] = t
		}
		props["types"] = obj{"type": "array", "items": obj{"type": "string"}, "example": types,
			"description": "The database types of the columns, the same in every answer of this version."}
	} else {
		props["columns"] = obj{"type": "array", "maxItems": 0, "items": obj{"type": "string"}}
		props["results"] = insightResults(rs.Kind)
	}
	return obj{
		"type":       "object",
		"properties": props,
		"required":   []any{"name", "endpoint_version", "columns", "types", "results", "hasMore", "endpoint_materialized", "execution_id", "is_cached"},
	}
}

// insightResults is PostHog's shape of an insight result.
func insightResults(kind string) obj {
	if kind == endpoint.KindLifecycle {
		return obj{"type": "array", "description": "Lifecycle statuses: new, returning, resurrecting, dormant (negative).", "minItems": 4, "maxItems": 4,
			"items": obj{"type": "object", "properties": obj{
				"status": obj{"type": "string", "enum": []any{"new", "returning", "resurrecting", "dormant"}},
				"label":  obj{"type": "string"}, "count": obj{"type": "number"},
				"data": obj{"type": "array", "items": obj{"type": "number"}},
				"days": obj{"type": "array", "items": obj{"type": "string"}}, "labels": obj{"type": "array", "items": obj{"type": "string"}},
				"action": obj{"type": "object", "properties": obj{
					"id": obj{"type": "string", "nullable": true}, "name": obj{"type": "string"}, "type": obj{"type": "string"},
					"order": obj{"type": "integer"}, "math": obj{"type": "string"},
				}},
			}}}
	}
	if kind == endpoint.KindRetention {
		return obj{"type": "array", "description": "Retention cohorts.", "items": obj{"type": "object", "properties": obj{
			"date": obj{"type": "string"}, "label": obj{"type": "string"},
			"breakdown_value": obj{},
			"values": obj{"type": "array", "items": obj{"type": "object", "properties": obj{
				"count": obj{"type": "integer"}, "label": obj{"type": "string"},
			}}},
		}}}
	}
	return obj{"type": "array", "description": "Trends series.", "items": obj{"type": "object", "properties": obj{
		"label": obj{"type": "string"}, "breakdown_value": obj{}, "count": obj{"type": "number"},
		"data": obj{"type": "array", "items": obj{"type": "number"}},
		"days": obj{"type": "array", "items": obj{"type": "string"}}, "labels": obj{"type": "array", "items": obj{"type": "string"}},
	}}}
}

func errorSchema() obj {
	return obj{"type": "object", "required": []any{"detail", "code", "attr"}, "properties": obj{
		"detail": obj{"type": "string"},
		"code":   obj{"type": "string"},
		"attr":   obj{"type": "string", "nullable": true},
	}}
}

// operationName makes an operationId of an endpoint name, which may hold
// '-'.
func operationName(name string) string { return strings.ReplaceAll(name, "-", "_") }

func uniq(in []any) []any {
	seen := map[any]bool{}
	out := make([]any, 0, len(in))
	for _, v := range in {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}
