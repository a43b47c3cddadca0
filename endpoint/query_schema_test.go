package endpoint_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Schema lists what the policy lets a project read, with the engine's
// types: every column of a scoped table, only the allowed ones of a table
// with Columns, and a listed table the database lacks with its error.
func TestSchema(t *testing.T) {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "s.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	require.NoError(t, demo.Load(ctx, db, 10, 1))
	_, err = db.Exec("CREATE TABLE plans (name TEXT, price REAL, seats INTEGER, secret TEXT)")
	require.NoError(t, err)
	policy, err := access.NewStatic(access.Rules{Tables: []access.Table{
		{Name: "events", TenantColumn: "project_id"},
		{Name: "plans", Columns: []string{"name", "price", "seats"}},
		{Name: "missing"},
	}}, map[string]access.Rules{"2": {Tables: []access.Table{{Name: "plans", Columns: []string{"name"}}}}})
	require.NoError(t, err)
	svc, err := endpoint.New(endpoint.Config{Endpoints: memstore.New(), Variables: variable.NewMemoryStore(),
		Executor: sqlexec.New(db, engine.SQLite), Access: policy})
	require.NoError(t, err)

	got, err := svc.Schema(ctx, "1")
	require.NoError(t, err)
	text := func(names ...string) []endpoint.SchemaColumn {
		var out []endpoint.SchemaColumn
		for _, n := range names {
			out = append(out, endpoint.SchemaColumn{Name: n, Type: "TEXT"})
		}
		return out
	}
	if got, want := got, ([]endpoint.SchemaTable{
		{Name: "events", Columns: text("project_id", "uuid", "event", "distinct_id", "timestamp", "properties")},
		{Name: "missing", Columns: []endpoint.SchemaColumn{}, Error: "The database refused the query: no such table: missing"},
		{Name: "plans", Columns: []endpoint.SchemaColumn{{Name: "name", Type: "TEXT"}, {Name: "price", Type: "REAL"}, {Name: "seats", Type: "INTEGER"}}},
	}); !reflect.DeepEqual(got, want) {
		t.Errorf("got = %+v, want %+v", got, want)
	}

	got, err = svc.Schema(ctx, "2")
	require.NoError(t, err)
	if got, want := got, ([]endpoint.SchemaTable{{Name: "plans", Columns: text("name")}}); !reflect.DeepEqual(got, want) {
		t.Errorf("project 2's own rules: got = %+v, want %+v", got, want)
	}

	// Without a policy the Service reads no catalog: nothing is listed.
	open, err := endpoint.New(endpoint.Config{Endpoints: memstore.New(), Variables: variable.NewMemoryStore(),
		Executor: sqlexec.New(db, engine.SQLite)})
	require.NoError(t, err)
	got, err = open.Schema(ctx, "1")
	require.NoError(t, err)
	assert.Equal(t, []endpoint.SchemaTable{}, got)
}
