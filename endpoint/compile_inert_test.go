package endpoint_test

import (
	"context"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A placeholder inside quotes or a comment is text to the engine: it
// used to save (without even its variable defined), and the run compared
// with the literal text '{variables.country}'. It is refused at save,
// naming where it is and what works instead.
func TestCreateRefusesPlaceholderInLiteral(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, tc := range []struct {
		q      *endpoint.Query
		detail string
	}{
		{e.query("SELECT id FROM orders WHERE country = '{variables.country}'", "country"),
			"Placeholder {variables.country} at line 1, column 40 is inside a string literal, where the database reads it as text and binds no value; build the text with the placeholder outside the quotes: {variables.country}"},
		{e.query("SELECT id FROM orders WHERE plan LIKE '%{variables.country}%'"),
			"Placeholder {variables.country} at line 1, column 41 is inside a string literal, where the database reads it as text and binds no value; build the text with the placeholder outside the quotes: '%' || {variables.country} || '%'"},
		{e.query("SELECT id FROM orders WHERE country = {variables.country} -- and {variables.plan}", "country"),
			"Placeholder {variables.plan} at line 1, column 66 is inside a comment, where the database reads it as text and binds no value; write it outside the comment"},
	} {
		_, err := e.svc.Create(ctx, "1", endpoint.CreateRequest{Name: "quoted", Query: tc.q})
		wantError(t, err, 400, endpoint.CodeInvalidInput, tc.detail, "query")
	}
	// The working form saves and binds the value.
	ep := e.create(t, "like", e.query("SELECT id FROM orders WHERE plan LIKE '%' || {variables.country} || '%' ORDER BY id", "country"))
	res, err := e.svc.Run(ctx, "1", ep.Name, endpoint.RunRequest{Variables: map[string]any{"country": "ro"}})
	require.NoError(t, err)
	assert.Len(t, res.Results.([][]any), 2, "LIKE '%' || 'ro' || '%' gives")
}
