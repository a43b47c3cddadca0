// Package openapitest checks OpenAPI documents for tests: a document the
// library writes (endpoint/openapi) or serves (endpoint/httpapi) is
// loaded, validated as OpenAPI 3.0.3, and asked whether it accepts a run
// request's body, as a generated client's validator would. It is imported
// only by tests.
package openapitest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	legacy "github.com/getkin/kin-openapi/routers/legacy"
	"github.com/stretchr/testify/require"
)

// Validator loads the OpenAPI document raw, fails t unless it is valid
// OpenAPI 3.0.3, and returns it with a function that tells whether the
// document accepts body as a JSON POST to path (nil), or why not. A path
// the document has no route for fails t.
func Validator(t testing.TB, raw []byte) (*openapi3.T, func(path, body string) error) {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	require.NoError(t, err, "load: %s", raw)
	require.NoError(t, doc.Validate(context.Background()), "the document is not valid OpenAPI\n%s", raw)
	require.Equal(t, "3.0.3", doc.OpenAPI, "openapi")
	router, err := legacy.NewRouter(doc)
	require.NoError(t, err)
	return doc, func(path, body string) error {
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		route, params, err := router.FindRoute(req)
		require.NoError(t, err, "no route for %s", path)
		return openapi3filter.ValidateRequest(context.Background(), &openapi3filter.RequestValidationInput{
			Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
		})
	}
}
