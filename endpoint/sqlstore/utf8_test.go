package sqlstore

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInvalidUTF8IsRefusedNotAltered(t *testing.T) {
	const bad = "a\xffb"
	queries := map[string]driver.Query{
		"kind":        {Kind: bad},
		"sql":         {Kind: driver.KindSQL, SQL: "SELECT '" + bad + "'"},
		"key":         {Kind: driver.KindSQL, Variables: map[string]driver.VariableRef{bad: {}}},
		"variable id": {Kind: driver.KindSQL, Variables: map[string]driver.VariableRef{"a": {VariableID: bad}}},
		"code name":   {Kind: driver.KindSQL, Variables: map[string]driver.VariableRef{"a": {CodeName: bad}}},
		"value":       {Kind: driver.KindSQL, Variables: map[string]driver.VariableRef{"a": {Value: json.RawMessage(`"` + bad + `"`)}}},
		"list value":  {Kind: driver.KindSQL, Variables: map[string]driver.VariableRef{"a": {Value: json.RawMessage(`["` + bad + `"]`)}}},
		"map key":     {Kind: driver.KindSQL, Variables: map[string]driver.VariableRef{"a": {Value: json.RawMessage(`{"` + bad + `":1}`)}}},
	}
	for name, q := range queries {
		_, err := marshalQuery(q)
		assert.ErrorContains(t, err, "not valid UTF-8", "%v", name)
	}

	s := openMemory(t)
	ctx := context.Background()
	e, v := endpointFixture("p", "a")
	e.Query.SQL = bad
	if err := s.Endpoints().Create(ctx, e, v); err == nil || !strings.Contains(err.Error(), "not valid UTF-8") {
		t.Errorf("error %v does not contain %q", err, "not valid UTF-8")
	}
	_, err := s.Endpoints().Get(ctx, "p", "a")
	assert.ErrorIs(t, err, driver.ErrNotFound)

	x := variableFixture("x")
	x.Values = []string{"a", bad}
	if err := s.Variables().Create(ctx, "p", x); err == nil || !strings.Contains(err.Error(), "not valid UTF-8") {
		t.Errorf("error %v does not contain %q", err, "not valid UTF-8")
	}
	x = variableFixture("x")
	x.DefaultValue = bad
	if err := s.Variables().Create(ctx, "p", x); err == nil || !strings.Contains(err.Error(), "not valid UTF-8") {
		t.Errorf("error %v does not contain %q", err, "not valid UTF-8")
	}
	list, err := s.Variables().List(ctx, "p")
	require.NoError(t, err)
	if v := list; !(len(v) == 0) {
		t.Errorf("list = %v, want it empty", v)
	}
}
