package endpoint

import (
	"context"
	"errors"
	"slices"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/google/uuid"
)

// VariablePatch is the input of UpdateVariable; nil fields are left as they
// are. A DefaultValue pointing at nil clears the default.
type VariablePatch struct {
	Name         *string   `json:"name"`
	CodeName     *string   `json:"code_name"`
	Type         *string   `json:"type"`
	DefaultValue *any      `json:"default_value"`
	Values       *[]string `json:"values"`
	IsMulti      *bool     `json:"is_multi"`
}

// CreateVariable validates v, gives it an id when it has none, derives its
// code_name from its name when it has none, and stores it. A code_name (or
// id) the project already has is a 409.
func (s *Service) CreateVariable(ctx context.Context, project string, v variable.Variable) (variable.Variable, error) {
	if v.ID == "" {
		v.ID = uuid.NewString()
	}
	if err := v.Normalize(); err != nil {
		return variable.Variable{}, definitionError(err)
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.cfg.Variables.Create(ctx, project, v); err != nil {
		if errors.Is(err, variable.ErrConflict) {
			if _, gerr := s.cfg.Variables.Get(ctx, project, v.ID); gerr == nil {
				return variable.Variable{}, conflictf(CodeConflict, "id", "A variable with id %s already exists in this project.", v.ID)
			}
			return variable.Variable{}, codeNameTaken(v.CodeName)
		}
		return variable.Variable{}, variableStoreError(err, v.ID)
	}
	return v, nil
}

// GetVariable returns the variable with id.
func (s *Service) GetVariable(ctx context.Context, project, id string) (variable.Variable, error) {
	canon, ok := canonicalID(id)
	if !ok {
		return variable.Variable{}, variableNotFound(id)
	}
	v, err := s.cfg.Variables.Get(ctx, project, canon)
	if err != nil {
		return variable.Variable{}, variableStoreError(err, id)
	}
	return v, nil
}

// ListVariables returns the variables of project ordered by code_name;
// never nil.
func (s *Service) ListVariables(ctx context.Context, project string) ([]variable.Variable, error) {
	list, err := s.cfg.Variables.List(ctx, project)
	if err != nil {
		return nil, variableStoreError(err, "")
	}
	if list == nil {
		list = []variable.Variable{}
	}
	return list, nil
}

// UpdateVariable applies patch to the variable with id. The code_name and
// is_multi of a variable that an endpoint uses cannot change (409 naming
// the endpoint): the endpoint's query refers to it by code_name and was
// checked for list positions with its is_multi. Other changes, such as the
// type, apply to the next run of every endpoint that uses the variable.
func (s *Service) UpdateVariable(ctx context.Context, project, id string, patch VariablePatch) (variable.Variable, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	cur, err := s.GetVariable(ctx, project, id)
	if err != nil {
		return variable.Variable{}, err
	}
	next := patch.apply(cur)
	if err := next.Normalize(); err != nil {
		return variable.Variable{}, definitionError(err)
	}
	if err := s.checkVariableChange(ctx, project, cur, next); err != nil {
		return variable.Variable{}, err
	}
	if err := s.cfg.Variables.Update(ctx, project, next); err != nil {
		if errors.Is(err, variable.ErrConflict) {
			return variable.Variable{}, codeNameTaken(next.CodeName)
		}
		return variable.Variable{}, variableStoreError(err, id)
	}
	s.cache.purge(project, nil)
	return next, nil
}

// apply returns cur with the fields of p set; an empty code name is made
// from the name.
func (p VariablePatch) apply(cur variable.Variable) variable.Variable {
	next := cur
	next.Values = slices.Clone(cur.Values)
	setIf(&next.Name, p.Name)
	if p.CodeName != nil {
		next.CodeName = *p.CodeName
		if next.CodeName == "" {
			next.CodeName = variable.CodeNameFrom(next.Name)
		}
	}
	if p.Type != nil {
		next.Type = variable.Type(*p.Type)
	}
	setIf(&next.DefaultValue, p.DefaultValue)
	if p.Values != nil {
		next.Values = slices.Clone(*p.Values)
	}
	setIf(&next.IsMulti, p.IsMulti)
	return next
}

// checkVariableChange refuses a new code name or multiplicity for a
// variable that an endpoint uses: its queries name it that way.
func (s *Service) checkVariableChange(ctx context.Context, project string, cur, next variable.Variable) error {
	if next.CodeName == cur.CodeName && next.IsMulti == cur.IsMulti {
		return nil
	}
	users, err := s.endpointsUsing(ctx, project, cur.ID)
	if err != nil {
		return err
	}
	if len(users) > 0 {
		field := "code_name"
		if next.CodeName == cur.CodeName {
			field = "is_multi"
		}
		return conflictf(CodeVariableInUse, field, "Variable '%s' is used by endpoint '%s'; its %s cannot change.", cur.CodeName, users[0], field)
	}
	return nil
}

// DeleteVariable removes the variable with id; a variable that the current
// or any stored version of an endpoint uses is refused with ErrConflict,
// since every run of that version would fail.
func (s *Service) DeleteVariable(ctx context.Context, project, id string) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	v, err := s.GetVariable(ctx, project, id)
	if err != nil {
		return err
	}
	users, err := s.endpointsUsing(ctx, project, v.ID)
	if err != nil {
		return err
	}
	if len(users) > 0 {
		return conflictf(CodeVariableInUse, "", "Variable '%s' is used by endpoint '%s' and cannot be deleted.", v.CodeName, users[0])
	}
	if err := s.cfg.Variables.Delete(ctx, project, v.ID); err != nil {
		return variableStoreError(err, id)
	}
	s.cache.purge(project, nil)
	return nil
}

// endpointsUsing returns the names, sorted, of the endpoints of project
// whose current or any stored version refers to the variable with id. It
// reads every version: variable writes are rare and must be right. A
// soft-deleted endpoint counts, as it can be restored.
func (s *Service) endpointsUsing(ctx context.Context, project, id string) ([]string, error) {
	list, err := s.cfg.Endpoints.List(ctx, project)
	if err != nil {
		return nil, storeError(err, nil)
	}
	var names []string
	for _, e := range list {
		if usesVariable(e.Query, id) {
			names = append(names, usingName(&e))
			continue
		}
		versions, err := s.cfg.Endpoints.Versions(ctx, project, e.ID)
		if errors.Is(err, ErrNotFound) {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, storeError(err, nil)
		}
		for _, v := range versions {
			if usesVariable(v.Query, id) {
				names = append(names, usingName(&e))
				break
			}
		}
	}
	slices.Sort(names)
	return names, nil
}

func usesVariable(q driver.Query, id string) bool {
	_, ok := q.Variables[id]
	return ok
}

func canonicalID(id string) (string, bool) {
	u, err := uuid.Parse(id)
	if err != nil {
		return "", false
	}
	return u.String(), true
}

func codeNameTaken(codeName string) *Error {
	return conflictf(CodeConflict, "code_name", "A variable with code_name '%s' already exists in this project.", codeName)
}

func variableNotFound(id string) *Error {
	return notFoundf("Variable '%s' not found.", id)
}

// definitionError turns a rejected definition into a 400 on its field.
func definitionError(err error) error {
	var de *variable.DefinitionError
	if errors.As(err, &de) {
		return withCause(invalidf(CodeInvalidInput, de.Field, "Invalid %s: %s", de.Field, de.Message), err)
	}
	return withCause(invalidf(CodeInvalidInput, "", "Invalid variable: %s", err), err)
}

// variableStoreError maps an error of the variable store.
func variableStoreError(err error, id string) error {
	if errors.Is(err, variable.ErrNotFound) {
		return variableNotFound(id)
	}
	return storeError(err, nil)
}
