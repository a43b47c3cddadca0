package endpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/google/uuid"

	"github.com/endpointkit/endpointkit/variable"
)

// AdHocVariable is a value of an ad-hoc query's variable (AdHocRequest),
// with its type when the value alone does not tell it.
type AdHocVariable struct {
	// Value is the value as a run takes it: a string, number, boolean,
	// or a list of strings.
	Value any
	// Type is the variable's type (String, Number, Boolean, Date, List);
	// empty means the type of the project's variable of that code name
	// when there is one, otherwise the type the value's JSON form has (a
	// list of strings is a multi-valued List). A date written as text
	// needs Type Date, or it is compared as text.
	Type variable.Type
}

// AdHocRequest is a SQL query that is not saved, with its variables by
// code name: nothing to create in data management first, and nothing is
// stored.
type AdHocRequest struct {
	// SQL is the query, with {variables.<code_name>} placeholders.
	SQL string
	// Variables are the placeholders' values by code name. A placeholder
	// given none takes the default of the project's variable of that code
	// name, when there is one.
	Variables map[string]AdHocVariable
	// Limit, Offset and Debug are as in QueryRequest.
	Limit  *int
	Offset *int
	Debug  bool
}

// adHocKey is the context key of the variables an ad-hoc query defines
// for itself, by id (lookupVariables reads them before the store).
type adHocKey struct{}

// adHocVariables are the variables an ad-hoc query run in ctx defines.
func adHocVariables(ctx context.Context) map[string]variable.Variable {
	m, _ := ctx.Value(adHocKey{}).(map[string]variable.Variable)
	return m
}

// RunAdHoc runs SQL that is not saved with its variables by code name, as
// RunQuery runs a HogQLQuery: every check of a save, scoped, bound (values
// are always bound as arguments, never written into the SQL), paged and
// timed as a run. A variable is the project's of that code name when the
// request gives it no type of its own (or the same one), otherwise one
// defined for this run only, never stored. The answer's variables say
// what ran; those defined for the run have no id.
func (s *Service) RunAdHoc(ctx context.Context, project string, req AdHocRequest) (*QueryResult, error) {
	tmpl, err := s.parseSQL(req.SQL)
	if err != nil {
		return nil, err
	}
	saved, err := s.ListVariables(ctx, project)
	if err != nil {
		return nil, err
	}
	byCode := make(map[string]variable.Variable, len(saved))
	for _, v := range saved {
		byCode[v.CodeName] = v
	}
	refs := map[string]VariableRef{}
	own := map[string]variable.Variable{}
	codes := make([]string, 0, len(req.Variables))
	for code := range req.Variables {
		codes = append(codes, code)
	}
	sort.Strings(codes)
	for _, code := range codes {
		given := req.Variables[code]
		raw, err := json.Marshal(given.Value)
		if err != nil {
			return nil, invalidf(CodeInvalidInput, "variables."+code, "The value of variable '%s' cannot be read.", code)
		}
		if v, ok := byCode[code]; ok && (given.Type == "" || given.Type == v.Type) {
			refs[v.ID] = VariableRef{VariableID: v.ID, CodeName: code, Value: raw}
			continue
		}
		v, err := adHocDefinition(code, given)
		if err != nil {
			return nil, err
		}
		own[v.ID] = v
		refs[v.ID] = VariableRef{VariableID: v.ID, CodeName: code, Value: raw}
	}
	// Placeholders given no value take the project's variable (and its
	// default), as the editor's test run does.
	for _, name := range tmpl.Names() {
		if _, given := req.Variables[name]; given {
			continue
		}
		if v, ok := byCode[name]; ok {
			refs[v.ID] = VariableRef{VariableID: v.ID, CodeName: name}
		}
	}
	q := &Query{Kind: KindSQL, SQL: req.SQL}
	if len(refs) > 0 {
		q.Variables = refs
	}
	if len(own) > 0 {
		ctx = context.WithValue(ctx, adHocKey{}, own)
	}
	out, err := s.RunQuery(ctx, project, QueryRequest{Query: q, Limit: req.Limit, Offset: req.Offset, Debug: req.Debug})
	if err != nil {
		return nil, err
	}
	for i := range out.Variables {
		if _, mine := own[out.Variables[i].ID]; mine {
			out.Variables[i].ID, out.Variables[i].Name = "", ""
		}
	}
	return out, nil
}

// adHocDefinition defines the variable code of an ad-hoc query from what
// was given for it.
func adHocDefinition(code string, given AdHocVariable) (variable.Variable, error) {
	v := variable.Variable{ID: uuid.NewString(), Name: code, CodeName: code, Type: given.Type}
	if v.Type == "" {
		switch val := given.Value.(type) {
		case string:
			v.Type = variable.String
		case float64, json.Number, int, int64:
			v.Type = variable.Number
		case bool:
			v.Type = variable.Boolean
		case []any:
			v.Type, v.IsMulti = variable.List, true
			for _, x := range val {
				s, ok := x.(string)
				if !ok {
					return variable.Variable{}, invalidf(CodeInvalidInput, "variables."+code,
						"The list given for variable '%s' holds a value that is not text; a list variable takes strings.", code)
				}
				v.Values = append(v.Values, s)
			}
		default:
			return variable.Variable{}, invalidf(CodeInvalidInput, "variables."+code,
				"Variable '%s' needs a value: a string, number, boolean or list of strings, or {\"value\": ..., \"type\": \"Date\"}.", code)
		}
	}
	if v.Type == variable.List && len(v.Values) == 0 {
		if list, ok := given.Value.([]any); ok {
			v.IsMulti = true
			for _, x := range list {
				v.Values = append(v.Values, fmt.Sprint(x))
			}
		} else if one, ok := given.Value.(string); ok {
			v.Values = []string{one}
		}
	}
	if err := v.Normalize(); err != nil {
		var de *variable.DefinitionError
		if errors.As(err, &de) {
			return variable.Variable{}, withCause(invalidf(CodeInvalidInput, "variables."+code, "Variable '%s': invalid %s: %s", code, de.Field, de.Message), err)
		}
		return variable.Variable{}, withCause(invalidf(CodeInvalidInput, "variables."+code, "Variable '%s' is not valid: %s", code, err), err)
	}
	return v, nil
}

// splitAdHoc splits ids into those to read from the store and the
// variables the ad-hoc query run in ctx defines itself.
func splitAdHoc(ctx context.Context, ids []string) ([]string, map[string]variable.Variable) {
	defs := adHocVariables(ctx)
	if len(defs) == 0 {
		return ids, nil
	}
	rest := make([]string, 0, len(ids))
	own := map[string]variable.Variable{}
	for _, id := range ids {
		if v, ok := defs[id]; ok {
			own[id] = v
		} else {
			rest = append(rest, id)
		}
	}
	return rest, own
}
