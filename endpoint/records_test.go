package endpoint_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSoftDeleteRetention: a soft-deleted materialized endpoint is not
// refreshed and keeps its table for the retention period; Restore is a
// 409 while its name is taken; past the retention the next listing
// deletes it for good (record, versions, table), and Restore is a 404.
func TestSoftDeleteRetention(t *testing.T) {
	e, _ := newMatEnv(t, 500)
	ctx := context.Background()
	q := e.daily()
	e.createMat(t, "daily", q, endpoint.CreateRequest{})
	if n, err := e.svc.RefreshStale(ctx); err != nil || n != 1 {
		t.Fatalf("RefreshStale = %d, %v", n, err)
	}
	gone, err := e.svc.SoftDelete(ctx, "1", "daily")
	if err != nil || gone.DeletedAt == nil || gone.Name != "daily" {
		t.Fatalf("SoftDelete = %+v, %v", gone, err)
	}
	if _, err := e.svc.Get(ctx, "1", "daily"); endpoint.StatusOf(err) != http.StatusNotFound {
		t.Fatalf("Get of a deleted endpoint: %v", err)
	}
	e.clock.Advance(2 * time.Hour) // past the table's freshness
	if n, err := e.svc.RefreshStale(ctx); err != nil || n != 0 {
		t.Fatalf("RefreshStale refreshed %d deleted endpoints (%v)", n, err)
	}
	require.Len(t, e.tables(t), 1, "tables")

	e.create(t, "daily", q)
	if _, err := e.svc.Restore(ctx, "1", "daily"); endpoint.StatusOf(err) != http.StatusConflict {
		t.Fatalf("Restore over a live name: %v, want 409", err)
	}
	require.NoError(t, e.svc.Delete(ctx, "1", "daily"))
	back, err := e.svc.Restore(ctx, "1", "daily")
	if err != nil || back.ID != gone.ID || !back.IsMaterialized {
		t.Fatalf("Restore = %+v, %v", back, err)
	}

	if _, err := e.svc.SoftDelete(ctx, "1", "daily"); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(endpoint.DefaultDeletedRetention + time.Second)
	list, err := e.svc.List(ctx, "1")
	require.NoError(t, err, "List = %d endpoints, %v", len(list), err)
	require.Empty(t, list, "List = %d endpoints, %v", len(list), err)
	require.Empty(t, e.tables(t), "tables")
	if _, err := e.svc.Restore(ctx, "1", "daily"); !errors.Is(err, endpoint.ErrNotFound) {
		t.Fatalf("Restore past the retention: %v, want not found", err)
	}
	if _, err := e.eps.Versions(ctx, "1", gone.ID); !errors.Is(err, endpoint.ErrNotFound) {
		t.Fatalf("the versions of a purged endpoint remain: %v", err)
	}
}

// TestSoftDeletedIsInvisible: no method of the Service but Restore finds a
// soft-deleted endpoint, by its name or by the name a store of an older
// version kept it under (its name, a slash and its id); a rename through
// that name does not bring it back.
func TestSoftDeletedIsInvisible(t *testing.T) {
	e, _ := newMatEnv(t, 200)
	ctx := context.Background()
	e.createMat(t, "daily", e.daily(), endpoint.CreateRequest{})
	gone, err := e.svc.SoftDelete(ctx, "1", "daily")
	require.NoError(t, err)
	vars := map[string]any{"country": "US", "from": "2025-04-01", "to": "2025-05-01"}
	for _, name := range []string{"daily", "daily/" + gone.ID, "daily%2F" + gone.ID, "x/y"} {
		calls := map[string]func() error{
			"Get":      func() error { _, err := e.svc.Get(ctx, "1", name); return err },
			"Run":      func() error { _, err := e.svc.Run(ctx, "1", name, endpoint.RunRequest{Variables: vars}); return err },
			"Versions": func() error { _, err := e.svc.Versions(ctx, "1", name); return err },
			"Logs":     func() error { _, _, err := e.svc.Logs(ctx, "1", name, 10, ""); return err },
			"Update": func() error {
				_, err := e.svc.Update(ctx, "1", name, endpoint.UpdateRequest{Description: ptr("x")})
				return err
			},
			"Rename": func() error {
				_, err := e.svc.Update(ctx, "1", name, endpoint.UpdateRequest{Name: ptr("back")})
				return err
			},
			"Delete":                func() error { return e.svc.Delete(ctx, "1", name) },
			"SoftDelete":            func() error { _, err := e.svc.SoftDelete(ctx, "1", name); return err },
			"Materialize":           func() error { return e.svc.Materialize(ctx, "1", name) },
			"MaterializationStatus": func() error { _, err := e.svc.MaterializationStatus(ctx, "1", name); return err },
			"Version":               func() error { _, err := e.svc.Version(ctx, "1", name, 1); return err },
			"RunSchema":             func() error { _, err := e.svc.RunSchema(ctx, "1", name, 0); return err },
		}
		for method, call := range calls {
			err := call()
			if assert.ErrorIs(t, err, endpoint.ErrNotFound, "%s(%q) of a soft-deleted endpoint: %v, want a 404", method, name, err) {
				assert.Equal(t, http.StatusNotFound, endpoint.StatusOf(err), "%s(%q) of a soft-deleted endpoint: %v, want a 404", method, name, err)
			}
		}
		// The one admission finds no record to run: a 404, before any budget.
		ask := endpoint.Ask{Act: endpoint.ActRun, Endpoint: name, Run: &endpoint.RunRequest{}}
		_, err := e.svc.Admit(ctx, endpoint.Budgets{}, endpoint.Caller{Project: "1"}, ask)
		assert.ErrorIs(t, err, endpoint.ErrNotFound, "Admit of a run of soft-deleted %q", name)
	}
	if _, err := e.svc.Get(ctx, "1", "back"); !errors.Is(err, endpoint.ErrNotFound) {
		t.Errorf("a rename through the stored name brought the deleted endpoint back: %v", err)
	}
	list, err := e.svc.List(ctx, "1")
	if assert.NoError(t, err, "List = %+v, %v; want none", list, err) {
		assert.Empty(t, list, "List = %+v, %v; want none", list, err)
	}
	back, err := e.svc.Restore(ctx, "1", "daily")
	if err != nil || back.ID != gone.ID || back.Name != "daily" || back.DeletedAt != nil {
		t.Fatalf("Restore = %+v, %v", back, err)
	}
	if _, err := e.svc.Run(ctx, "1", "daily", endpoint.RunRequest{Variables: vars}); err != nil {
		t.Errorf("Run of the restored endpoint: %v", err)
	}
}

// TestSoftDeleteKeepsTheName: the store keeps a soft-deleted endpoint
// under its own name, its state being DeletedAt; the same name deleted
// twice is two records beside a live one, Restore brings back the latest
// and is a 409 while a live endpoint holds the name.
func TestSoftDeleteKeepsTheName(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	q := e.query("SELECT 1 AS one")
	first := e.create(t, "daily", q)
	if _, err := e.svc.SoftDelete(ctx, "1", "daily"); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Minute)
	second := e.create(t, "daily", q)
	if _, err := e.svc.SoftDelete(ctx, "1", "daily"); err != nil {
		t.Fatal(err)
	}
	live := e.create(t, "daily", q)
	stored, err := e.eps.List(ctx, "1")
	require.NoError(t, err, "stored = %+v, %v; want three records", stored, err)
	require.Len(t, stored, 3, "stored = %+v, %v; want three records", stored, err)
	for _, s := range stored {
		assert.Equal(t, "daily", s.Name, "record %s is stored as", s.ID)
		deleted := s.DeletedAt != nil
		assert.Equal(t, s.ID != live.ID, deleted, "record %s: deleted", s.ID)
	}
	if _, err := e.svc.Restore(ctx, "1", "daily"); endpoint.StatusOf(err) != http.StatusConflict {
		t.Fatalf("Restore over a live name: %v, want 409", err)
	}
	require.NoError(t, e.svc.Delete(ctx, "1", "daily"))
	back, err := e.svc.Restore(ctx, "1", "daily")
	require.NoError(t, err, "Restore = %s, %v; want the latest deleted, %s", back.ID, err, second.ID)
	require.Equal(t, second.ID, back.ID, "Restore = %s, %v; want the latest deleted, %s", back.ID, err, second.ID)
	if _, err := e.svc.Restore(ctx, "1", "daily"); endpoint.StatusOf(err) != http.StatusConflict {
		t.Fatalf("Restore of the older record over the restored one: %v, want 409", err)
	}
	if got, err := e.svc.Get(ctx, "1", "daily"); err != nil || got.ID != second.ID || got.ID == first.ID {
		t.Fatalf("Get = %s, %v", got.ID, err)
	}
}

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
	svc, err := endpoint.New(endpoint.Config{Endpoints: memstore.New(), Variables: brokenVars{variable.NewMemoryStore()}, Executor: answering(&driver.Result{})})
	require.NoError(t, err)
	_, err = svc.Create(ctx, "1", endpoint.CreateRequest{Name: "ep", Query: q})
	wantError(t, err, 502, "execution_failed", "storage failed", "")
	_, err = svc.ListVariables(ctx, "1")
	wantError(t, err, 502, "execution_failed", "storage failed", "")
	_, err = svc.GetVariable(ctx, "1", e.vars["country"].ID)
	wantError(t, err, 502, "execution_failed", "storage failed", "")
}

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

// TestVersions: each version shows its query, the variables a run
// takes (definitions and required), when it was saved, whether it can be
// materialized and whether the stored table was built from it.
func TestVersions(t *testing.T) {
	e, _ := newMatEnv(t, 500)
	ctx := context.Background()
	created := e.clock.Now()
	e.createMat(t, "daily", e.daily(), endpoint.CreateRequest{})
	e.materialize(t, "daily")
	e.clock.Advance(time.Hour)
	if _, err := e.svc.Update(ctx, "1", "daily", endpoint.UpdateRequest{Query: e.query("SELECT id FROM orders WHERE plan IN {variables.plans} OR country = {variables.country} OR id > 5", "plans", "country"),
		IsMaterialized: new(false)}); err != nil {
		t.Fatal(err)
	}
	infos, err := e.svc.Versions(ctx, "1", "daily")
	require.NoError(t, err, "Versions = %d, %v", len(infos), err)
	require.Len(t, infos, 2, "Versions = %d, %v", len(infos), err)
	v1, v2 := infos[0], infos[1]
	if v1.Version != 1 || !v1.CreatedAt.Equal(created) || v1.IsCurrent || v1.Query.SQL != dailyPurchases ||
		!v1.Materialization.CanMaterialize || v1.Materialization.Materialized {
		t.Fatalf("version 1 = %+v", v1)
	}
	var names []string
	for _, v := range v1.Variables {
		names = append(names, v.CodeName)
		require.True(t, v.Required, "variable %+v", v)
		require.NotEqual(t, "", v.ID, "variable %+v", v)
	}
	require.Equal(t, []string{"country", "from", "to"}, names, "version 1 variables %+v", v1.Variables)
	require.Equal(t, variable.Date, v1.Variables[1].Type, "version 1 variables %+v", v1.Variables)
	if v2.Version != 2 || !v2.IsCurrent || !v2.CreatedAt.Equal(created.Add(time.Hour)) || v2.Materialization.CanMaterialize ||
		v2.Materialization.Reason == "" || len(v2.Variables) != 2 || !v2.Variables[1].IsMulti ||
		!reflect.DeepEqual(v2.Variables[1].Values, []string{"free", "pro", "enterprise"}) {
		t.Fatalf("version 2 = %+v", v2)
	}
	one, err := e.svc.Version(ctx, "1", "daily", 1)
	require.NoError(t, err, "Version(1) = %+v, %v", one, err)
	require.Equal(t, v1, one, "Version(1) = %+v, %v", one, err)
	_, err = e.svc.Version(ctx, "1", "daily", 3)
	wantError(t, err, 404, endpoint.CodeNotFound, "Version 3 not found for endpoint 'daily'", "")
	_, err = e.svc.Version(ctx, "1", "daily", 0)
	wantError(t, err, 400, endpoint.CodeInvalidInput, "Version must be a positive integer, got 0.", "version")
	_, err = e.svc.Versions(ctx, "1", "nope")
	wantError(t, err, 404, endpoint.CodeNotFound, "Endpoint 'nope' not found.", "")

	// Materialized again, the current version's table is the one shown.
	if _, err := e.svc.Update(ctx, "1", "daily", endpoint.UpdateRequest{Query: e.daily(), IsMaterialized: new(true)}); err != nil {
		t.Fatal(err)
	}
	e.materialize(t, "daily")
	v3, err := e.svc.Version(ctx, "1", "daily", 3)
	if err != nil || !v3.Materialization.Materialized || v3.Materialization.LastMaterializedAt == nil {
		t.Fatalf("version 3 = %+v, %v", v3, err)
	}
	if v1, _ := e.svc.Version(ctx, "1", "daily", 1); v1.Materialization.Materialized {
		t.Fatal("version 1 shows the table of version 3")
	}
}

// TestRunSchema: a SQL version is described by its columns, as the
// database named them at save (kept with the version: no query now); an
// insight version by its variables.
func TestRunSchema(t *testing.T) {
	e, x := newCountedEnv(t)
	ctx := context.Background()
	e.create(t, "ep", e.query("SELECT id, country AS c, amount * 2 AS double FROM orders WHERE country = {variables.country} AND plan IN {variables.plans} AND created >= {variables.from} AND paid = {variables.paid} AND amount > {variables.min_amount}",
		"country", "plans", "from", "paid", "min_amount"))
	x.Reset() // the check of the save
	rs, err := e.svc.RunSchema(ctx, "1", "ep", 0)
	require.NoError(t, err)
	if !reflect.DeepEqual(rs.Columns, []string{"id", "c", "double"}) || rs.Version != 1 || !rs.IsCurrent || len(rs.Variables) != 5 ||
		rs.DefaultLimit != endpoint.DefaultLimit || rs.MaxLimit != endpoint.DefaultMaxLimit || rs.Kind != endpoint.KindSQL {
		t.Fatalf("RunSchema = %+v", rs)
	}
	require.Zero(t, x.Queries())
	_, err = e.svc.RunSchema(ctx, "1", "ep", 2)
	wantError(t, err, 404, endpoint.CodeNotFound, "Version 2 not found for endpoint 'ep'", "")

	in := newInsightEnv(t)
	q := insightQuery(t, trendsByBrowser)
	if _, err := in.svc.Create(ctx, "1", endpoint.CreateRequest{Name: "trends", Query: q}); err != nil {
		t.Fatal(err)
	}
	rs, err = in.svc.RunSchema(ctx, "1", "trends", 1)
	if err != nil || rs.Kind != endpoint.KindTrends || len(rs.Columns) != 0 {
		t.Fatalf("RunSchema(trends) = %+v, %v", rs, err)
	}
	b, _ := json.Marshal(rs.Variables)
	want := `[{"name":"$browser","code_name":"$browser","type":"String","required":false},{"name":"date_from","code_name":"date_from","type":"Date","required":false},{"name":"date_to","code_name":"date_to","type":"Date","required":false}]`
	require.Equal(t, want, string(b), "insight variables %s", b)
	if _, err := in.svc.Update(ctx, "1", "trends", endpoint.UpdateRequest{IsMaterialized: new(true)}); err != nil {
		t.Fatal(err)
	}
	rs, _ = in.svc.RunSchema(ctx, "1", "trends", 0)
	if len(rs.Variables) != 1 || !rs.Variables[0].Required || !rs.Materialized {
		t.Fatalf("a materialized insight's variables: %+v", rs)
	}
}

// TestMaterializationStatusNotMaterialized: an endpoint that is not
// materialized has no status; an unknown one is a 404.
func TestMaterializationStatusNotMaterialized(t *testing.T) {
	e := newEnv(t)
	e.create(t, "ep", e.query("SELECT 1 AS one"))
	r := e.status(t, "ep")
	b, _ := json.Marshal(r)
	want := `{"name":"ep","is_materialized":false,"status":null,"serving":false,"version":0,"last_success_at":null,"rows":null,"bytes":null,"duration_ms":null,"last_error":null,"last_error_at":null,"data_freshness_seconds":86400,"materialization_freshness_seconds":86400,"next_refresh_at":null,"hibernating":false,"hibernating_since":null,"progress":null,"source_rows":null,"savings_warning":null,"edge_index":null,"edge_index_warning":null}`
	require.Equal(t, want, string(b), "status = %s", b)
	_, err := e.svc.MaterializationStatus(context.Background(), "1", "nope")
	wantError(t, err, 404, endpoint.CodeNotFound, "Endpoint 'nope' not found.", "")
}

// TestMaterializationStatusLifecycle: pending, then ready with rows and
// duration, then pending again for a new version.
func TestMaterializationStatusLifecycle(t *testing.T) {
	e, _ := newMatEnv(t, 500)
	e.createMat(t, "daily", e.daily(), endpoint.CreateRequest{})
	r := e.status(t, "daily")
	if !isStatus(r, endpoint.StatusPending) || r.Serving || r.LastSuccessAt != nil || !r.NextRefreshAt.Equal(e.clock.Now()) {
		t.Fatalf("status before a refresh: %+v", r)
	}
	e.materialize(t, "daily")
	r = e.status(t, "daily")
	if !isStatus(r, endpoint.StatusCompleted) || !r.Serving || r.Rows == nil || r.DurationMS == nil || r.Version != 1 || r.LastError != nil {
		t.Fatalf("status after a refresh: %+v", r)
	}
	var n int64
	require.NoError(t, e.db.QueryRow(`SELECT count(*) FROM (`+"SELECT date(timestamp) AS day, country FROM (SELECT timestamp, json_extract(properties, '$.country') AS country FROM events WHERE event = 'purchase') GROUP BY day, country"+`)`).Scan(&n))
	require.Equal(t, n, *r.Rows, "rows")
	_, err := e.svc.Update(context.Background(), "1", "daily", endpoint.UpdateRequest{Query: e.query(dailyPurchases+" LIMIT 10", "country", "from", "to")})
	require.NoError(t, err)
	r = e.status(t, "daily")
	if !isStatus(r, endpoint.StatusPending) || r.Version != 1 || r.Serving {
		t.Fatalf("status after a new version: %+v", r)
	}
}

// TestStatusRouteAgreesWithTheEndpoint: the status route says what the
// endpoint's materialization says, in the same word (it said ready where
// the endpoint said completed), and gives the freshness its table follows
// (it gave only data_freshness_seconds, 86400, for a table refreshed every
// 1800 s).
func TestStatusRouteAgreesWithTheEndpoint(t *testing.T) {
	e, _ := newMatEnv(t, 300)
	half := endpoint.Seconds(30 * time.Minute)
	e.createMat(t, "daily", e.daily(), endpoint.CreateRequest{MaterializationFreshness: half})
	for _, step := range []string{"pending", "completed"} {
		if step == "completed" {
			e.materialize(t, "daily")
		}
		r := e.status(t, "daily")
		ep := e.get(t, "daily")
		if r.Status == nil || *r.Status != ep.Materialization.Status || string(*r.Status) != step {
			t.Fatalf("%s: the route says %v, the endpoint %q", step, r.Status, ep.Materialization.Status)
		}
		require.Equal(t, 1800, r.MaterializationFreshnessSeconds, "%s: freshness %d s (data %d s), want 1800 (data %d)", step, r.MaterializationFreshnessSeconds, r.DataFreshnessSeconds, ep.DataFreshnessSeconds)
		require.Equal(t, ep.DataFreshnessSeconds, r.DataFreshnessSeconds, "%s: freshness %d s (data %d s), want 1800 (data %d)", step, r.MaterializationFreshnessSeconds, r.DataFreshnessSeconds, ep.DataFreshnessSeconds)
	}
}

// TestDescriptionRefusesWhatNoStoreHolds: a description with a NUL
// character, which PostgreSQL cannot store in text, or that is not UTF-8,
// was accepted and failed in the store (a 502 "storage failed" on
// PostgreSQL, stored as it was on the others). It is a 400 naming the
// description, on create and on update, and nothing is stored.
func TestDescriptionRefusesWhatNoStoreHolds(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	q := &endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT 1 AS x"}
	for _, bad := range []string{"a\x00b", "a\xffb"} {
		_, err := e.svc.Create(ctx, "1", endpoint.CreateRequest{Name: "described", Description: bad, Query: q})
		var ee *endpoint.Error
		if assert.True(t, errors.As(err, &ee), "Create with description %q = %v", bad, err) {
			assert.Equal(t, 400, ee.Status)
			assert.Equal(t, "description", ee.Attr)
		}
		_, err = e.svc.Get(ctx, "1", "described")
		assert.Error(t, err, "nothing is stored")
	}
	_, err := e.svc.Create(ctx, "1", endpoint.CreateRequest{Name: "described", Description: "fine", Query: q})
	require.NoError(t, err)
	bad := "x\x00"
	_, err = e.svc.Update(ctx, "1", "described", endpoint.UpdateRequest{Description: &bad})
	var ee *endpoint.Error
	if assert.True(t, errors.As(err, &ee), "Update = %v", err) {
		assert.Equal(t, 400, ee.Status)
		assert.Equal(t, "description", ee.Attr)
	}
	got, err := e.svc.Get(ctx, "1", "described")
	require.NoError(t, err)
	assert.Equal(t, "fine", got.Description)
}
