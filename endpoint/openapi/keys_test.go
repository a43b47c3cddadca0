package openapi_test

import (
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/openapi"
	"github.com/stretchr/testify/assert"
)

// TestKeysDocumentValid: the key routes' document is valid OpenAPI 3.0.3,
// under a prefix too.
func TestKeysDocumentValid(t *testing.T) {
	for _, prefix := range []string{"", "/analytics"} {
		d, _ := load(t, openapi.KeysDocument(prefix))
		for _, p := range []string{prefix + "/api/projects/{project_id}/keys/", prefix + "/api/projects/{project_id}/keys/{key_id}"} {
			assert.NotNil(t, d.Paths.Find(p), "no path %s", p)
		}
	}
}
