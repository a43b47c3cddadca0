package endpoint_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/variable"
)

// TestRunAdHocVariablesByCodeName: an unsaved query runs with its
// variables by code name, a Date one typed as such, with no variable
// created; its values are bound, never in the SQL.
func TestRunAdHocVariablesByCodeName(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	before, err := e.svc.ListVariables(ctx, "1")
	require.NoError(t, err)
	res, err := e.svc.RunAdHoc(ctx, "1", endpoint.AdHocRequest{
		SQL: "SELECT id, country FROM orders WHERE created >= {variables.since} AND country = {variables.where} ORDER BY id",
		Variables: map[string]endpoint.AdHocVariable{
			"since": {Value: "2025-01-03", Type: variable.Date},
			"where": {Value: "US' OR '1'='1"},
		},
		Debug: true,
	})
	require.NoError(t, err)
	assert.Empty(t, res.Results, "the quote is a value, not SQL")
	require.NotNil(t, res.Debug)
	assert.NotContains(t, res.Debug.SQL, "OR '1'='1")

	res, err = e.svc.RunAdHoc(ctx, "1", endpoint.AdHocRequest{
		SQL: "SELECT id FROM orders WHERE created >= {variables.since} AND country = {variables.where} AND amount >= {variables.min} ORDER BY id",
		Variables: map[string]endpoint.AdHocVariable{
			"since": {Value: "2025-01-03", Type: variable.Date},
			"where": {Value: "US"},
			"min":   {Value: 8.0},
		},
	})
	require.NoError(t, err)
	assert.Equal(t, [][]any{{int64(5)}}, res.Results)
	var types []variable.Type
	for _, v := range res.Variables {
		assert.Empty(t, v.ID, "a variable of the run only has no id")
		types = append(types, v.Type)
	}
	assert.ElementsMatch(t, []variable.Type{variable.Date, variable.String, variable.Number}, types)

	after, err := e.svc.ListVariables(ctx, "1")
	require.NoError(t, err)
	assert.Equal(t, before, after, "no variable was created")

	// A project variable of the code name is used when no other type is
	// asked for: its default fills a placeholder given no value.
	res, err = e.svc.RunAdHoc(ctx, "1", endpoint.AdHocRequest{SQL: "SELECT count(*) AS n FROM orders WHERE country = {variables.country}"})
	require.NoError(t, err)
	assert.Equal(t, [][]any{{int64(3)}}, res.Results)
	require.Len(t, res.Variables, 1)
	assert.Equal(t, e.vars["country"].ID, res.Variables[0].ID)
	assert.Equal(t, endpoint.SourceDefault, res.Variables[0].Source)

	// Refusals name the variable.
	_, err = e.svc.RunAdHoc(ctx, "1", endpoint.AdHocRequest{SQL: "SELECT 1 WHERE 1 = {variables.x}",
		Variables: map[string]endpoint.AdHocVariable{"x": {Value: map[string]any{"a": 1}}}})
	wantError(t, err, 400, endpoint.CodeInvalidInput,
		`Variable 'x' needs a value: a string, number, boolean or list of strings, or {"value": ..., "type": "Date"}.`, "variables.x")
	_, err = e.svc.RunAdHoc(ctx, "1", endpoint.AdHocRequest{SQL: "SELECT 1 WHERE 1 = {variables.x}",
		Variables: map[string]endpoint.AdHocVariable{"x": {Value: "1", Type: "Weekday"}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Variable 'x'")
	_, err = e.svc.RunAdHoc(ctx, "1", endpoint.AdHocRequest{SQL: "SELECT 1 WHERE 1 = {variables.nope}"})
	wantError(t, err, 400, endpoint.CodeUndefinedVariable, "Query references undefined variable(s): nope", "query")
}
