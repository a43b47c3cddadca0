package memstore

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

// Store is a Store that keeps endpoints in memory, for tests,
// examples and single-process servers that need no persistence. It is safe
// for concurrent use. The zero value is not usable; call New.
type Store struct {
	mu       sync.RWMutex
	projects map[string]*memProject
	// leases are the Leaser's (lease.go).
	leaseMu sync.Mutex
	leases  map[string]memLease
}

type memProject struct {
	byID map[string]*memEndpoint
	// byName holds the live endpoints (DeletedAt nil) only: soft-deleted
	// ones keep their names, which they may share.
	byName map[string]string // name -> id
}

type memEndpoint struct {
	e        driver.Endpoint
	versions []driver.Version
}

// New returns an empty Store.
func New() *Store {
	return &Store{projects: make(map[string]*memProject)}
}

var _ driver.Store = (*Store)(nil)

// Create implements Store.
func (s *Store) Create(ctx context.Context, e driver.Endpoint, first driver.Version) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.projects[e.ProjectID]
	if p == nil {
		p = &memProject{byID: make(map[string]*memEndpoint), byName: make(map[string]string)}
		s.projects[e.ProjectID] = p
	}
	if _, ok := p.byID[e.ID]; ok {
		return fmt.Errorf("%w: endpoint id %q already exists in project %q", driver.ErrConflict, e.ID, e.ProjectID)
	}
	live := e.DeletedAt == nil
	if _, ok := p.byName[e.Name]; ok && live {
		return fmt.Errorf("%w: endpoint name %q already exists in project %q", driver.ErrConflict, e.Name, e.ProjectID)
	}
	first.EndpointID = e.ID
	p.byID[e.ID] = &memEndpoint{e: cloneEndpoint(e), versions: []driver.Version{cloneVersion(first)}}
	if live {
		p.byName[e.Name] = e.ID
	}
	return nil
}

// Update implements Store.
func (s *Store) Update(ctx context.Context, e driver.Endpoint, next *driver.Version) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, m, err := s.find(e.ProjectID, e.ID)
	if err != nil {
		return err
	}
	stored := m.e.CurrentVersion
	switch {
	case next == nil && e.CurrentVersion != stored:
		return fmt.Errorf("%w: endpoint %q is at version %d, not %d", driver.ErrConflict, e.ID, stored, e.CurrentVersion)
	case next != nil && next.Number != stored+1:
		return fmt.Errorf("%w: endpoint %q is at version %d; version %d cannot follow it", driver.ErrConflict, e.ID, stored, next.Number)
	}
	for _, v := range m.versions {
		if next != nil && v.Number == next.Number {
			return fmt.Errorf("%w: endpoint %q already has version %d", driver.ErrConflict, e.ID, next.Number)
		}
	}
	if id, ok := p.byName[e.Name]; ok && id != e.ID && e.DeletedAt == nil {
		return fmt.Errorf("%w: endpoint name %q already exists in project %q", driver.ErrConflict, e.Name, e.ProjectID)
	}
	if m.e.DeletedAt == nil {
		delete(p.byName, m.e.Name)
	}
	if e.DeletedAt == nil {
		p.byName[e.Name] = e.ID
	}
	state := m.e.MaterializationState
	m.e = cloneEndpoint(e)
	m.e.MaterializationState = state
	if next != nil {
		v := cloneVersion(*next)
		v.EndpointID = e.ID
		m.versions = append(m.versions, v)
	}
	return nil
}

// MarkExecuted implements Store.
func (s *Store) MarkExecuted(ctx context.Context, project, id string, at time.Time) error {
	return s.change(ctx, project, id, func(_ *memProject, m *memEndpoint) {
		if m.e.LastExecutedAt == nil || at.After(*m.e.LastExecutedAt) {
			m.e.LastExecutedAt = &at
		}
	})
}

// SetMaterialization implements Store.
func (s *Store) SetMaterialization(ctx context.Context, project, id string, st driver.MaterializationState) error {
	return s.change(ctx, project, id, func(_ *memProject, m *memEndpoint) {
		m.e.MaterializationState = cloneState(st)
	})
}

// ListMaterialized implements Store.
func (s *Store) ListMaterialized(ctx context.Context) ([]driver.Endpoint, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []driver.Endpoint{}
	for project, p := range s.projects {
		for _, m := range p.byID {
			if m.e.IsMaterialized {
				e := cloneEndpoint(m.e)
				e.ProjectID = project
				out = append(out, e)
			}
		}
	}
	slices.SortFunc(out, func(a, b driver.Endpoint) int {
		if c := strings.Compare(a.ProjectID, b.ProjectID); c != 0 {
			return c
		}
		return byNameThenID(a, b)
	})
	return out, nil
}

// byNameThenID orders endpoints by name, then (soft-deleted ones sharing
// a name) by id.
func byNameThenID(a, b driver.Endpoint) int {
	if c := strings.Compare(a.Name, b.Name); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

// Get implements Store: the live endpoint named name.
func (s *Store) Get(ctx context.Context, project, name string) (driver.Endpoint, error) {
	if err := ctx.Err(); err != nil {
		return driver.Endpoint{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	p := s.projects[project]
	if p == nil {
		return driver.Endpoint{}, notFoundName(project, name)
	}
	id, ok := p.byName[name]
	if !ok {
		return driver.Endpoint{}, notFoundName(project, name)
	}
	return cloneEndpoint(p.byID[id].e), nil
}

// List implements Store.
func (s *Store) List(ctx context.Context, project string) ([]driver.Endpoint, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	p := s.projects[project]
	if p == nil {
		return []driver.Endpoint{}, nil
	}
	out := make([]driver.Endpoint, 0, len(p.byID))
	for _, m := range p.byID {
		out = append(out, cloneEndpoint(m.e))
	}
	slices.SortFunc(out, byNameThenID)
	return out, nil
}

// Delete implements Store.
func (s *Store) Delete(ctx context.Context, project, id string) error {
	return s.change(ctx, project, id, func(p *memProject, m *memEndpoint) {
		if m.e.DeletedAt == nil {
			delete(p.byName, m.e.Name)
		}
		delete(p.byID, id)
	})
}

// Version implements Store.
func (s *Store) Version(ctx context.Context, project, id string, n int) (driver.Version, error) {
	if err := ctx.Err(); err != nil {
		return driver.Version{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, m, err := s.find(project, id)
	if err != nil {
		return driver.Version{}, err
	}
	for _, v := range m.versions {
		if v.Number == n {
			return cloneVersion(v), nil
		}
	}
	return driver.Version{}, fmt.Errorf("%w: version %d of endpoint %q", driver.ErrNotFound, n, id)
}

// SetVersionColumns implements Store.
func (s *Store) SetVersionColumns(ctx context.Context, project, id string, n int, columns, types []string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, m, err := s.find(project, id)
	if err != nil {
		return err
	}
	for i := range m.versions {
		if m.versions[i].Number == n {
			m.versions[i].Columns, m.versions[i].Types = slices.Clone(columns), slices.Clone(types)
			return nil
		}
	}
	return fmt.Errorf("%w: version %d of endpoint %q", driver.ErrNotFound, n, id)
}

// Versions implements Store.
func (s *Store) Versions(ctx context.Context, project, id string) ([]driver.Version, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, m, err := s.find(project, id)
	if err != nil {
		return nil, err
	}
	out := make([]driver.Version, len(m.versions))
	for i, v := range m.versions {
		out[i] = cloneVersion(v)
	}
	return out, nil
}

// change applies fn to the endpoint with id of project, under the write
// lock; ErrNotFound when there is none.
func (s *Store) change(ctx context.Context, project, id string, fn func(*memProject, *memEndpoint)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, m, err := s.find(project, id)
	if err != nil {
		return err
	}
	fn(p, m)
	return nil
}

// find returns the project and endpoint with id; the caller holds s.mu.
func (s *Store) find(project, id string) (*memProject, *memEndpoint, error) {
	if p := s.projects[project]; p != nil {
		if m, ok := p.byID[id]; ok {
			return p, m, nil
		}
	}
	return nil, nil, fmt.Errorf("%w: endpoint id %q in project %q", driver.ErrNotFound, id, project)
}

func notFoundName(project, name string) error {
	return fmt.Errorf("%w: endpoint %q in project %q", driver.ErrNotFound, name, project)
}

// cloneEndpoint copies what a caller could modify in place.
func cloneEndpoint(e driver.Endpoint) driver.Endpoint {
	e.Query = cloneQuery(e.Query)
	if e.LastExecutedAt != nil {
		t := *e.LastExecutedAt
		e.LastExecutedAt = &t
	}
	if e.DeletedAt != nil {
		t := *e.DeletedAt
		e.DeletedAt = &t
	}
	e.MaterializationBuckets = maps.Clone(e.MaterializationBuckets)
	e.OptionalBreakdowns = slices.Clone(e.OptionalBreakdowns)
	e.MaterializationState = cloneState(e.MaterializationState)
	return e
}

func cloneState(st driver.MaterializationState) driver.MaterializationState {
	if st.At != nil {
		t := *st.At
		st.At = &t
	}
	if st.FailedAt != nil {
		t := *st.FailedAt
		st.FailedAt = &t
	}
	if st.Rows != nil {
		n := *st.Rows
		st.Rows = &n
	}
	return st
}

func cloneVersion(v driver.Version) driver.Version {
	v.Query = cloneQuery(v.Query)
	v.Columns, v.Types = slices.Clone(v.Columns), slices.Clone(v.Types)
	return v
}

func cloneQuery(q driver.Query) driver.Query {
	if q.Variables != nil {
		vars := maps.Clone(q.Variables)
		for k, ref := range vars {
			if ref.Value != nil {
				ref.Value = slices.Clone(ref.Value)
				vars[k] = ref
			}
		}
		q.Variables = vars
	}
	q.Insight = slices.Clone(q.Insight)
	return q
}
