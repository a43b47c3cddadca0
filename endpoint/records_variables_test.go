package endpoint_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

func TestCreateVariable(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	v, err := e.svc.CreateVariable(ctx, "1", variable.Variable{Name: "Event Name!", Type: variable.String, DefaultValue: "x"})
	require.NoError(t, err)
	if _, err := uuid.Parse(v.ID); err != nil || v.CodeName != "event_name" {
		t.Fatalf("created %+v: want a UUID and code_name event_name", v)
	}
	got, err := e.svc.GetVariable(ctx, "1", strings.ToUpper(v.ID))
	require.NoError(t, err, "GetVariable by upper-case id = %+v, %v", got, err)
	require.Equal(t, v, got, "GetVariable by upper-case id = %+v, %v", got, err)
	given := uuid.NewString()
	v2, err := e.svc.CreateVariable(ctx, "1", variable.Variable{ID: given, Name: "n", CodeName: "custom", Type: variable.Number, DefaultValue: "12"})
	if err != nil || v2.ID != given || v2.DefaultValue != int64(12) {
		t.Fatalf("created %+v, %v; want the given id and a coerced default", v2, err)
	}
	for _, tc := range []struct {
		name   string
		v      variable.Variable
		status int
		code   string
		detail string
		attr   string
	}{
		{"duplicate code_name", variable.Variable{Name: "event name", Type: variable.String},
			409, "conflict", "A variable with code_name 'event_name' already exists in this project.", "code_name"},
		{"duplicate id", variable.Variable{ID: given, Name: "other", Type: variable.String},
			409, "conflict", "A variable with id " + given + " already exists in this project.", "id"},
		{"bad type", variable.Variable{Name: "t", Type: "Float"},
			400, "invalid_input", `Invalid type: must be one of String, Number, Boolean, Date, List, got "Float"`, "type"},
		{"bad id", variable.Variable{ID: "nope", Name: "t", Type: variable.String},
			400, "invalid_input", `Invalid id: must be a valid UUID, got "nope"`, "id"},
		{"no name", variable.Variable{Type: variable.String},
			400, "invalid_input", "Invalid name: required", "name"},
		{"bad default", variable.Variable{Name: "n2", Type: variable.Number, DefaultValue: "many"},
			400, "invalid_input", "", "default_value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.svc.CreateVariable(ctx, "1", tc.v)
			var got *endpoint.Error
			if !errors.As(err, &got) || got.Status != tc.status || got.Code != tc.code || got.Attr != tc.attr ||
				tc.detail != "" && got.Detail != tc.detail {
				t.Fatalf("CreateVariable: %#v, want {%d %s %q %s}", err, tc.status, tc.code, tc.detail, tc.attr)
			}
		})
	}
	// The same code_name in another project is another variable.
	if _, err := e.svc.CreateVariable(ctx, "2", variable.Variable{Name: "event name", Type: variable.String}); err != nil {
		t.Fatal(err)
	}
	list, err := e.svc.ListVariables(ctx, "1")
	require.NoError(t, err, "ListVariables = %d, %v", len(list), err)
	require.Len(t, list, len(testVariables)+2, "ListVariables = %d, %v", len(list), err)
	for i := 1; i < len(list); i++ {
		if list[i-1].CodeName > list[i].CodeName {
			t.Fatalf("ListVariables not ordered by code_name: %s before %s", list[i-1].CodeName, list[i].CodeName)
		}
	}
	if empty, err := e.svc.ListVariables(ctx, "9"); err != nil || empty == nil || len(empty) != 0 {
		t.Fatalf("ListVariables of an empty project = %#v, %v", empty, err)
	}
	_, err = e.svc.GetVariable(ctx, "2", v.ID)
	wantError(t, err, 404, "not_found", "Variable '"+v.ID+"' not found.", "")
	_, err = e.svc.GetVariable(ctx, "1", "not-a-uuid")
	wantError(t, err, 404, "not_found", "Variable 'not-a-uuid' not found.", "")
}

func TestUpdateVariable(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	minID := e.vars["min_amount"].ID
	e.create(t, "ep", e.query("SELECT id FROM orders WHERE amount >= {variables.min_amount} ORDER BY id", "min_amount"))
	str := func(s string) *string { return &s }

	// Warm the cache, then change the type: the next run coerces with the
	// new definition.
	if _, err := run(e, "ep", map[string]any{"min_amount": "12"}); err != nil {
		t.Fatal(err)
	}
	name := "Minimum"
	got, err := e.svc.UpdateVariable(ctx, "1", minID, endpoint.VariablePatch{Name: &name, Type: str("List"), Values: &[]string{"12", "99"}})
	if err != nil || got.Name != "Minimum" || got.CodeName != "min_amount" || got.Type != variable.List {
		t.Fatalf("UpdateVariable = %+v, %v", got, err)
	}
	_, err = run(e, "ep", map[string]any{"min_amount": "13"})
	wantError(t, err, 400, "invalid_variable_value", `Invalid value for variable 'min_amount': expected List, got "13": not one of "12", "99"`, "variables.min_amount")
	if res, err := run(e, "ep", map[string]any{"min_amount": "99"}); err != nil || !reflect.DeepEqual(ids(t, res), []int64{5}) {
		t.Fatalf("run after type change: %v", err)
	}

	// A used variable keeps its code_name and is_multi.
	_, err = e.svc.UpdateVariable(ctx, "1", minID, endpoint.VariablePatch{CodeName: str("least")})
	wantError(t, err, 409, "variable_in_use", "Variable 'min_amount' is used by endpoint 'ep'; its code_name cannot change.", "code_name")
	yes := true
	_, err = e.svc.UpdateVariable(ctx, "1", minID, endpoint.VariablePatch{IsMulti: &yes})
	wantError(t, err, 409, "variable_in_use", "Variable 'min_amount' is used by endpoint 'ep'; its is_multi cannot change.", "is_multi")

	// An unused one may be renamed, but not onto a taken code_name.
	flag := e.vars["paid"].ID
	_, err = e.svc.UpdateVariable(ctx, "1", flag, endpoint.VariablePatch{CodeName: str("country")})
	wantError(t, err, 409, "conflict", "A variable with code_name 'country' already exists in this project.", "code_name")
	got, err = e.svc.UpdateVariable(ctx, "1", flag, endpoint.VariablePatch{CodeName: str("is_paid")})
	require.NoError(t, err, "rename code_name: %+v, %v", got, err)
	require.Equal(t, "is_paid", got.CodeName, "rename code_name: %+v, %v", got, err)
	_, err = e.svc.UpdateVariable(ctx, "1", flag, endpoint.VariablePatch{Type: str("Nope")})
	wantError(t, err, 400, "invalid_input", `Invalid type: must be one of String, Number, Boolean, Date, List, got "Nope"`, "type")
	_, err = e.svc.UpdateVariable(ctx, "2", flag, endpoint.VariablePatch{Name: str("x")})
	wantError(t, err, 404, "not_found", "Variable '"+flag+"' not found.", "")
	// Clearing a default.
	var none any
	got, err = e.svc.UpdateVariable(ctx, "1", e.vars["country"].ID, endpoint.VariablePatch{DefaultValue: &none})
	if err != nil || got.DefaultValue != nil {
		t.Fatalf("clear default: %+v, %v", got, err)
	}
}

func TestDeleteVariable(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	country := e.vars["country"].ID
	e.create(t, "ep", e.query("SELECT id FROM orders WHERE country = {variables.country}", "country"))
	wantError(t, e.svc.DeleteVariable(ctx, "1", country), 409, "variable_in_use",
		"Variable 'country' is used by endpoint 'ep' and cannot be deleted.", "")

	// Still refused while only an older version uses it: that version can
	// still be run.
	if _, err := e.svc.Update(ctx, "1", "ep", endpoint.UpdateRequest{Query: e.query("SELECT 1")}); err != nil {
		t.Fatal(err)
	}
	wantError(t, e.svc.DeleteVariable(ctx, "1", country), 409, "variable_in_use",
		"Variable 'country' is used by endpoint 'ep' and cannot be deleted.", "")

	require.NoError(t, e.svc.Delete(ctx, "1", "ep"))
	require.NoError(t, e.svc.DeleteVariable(ctx, "1", country))
	_, err := e.svc.GetVariable(ctx, "1", country)
	wantError(t, err, 404, "not_found", "Variable '"+country+"' not found.", "")
	wantError(t, e.svc.DeleteVariable(ctx, "1", country), 404, "not_found", "Variable '"+country+"' not found.", "")

	// A deleted variable can no longer be referenced.
	_, err = e.svc.Create(ctx, "1", endpoint.CreateRequest{Name: "again", Query: e.query("SELECT {variables.paid}", "paid")})
	require.NoError(t, err)
	q := &endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT 1", Variables: map[string]endpoint.VariableRef{country: {}}}
	_, err = e.svc.Create(ctx, "1", endpoint.CreateRequest{Name: "gone", Query: q})
	wantError(t, err, 400, "variable_not_found", "Variable ID(s) not found: "+country+". A variable must first be created in data management.", "query.variables")
}

// TestVariableChangedBehindService: a version whose variable changed in the
// store without this Service knowing is refused when it is compiled again,
// with a 409 that says why, rather than run with a stale definition.
func TestVariableChangedBehindService(t *testing.T) {
	e := newEnv(t, func(c *endpoint.Config) { c.CacheSize = -1 })
	ctx := context.Background()
	e.create(t, "ep", e.query("SELECT id FROM orders WHERE country = {variables.country}", "country"))
	v := e.vars["country"]
	v.CodeName = "land"
	require.NoError(t, e.vstore.Store.Update(ctx, "1", v))
	_, err := run(e, "ep", map[string]any{"country": "US"})
	wantError(t, err, 409, "conflict", "Endpoint 'ep' version 1 no longer passes validation: Variable "+v.ID+" has code_name 'land', not 'country'.", "")
}
