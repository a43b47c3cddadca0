package endpoint

import (
	"context"
	"errors"
	"time"

	"github.com/endpointkit/endpointkit/variable"
)

// Config wires a Service to its dependencies.
type Config struct {
	Endpoints Store
	Variables variable.Store
	Executor  Executor
	// Now is the clock; nil means time.Now in UTC.
	Now func() time.Time
}

// Service creates, updates, lists, deletes and runs endpoints. It is safe
// for concurrent use.
type Service struct {
	cfg Config
}

// New returns a Service over cfg.
func New(cfg Config) (*Service, error) { return &Service{cfg: cfg}, nil }

// CreateRequest is the input of Create (the JSON body of POST endpoints/).
type CreateRequest struct {
	Name           string `json:"name"`
	Description    string `json:"description"`
	Query          *Query `json:"query"`
	IsActive       *bool  `json:"is_active"`
	IsMaterialized bool   `json:"is_materialized"`
}

// UpdateRequest is the input of Update (the JSON body of PATCH); nil fields
// are left as they are.
type UpdateRequest struct {
	Name           *string `json:"name"`
	Description    *string `json:"description"`
	Query          *Query  `json:"query"`
	IsActive       *bool   `json:"is_active"`
	IsMaterialized *bool   `json:"is_materialized"`
}

// RunRequest is the input of Run (the JSON body of POST .../run).
type RunRequest struct {
	Variables map[string]any `json:"variables"`
	Version   *int           `json:"version"`
	Limit     *int           `json:"limit"`
	Offset    *int           `json:"offset"`
	Refresh   string         `json:"refresh"`
	Debug     bool           `json:"debug"`
}

// RunResult is the answer of Run.
type RunResult struct {
	Name            string   `json:"name"`
	EndpointVersion int      `json:"endpoint_version"`
	Columns         []string `json:"columns"`
	Types           []string `json:"types"`
	// Results are rows as arrays for SQL endpoints, PostHog-shaped series
	// for insight endpoints.
	Results any        `json:"results"`
	HasMore bool       `json:"hasMore"`
	Debug   *DebugInfo `json:"debug,omitempty"`
}

// DebugInfo is added to a RunResult when the request asks for debug.
type DebugInfo struct {
	SQL       string  `json:"sql"`
	ArgCount  int     `json:"arg_count"`
	RenderMS  float64 `json:"render_ms"`
	ExecuteMS float64 `json:"execute_ms"`
}

var errTODO = errors.New("endpoint: not implemented yet")

// Create validates req and stores a new endpoint with version 1.
func (s *Service) Create(ctx context.Context, project string, req CreateRequest) (Endpoint, error) {
	return Endpoint{}, errTODO
}

// Update applies req to the endpoint named name; a changed query creates a
// new version. An update that fails a check changes nothing.
func (s *Service) Update(ctx context.Context, project, name string, req UpdateRequest) (Endpoint, error) {
	return Endpoint{}, errTODO
}

// Get returns the endpoint named name.
func (s *Service) Get(ctx context.Context, project, name string) (Endpoint, error) {
	return Endpoint{}, errTODO
}

// List returns the endpoints of project ordered by name.
func (s *Service) List(ctx context.Context, project string) ([]Endpoint, error) {
	return nil, errTODO
}

// Delete removes the endpoint named name and its versions.
func (s *Service) Delete(ctx context.Context, project, name string) error { return errTODO }

// Run executes the endpoint named name with the request's variables.
func (s *Service) Run(ctx context.Context, project, name string, req RunRequest) (*RunResult, error) {
	return nil, errTODO
}

// CreateVariable validates v, gives it an id when it has none, and stores it.
func (s *Service) CreateVariable(ctx context.Context, project string, v variable.Variable) (variable.Variable, error) {
	return variable.Variable{}, errTODO
}

// VariablePatch is the input of UpdateVariable; nil fields are left as they are.
type VariablePatch struct {
	Name         *string   `json:"name"`
	CodeName     *string   `json:"code_name"`
	Type         *string   `json:"type"`
	DefaultValue *any      `json:"default_value"`
	Values       *[]string `json:"values"`
	IsMulti      *bool     `json:"is_multi"`
}

// GetVariable returns the variable with id.
func (s *Service) GetVariable(ctx context.Context, project, id string) (variable.Variable, error) {
	return variable.Variable{}, errTODO
}

// ListVariables returns the variables of project.
func (s *Service) ListVariables(ctx context.Context, project string) ([]variable.Variable, error) {
	return nil, errTODO
}

// UpdateVariable applies patch to the variable with id.
func (s *Service) UpdateVariable(ctx context.Context, project, id string, patch VariablePatch) (variable.Variable, error) {
	return variable.Variable{}, errTODO
}

// DeleteVariable removes the variable with id; a variable that an endpoint
// still uses is refused with ErrConflict.
func (s *Service) DeleteVariable(ctx context.Context, project, id string) error { return errTODO }
