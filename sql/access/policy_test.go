package access

import (
	"context"
	"errors"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"testing"
)

func TestStaticRulesPerProject(t *testing.T) {
	tables := []Table{{Name: "events", Columns: []string{"a"}}}
	s, err := NewStatic(Rules{Tables: tables}, map[string]Rules{"2": {}})
	require.NoError(t, err)
	// NewStatic keeps its own copy.
	tables[0].Name, tables[0].Columns[0] = "secrets", "b"
	r1, err := s.Rules(context.Background(), "1")
	if err != nil || len(r1.Tables) != 1 || r1.Tables[0].Name != "events" || r1.Tables[0].Columns[0] != "a" {
		t.Fatalf("project 1: %+v, %v", r1, err)
	}
	require.NoError(t, Check("SELECT a FROM events", r1))
	r2, _ := s.Rules(context.Background(), "2")
	require.Error(t, Check("SELECT a FROM events", r2), "project 2 has rules of its own, without events")
}

func TestFunctionAllowlist(t *testing.T) {
	rs, err := compileRules(&Rules{Functions: []string{"my_fn"}})
	require.NoError(t, err)
	for name, want := range map[string]bool{
		"count": true, "COUNT": true, "JSONExtractString": true, "countIf": true,
		"uniqExactIf": true, "sumArrayIf": true, "avgOrNull": true, "quantileTDigestIf": true,
		"my_fn": true, "MY_FN": true,
		"pg_read_file": false, "load_extension": false, "sleep": false, "fileIf": false,
		"countIfIfIfIf": false, "ifIf": false, "dictGetString": false, "\u212aount": false,
	} {
		assert.Equal(t, want, rs.functionAllowed(name), "functionAllowed(%q)", name)
	}
}

// AnyTable opens every table but the library's own and the catalogs.
func TestAnyTable(t *testing.T) {
	rules := &Rules{AnyTable: true, Tables: []Table{{Name: "events", TenantColumn: "project_id"}}}
	require.NoError(t, Check("SELECT * FROM orders JOIN events ON orders.id = events.uuid", rules), "AnyTable refused an unlisted table")
	for _, q := range []string{"SELECT * FROM endpointkit_endpoints", "SELECT * FROM sqlite_master", "SELECT * FROM information_schema.tables"} {
		var e *Error
		if err := Check(q, rules); !errors.As(err, &e) || (e.Reason != ReasonProtected && e.Reason != ReasonCatalog) {
			t.Errorf("Check(%q) = %v; want a protected or catalog refusal", q, err)
		}
	}
	scoped, err := Confine("SELECT count(*) FROM orders, events", rules, "t")
	require.NoError(t, err)
	require.Equal(t, "SELECT count(*) FROM orders, (SELECT * FROM events WHERE events.project_id = {variables.t}) AS events", scoped, "Scope")
	require.Error(t, Check("SELECT * FROM orders", &Rules{}), "the zero Rules allowed a table")
}

// TestStaticKeepsAnyTable: NewStatic's copy of the rules keeps AnyTable; it
// dropped it, so a Static with AnyTable refused every table it did not list.
func TestStaticKeepsAnyTable(t *testing.T) {
	s, err := NewStatic(Rules{Tables: []Table{{Name: "events"}}, AnyTable: true}, map[string]Rules{"2": {AnyTable: true}})
	require.NoError(t, err)
	for _, p := range []string{"1", "2"} {
		r, err := s.Rules(context.Background(), p)
		require.NoError(t, err, "project %s: AnyTable %v, %v", p, r != nil && r.AnyTable, err)
		require.True(t, r.AnyTable, "project %s: AnyTable %v, %v", p, r != nil && r.AnyTable, err)
		assert.NoError(t, Check("SELECT a FROM other", r), "project %s", p)
	}
}
