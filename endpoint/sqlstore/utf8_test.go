package sqlstore

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
)

func TestInvalidUTF8IsRefusedNotAltered(t *testing.T) {
	const bad = "a\xffb"
	queries := map[string]endpoint.Query{
		"kind":        {Kind: bad},
		"sql":         {Kind: endpoint.KindSQL, SQL: "SELECT '" + bad + "'"},
		"key":         {Kind: endpoint.KindSQL, Variables: map[string]endpoint.VariableRef{bad: {}}},
		"variable id": {Kind: endpoint.KindSQL, Variables: map[string]endpoint.VariableRef{"a": {VariableID: bad}}},
		"code name":   {Kind: endpoint.KindSQL, Variables: map[string]endpoint.VariableRef{"a": {CodeName: bad}}},
		"value":       {Kind: endpoint.KindSQL, Variables: map[string]endpoint.VariableRef{"a": {Value: bad}}},
		"list value":  {Kind: endpoint.KindSQL, Variables: map[string]endpoint.VariableRef{"a": {Value: []string{bad}}}},
		"map key":     {Kind: endpoint.KindSQL, Variables: map[string]endpoint.VariableRef{"a": {Value: map[string]any{bad: 1}}}},
	}
	for name, q := range queries {
		_, err := marshalQuery(q)
		assert.ErrorContains(t, err, "not valid UTF-8", name)
	}

	s := openMemory(t)
	ctx := context.Background()
	e, v := endpointFixture("p", "a")
	e.Query.SQL = bad
	assert.ErrorContains(t, s.Endpoints().Create(ctx, e, v), "not valid UTF-8")
	_, err := s.Endpoints().Get(ctx, "p", "a")
	assert.ErrorIs(t, err, endpoint.ErrNotFound)

	x := variableFixture("x")
	x.Values = []string{"a", bad}
	assert.ErrorContains(t, s.Variables().Create(ctx, "p", x), "not valid UTF-8")
	x = variableFixture("x")
	x.DefaultValue = bad
	assert.ErrorContains(t, s.Variables().Create(ctx, "p", x), "not valid UTF-8")
	list, err := s.Variables().List(ctx, "p")
	require.NoError(t, err)
	assert.Empty(t, list)
}
