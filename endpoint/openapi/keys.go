package openapi

import "github.com/endpointkit/endpointkit/endpoint/apikey"

// KeysDocument returns the OpenAPI document of the routes that create,
// list and revoke a project's stored API keys (apikey.Keys), under
// prefix (the httpapi.WithPrefix of the server, "" for none). The secret
// is in the answer of its creation only; a listed key shows its prefix.
func KeysDocument(prefix string) map[string]any {
	base := prefix + "/api/projects/{project_id}/keys/"
	errRef := obj{"content": obj{"application/json": obj{"schema": obj{"$ref": "#/components/schemas/Error"}}}}
	refusal := func(d string) obj {
		r := obj{"description": d}
		for k, v := range errRef {
			r[k] = v
		}
		return r
	}
	common := obj{
		"401": refusal("No credential, or an unknown or revoked key."),
		"403": refusal("The key is of another project, lacks the scope key:admin, or would give more than it has (a scope, an endpoint, a budget) or revoke a key that has more; attr names the field."),
	}
	with := func(extra obj) obj {
		out := obj{}
		for k, v := range common {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	project := obj{"name": "project_id", "in": "path", "required": true, "schema": obj{"type": "string"}}
	keyID := obj{"name": "key_id", "in": "path", "required": true, "schema": obj{"type": "string", "format": "uuid"}}
	json := func(ref string) obj {
		return obj{"application/json": obj{"schema": obj{"$ref": "#/components/schemas/" + ref}}}
	}
	return obj{
		"openapi": Version,
		"info": obj{
			"title":       "API keys",
			"version":     "1",
			"description": "Create, list and revoke the project's API keys for machines. Needs the scope key:admin, or one of the server's own keys.",
		},
		"paths": obj{
			base: obj{
				"parameters": []any{project},
				"post": obj{
					"operationId": "create_key",
					"summary":     "Create an API key; its secret is in this answer only",
					"requestBody": obj{"required": true, "content": json("CreateKeyRequest")},
					"responses": with(obj{
						"201": obj{"description": "The key, with its secret (key).", "content": json("CreatedKey")},
						"400": refusal("A field is missing or invalid (attr names it)."),
					}),
				},
				"get": obj{
					"operationId": "list_keys",
					"summary":     "List the project's API keys, revoked ones included, never their secrets",
					"responses": with(obj{
						"200": obj{"description": "The keys, oldest first.", "content": obj{"application/json": obj{"schema": obj{
							"type": "object", "required": []any{"results"},
							"properties": obj{"results": obj{"type": "array", "items": obj{"$ref": "#/components/schemas/Key"}}},
						}}}},
					}),
				},
			},
			base + "{key_id}": obj{
				"parameters": []any{project, keyID},
				"delete": obj{
					"operationId": "revoke_key",
					"summary":     "Revoke an API key, at once on this server and within the key cache bound on others",
					"responses": with(obj{
						"204": obj{"description": "Revoked (or revoked already)."},
						"404": refusal("No such key in the project."),
					}),
				},
			},
		},
		"components": obj{
			"securitySchemes": obj{"bearerAuth": obj{"type": "http", "scheme": "bearer",
				"description": "A stored API key with the scope key:admin, or one of the server's own keys."}},
			"schemas": obj{
				"Error":            errorSchema(),
				"Key":              keySchema(),
				"CreatedKey":       createdKeySchema(),
				"CreateKeyRequest": createKeySchema(),
			},
		},
		"security": []any{obj{"bearerAuth": []any{}}},
	}
}

// scopes is the enum of a scope.
func scopes() obj {
	enum := make([]any, len(apikey.Scopes))
	for i, s := range apikey.Scopes {
		enum[i] = s
	}
	return obj{"type": "string", "enum": enum}
}

// budget is a run budget: runs per period, -1 for none.
func budget(d string) obj {
	return obj{"type": "integer", "minimum": -1, "description": d}
}

func keyProps() obj {
	return obj{
		"id":                           obj{"type": "string", "format": "uuid"},
		"project_id":                   obj{"type": "string"},
		"name":                         obj{"type": "string"},
		"prefix":                       obj{"type": "string", "description": "The start of the secret, to tell keys apart."},
		"scopes":                       obj{"type": "array", "items": scopes()},
		"endpoints":                    obj{"type": "array", "items": obj{"type": "string"}, "nullable": true, "description": "The only endpoints the key may use; null for all."},
		"runs_per_minute":              budget("Runs answered inline per minute; -1 for no limit."),
		"runs_per_hour":                budget("Runs answered inline per hour; -1 for no limit."),
		"materialized_runs_per_minute": budget("Runs of materialized endpoints per minute; -1 for no limit."),
		"materialized_runs_per_hour":   budget("Runs of materialized endpoints per hour; -1 for no limit."),
		"created_at":                   obj{"type": "string", "format": "date-time"},
		"last_used_at":                 obj{"type": "string", "format": "date-time", "nullable": true},
		"revoked_at":                   obj{"type": "string", "format": "date-time", "nullable": true},
	}
}

var keyRequired = []any{"id", "project_id", "name", "prefix", "scopes", "endpoints", "runs_per_minute", "runs_per_hour",
	"materialized_runs_per_minute", "materialized_runs_per_hour", "created_at", "last_used_at", "revoked_at"}

func keySchema() obj {
	return obj{"type": "object", "required": keyRequired, "properties": keyProps(), "additionalProperties": false}
}

func createdKeySchema() obj {
	props := keyProps()
	props["key"] = obj{"type": "string", "description": "The secret: send it as 'Authorization: Bearer <key>'. It is shown this once."}
	return obj{"type": "object", "required": append(append([]any{}, keyRequired...), "key"), "properties": props, "additionalProperties": false}
}

func createKeySchema() obj {
	return obj{
		"type": "object", "required": []any{"name", "scopes"}, "additionalProperties": false,
		"properties": obj{
			"name":   obj{"type": "string", "minLength": 1, "maxLength": apikey.MaxNameLength},
			"scopes": obj{"type": "array", "minItems": 1, "items": scopes()},
			"endpoints": obj{"type": "array", "minItems": 1, "maxItems": apikey.MaxEndpoints, "nullable": true,
				"items":       obj{"type": "string", "pattern": "^[a-zA-Z][a-zA-Z0-9_-]{0,127}$"},
				"description": "The only endpoints the key may use; leave out for every endpoint of the project."},
			"runs_per_minute":              budget("0 or absent for the server's default (240 unless the server sets another)."),
			"runs_per_hour":                budget("0 or absent for the server's default (2,400 unless the server sets another)."),
			"materialized_runs_per_minute": budget("0 or absent for the server's default (1,200 unless the server sets another)."),
			"materialized_runs_per_hour":   budget("0 or absent for the server's default (12,000 unless the server sets another)."),
		},
	}
}
