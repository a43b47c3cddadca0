package variable

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// MemoryStore is a Store that keeps records in memory, for tests, examples
// and single-process servers that need no persistence. It is safe for
// concurrent use. The zero value is not usable; call NewMemoryStore.
type MemoryStore struct {
	mu       sync.RWMutex
	projects map[string]map[string]Variable // project -> id -> record
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{projects: make(map[string]map[string]Variable)}
}

var _ Store = (*MemoryStore)(nil)

// Create implements Store.
func (s *MemoryStore) Create(ctx context.Context, project string, v Variable) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	vars := s.projects[project]
	if _, ok := vars[v.ID]; ok {
		return fmt.Errorf("%w: id %q already exists in project %q", ErrConflict, v.ID, project)
	}
	if err := codeNameTaken(vars, project, v); err != nil {
		return err
	}
	if vars == nil {
		vars = make(map[string]Variable)
		s.projects[project] = vars
	}
	vars[v.ID] = clone(v)
	return nil
}

// Get implements Store.
func (s *MemoryStore) Get(ctx context.Context, project, id string) (Variable, error) {
	if err := ctx.Err(); err != nil {
		return Variable{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	v, ok := s.projects[project][id]
	if !ok {
		return Variable{}, notFound(project, id)
	}
	return clone(v), nil
}

// GetMany implements Store.
func (s *MemoryStore) GetMany(ctx context.Context, project string, ids []string) (map[string]Variable, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	vars := s.projects[project]
	out := make(map[string]Variable, len(ids))
	for _, id := range ids {
		if v, ok := vars[id]; ok {
			out[id] = clone(v)
		}
	}
	return out, nil
}

// List implements Store.
func (s *MemoryStore) List(ctx context.Context, project string) ([]Variable, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	vars := s.projects[project]
	out := make([]Variable, 0, len(vars))
	for _, v := range vars {
		out = append(out, clone(v))
	}
	s.mu.RUnlock()
	slices.SortFunc(out, func(a, b Variable) int {
		if c := strings.Compare(a.CodeName, b.CodeName); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// Update implements Store.
func (s *MemoryStore) Update(ctx context.Context, project string, v Variable) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	vars := s.projects[project]
	if _, ok := vars[v.ID]; !ok {
		return notFound(project, v.ID)
	}
	if err := codeNameTaken(vars, project, v); err != nil {
		return err
	}
	vars[v.ID] = clone(v)
	return nil
}

// Delete implements Store.
func (s *MemoryStore) Delete(ctx context.Context, project, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	vars := s.projects[project]
	if _, ok := vars[id]; !ok {
		return notFound(project, id)
	}
	delete(vars, id)
	return nil
}

// codeNameTaken reports ErrConflict when another variable than v has v's
// code name. A linear scan: projects hold tens of variables, not millions.
func codeNameTaken(vars map[string]Variable, project string, v Variable) error {
	for id, other := range vars {
		if id != v.ID && other.CodeName == v.CodeName {
			return fmt.Errorf("%w: code_name %q is already used by variable %s in project %q", ErrConflict, v.CodeName, id, project)
		}
	}
	return nil
}

func notFound(project, id string) error {
	return fmt.Errorf("%w: id %q in project %q", ErrNotFound, id, project)
}

// clone copies the parts of a record that a caller could modify in place.
func clone(v Variable) Variable {
	v.Values = slices.Clone(v.Values)
	v.DefaultValue = cloneValue(v.DefaultValue)
	return v
}

// cloneValue deep-copies the mutable shapes a default value can take: those
// of encoding/json and of Coerce. Other values (strings, numbers, bools,
// times) are immutable.
func cloneValue(x any) any {
	switch y := x.(type) {
	case []string:
		return slices.Clone(y)
	case []any:
		if y == nil {
			return y
		}
		out := make([]any, len(y))
		for i, e := range y {
			out[i] = cloneValue(e)
		}
		return out
	case map[string]any:
		if y == nil {
			return y
		}
		out := make(map[string]any, len(y))
		for k, e := range y {
			out[k] = cloneValue(e)
		}
		return out
	case json.RawMessage:
		return slices.Clone(y)
	case []byte:
		return slices.Clone(y)
	}
	return x
}
