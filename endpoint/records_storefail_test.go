package endpoint_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/require"
)

// brokenStore fails every call after it is broken, with a message that
// must not reach callers.
type brokenStore struct {
	driver.Store
	broken bool
}

var errDisk = errors.New("sqlite: disk I/O error at /var/lib/secret.db")

func (s *brokenStore) Create(ctx context.Context, e driver.Endpoint, v driver.Version) error {
	if s.broken {
		return errDisk
	}
	return s.Store.Create(ctx, e, v)
}
func (s *brokenStore) Update(ctx context.Context, e driver.Endpoint, v *driver.Version) error {
	if s.broken {
		return errDisk
	}
	return s.Store.Update(ctx, e, v)
}
func (s *brokenStore) MarkExecuted(ctx context.Context, p, id string, at time.Time) error {
	if s.broken {
		return errDisk
	}
	return s.Store.MarkExecuted(ctx, p, id, at)
}
func (s *brokenStore) Get(ctx context.Context, p, n string) (driver.Endpoint, error) {
	if s.broken {
		return driver.Endpoint{}, errDisk
	}
	return s.Store.Get(ctx, p, n)
}
func (s *brokenStore) List(ctx context.Context, p string) ([]driver.Endpoint, error) {
	if s.broken {
		return nil, errDisk
	}
	return s.Store.List(ctx, p)
}
func (s *brokenStore) Delete(ctx context.Context, p, id string) error {
	if s.broken {
		return errDisk
	}
	return s.Store.Delete(ctx, p, id)
}

type brokenVars struct{ variable.Store }

func (brokenVars) GetMany(context.Context, string, []string) (map[string]variable.Variable, error) {
	return nil, errDisk
}
func (brokenVars) List(context.Context, string) ([]variable.Variable, error) { return nil, errDisk }
func (brokenVars) Get(context.Context, string, string) (variable.Variable, error) {
	return variable.Variable{}, errDisk
}

func TestStorageFailures(t *testing.T) {
	ctx := context.Background()
	bs := &brokenStore{Store: memstore.New()}
	e := newEnv(t, func(c *endpoint.Config) { c.Endpoints = bs })
	e.create(t, "ep", e.query("SELECT id FROM orders WHERE country = {variables.country}", "country"))
	bs.broken = true
	calls := map[string]func() error{
		"Create": func() error {
			_, err := e.svc.Create(ctx, "1", endpoint.CreateRequest{Name: "x", Query: e.query("SELECT 1")})
			return err
		},
		"Get":    func() error { _, err := e.svc.Get(ctx, "1", "ep"); return err },
		"List":   func() error { _, err := e.svc.List(ctx, "1"); return err },
		"Delete": func() error { return e.svc.Delete(ctx, "1", "ep") },
		"Run":    func() error { _, err := run(e, "ep", map[string]any{"country": "US"}); return err },
		"DeleteVariable": func() error {
			return e.svc.DeleteVariable(ctx, "1", e.vars["paid"].ID)
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			err := call()
			wantError(t, err, 502, "execution_failed", "storage failed", "")
			require.ErrorIs(t, err, errDisk, "the cause is not reachable for logging")
		})
	}
}

func TestMarkExecutedFailureDoesNotFailRun(t *testing.T) {
	failing := &markFailStore{brokenStore: &brokenStore{Store: memstore.New()}}
	e2 := newEnv(t, func(c *endpoint.Config) { c.Endpoints = failing })
	e2.create(t, "ep", e2.query("SELECT 1"))
	for i := 0; i < 3; i++ {
		_, err := run(e2, "ep", nil)
		require.NoError(t, err, "run with a failing MarkExecuted")
		// The mark is written in the background; its failure gives the
		// claim back once written.
		require.NoError(t, e2.svc.Flush(context.Background()))
	}
	// Each failed write was given back, so every run tried again.
	require.Equal(t, 3, failing.marks, "MarkExecuted tried")
}

type markFailStore struct {
	*brokenStore
	marks int
}

func (s *markFailStore) MarkExecuted(context.Context, string, string, time.Time) error {
	s.marks++
	return errDisk
}

func TestVariableStorageFailures(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	q := e.query("SELECT {variables.country}", "country")
	svc, err := endpoint.New(endpoint.Config{Endpoints: memstore.New(), Variables: brokenVars{variable.NewMemoryStore()}, Executor: &fixedExecutor{}})
	require.NoError(t, err)
	_, err = svc.Create(ctx, "1", endpoint.CreateRequest{Name: "ep", Query: q})
	wantError(t, err, 502, "execution_failed", "storage failed", "")
	_, err = svc.ListVariables(ctx, "1")
	wantError(t, err, 502, "execution_failed", "storage failed", "")
	_, err = svc.GetVariable(ctx, "1", e.vars["country"].ID)
	wantError(t, err, 502, "execution_failed", "storage failed", "")
}
