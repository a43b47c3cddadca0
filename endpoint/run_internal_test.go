package endpoint

import (
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/scope"
)

// TestSQLResult: the rows past skip are cut to the limit, HasMore tells
// whether the cut dropped any, and the rows are never nil, whichever path
// (inline or stored table) asks.
func TestSQLResult(t *testing.T) {
	rows := func(ids ...int) [][]any {
		out := make([][]any, 0, len(ids))
		for _, id := range ids {
			out = append(out, []any{int64(id)})
		}
		return out
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name        string
		read        [][]any
		skip, limit int
		at          *time.Time
		want        [][]any
		more        bool
	}{
		{"inline, one row past the limit", rows(1, 2, 3), 0, 2, nil, rows(1, 2), true},
		{"inline, within the limit", rows(1, 2), 0, 2, nil, rows(1, 2), false},
		{"inline, no rows", nil, 0, 2, nil, rows(), false},
		{"inline, limit 0", rows(1), 0, 0, nil, rows(), true},
		{"stored, skip then cut", rows(1, 2, 3, 4), 1, 2, &at, rows(2, 3), true},
		{"stored, skip to the end", rows(1, 2), 2, 2, &at, rows(), false},
		{"stored, skip past the end", rows(1, 2), 5, 2, &at, rows(), false},
	}
	ep := &driver.Endpoint{Name: "ep"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			trace := newRunTrace(false)
			res := &driver.Result{Columns: []string{"id"}, Rows: tt.read}
			got := sqlResult(ep, runOptions{version: 3, limit: tt.limit}, tt.at, res, tt.skip, &trace)
			rows, ok := got.Results.([][]any)
			if !ok || rows == nil || !reflect.DeepEqual(rows, tt.want) || got.HasMore != tt.more {
				t.Fatalf("results %#v hasMore %v, want %v %v", got.Results, got.HasMore, tt.want, tt.more)
			}
			if got.Name != "ep" || got.EndpointVersion != 3 || got.Debug != nil {
				t.Errorf("result %+v", got)
			}
			if assert.Equal(t, []string{"id"}, got.Columns, "columns %#v types %#v, want [id] and non-nil", got.Columns, got.Types) {
				assert.NotNil(t, got.Types, "columns %#v types %#v, want [id] and non-nil", got.Columns, got.Types)
			}
			if got.EndpointMaterialized != (tt.at != nil) || got.EndpointMaterializedAt != tt.at {
				t.Errorf("materialized %v at %v, want at %v", got.EndpointMaterialized, got.EndpointMaterializedAt, tt.at)
			}
		})
	}
}

// TestRunTrace: debug information names the executed statement and its
// argument count only when asked for.
func TestRunTrace(t *testing.T) {
	render := func(sql string, values map[string]any) scope.Statement {
		tmpl, _, err := scope.New(nil, "1", engine.SQLite).Compile(sql)
		require.NoError(t, err)
		st, err := tmpl.Render(values)
		require.NoError(t, err)
		return st
	}
	off := newRunTrace(false)
	off.rendered(render("SELECT {variables.a}", map[string]any{"a": int64(1)}))
	require.Nil(t, off.info(), "debug info without asking")
	on := newRunTrace(true)
	on.rendered(render("SELECT {variables.a}, {variables.b}", map[string]any{"a": int64(1), "b": int64(2)}))
	d := on.info()
	if d == nil || d.SQL != "SELECT ?, ?" || d.ArgCount != 2 || d.RenderMS < 0 || d.ExecuteMS < 0 {
		t.Fatalf("debug info %+v", d)
	}
}

// TestNewExecutionID: execution ids are random version 4 UUIDs of the RFC
// variant, distinct, made in one allocation.
func TestNewExecutionID(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := newExecutionID()
		u, err := uuid.Parse(id)
		if err != nil || u.Version() != 4 || u.Variant() != uuid.RFC4122 || u.String() != id {
			t.Fatalf("execution id %q: version %v, variant %v, err %v", id, u.Version(), u.Variant(), err)
		}
		if seen[id] {
			t.Fatalf("execution id %q made twice", id)
		}
		seen[id] = true
	}
	if n := testing.AllocsPerRun(100, func() { _ = newExecutionID() }); n > 1 && !raceEnabled {
		t.Fatalf("newExecutionID allocates %v times, want 1", n)
	}
}
