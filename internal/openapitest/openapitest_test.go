package openapitest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// doc is an OpenAPI 3.0.3 document with one route, whose JSON body must
// hold an integer n.
const doc = `{"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": {"/run": {"post": {
	"requestBody": {"required": true, "content": {"application/json": {"schema": {
		"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}}}}},
	"responses": {"200": {"description": "ok"}}}}}}`

// TestValidator: the document loads, and its validator accepts a body
// the schema allows and refuses, saying why, one it does not.
func TestValidator(t *testing.T) {
	d, validate := Validator(t, []byte(doc))
	assert.Equal(t, "3.0.3", d.OpenAPI)
	assert.NoError(t, validate("/run", `{"n": 1}`))
	assert.ErrorContains(t, validate("/run", `{"n": "one"}`), "n")
	assert.Error(t, validate("/run", `{}`), "n is required")
}
