package tree_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/tree"
)

// textWriter is a tree.Writer of one engine's quoting whose Bind writes
// the tenant as the printer writes it, as the tenant's placeholder, so
// that the two can be compared, and records the values bound.
type textWriter struct {
	e    engine.Engine
	b    strings.Builder
	args []any
}

func (w *textWriter) WriteString(s string)   { w.b.WriteString(s) }
func (w *textWriter) WriteIdent(name string) { w.b.WriteString(w.e.QuoteIdent(name)) }
func (w *textWriter) Bind(v any) {
	w.args = append(w.args, v)
	w.b.WriteString("{variables." + tenant + "}")
}

// TestWriteTableIsThePrintersConfinement: a table that generated SQL
// reads is written as the very derived table the printer prints a query's
// reference to it as, the tenant bound once; a table the scope does not
// confine, or no confinement, writes the name alone.
func TestWriteTableIsThePrintersConfinement(t *testing.T) {
	for _, tb := range treeTables(scopeRules) {
		if len(tb.Parts) != 1 {
			continue
		}
		name := tb.Parts[0]
		for _, e := range []engine.Engine{engine.SQLite, engine.PostgreSQL, engine.MySQL, engine.ClickHouse} {
			printed, err := printScoped(t, e, "SELECT 1 FROM "+e.QuoteIdent(name))
			require.NoError(t, err)
			w := &textWriter{e: e}
			require.NoError(t, tree.WriteTable(w, name, &tree.Confinement{Table: tb, Tenant: "7"}))
			assert.Equal(t, printed, "SELECT 1 FROM "+w.b.String(), "%s on %s", name, e.Name())
			if tb.TenantColumn != "" {
				assert.Equal(t, []any{"7"}, w.args, "%s on %s: the tenant is bound", name, e.Name())
			} else {
				assert.Empty(t, w.args)
			}
		}
	}

	w := &textWriter{e: engine.PostgreSQL}
	require.NoError(t, tree.WriteTable(w, "events", nil))
	require.NoError(t, tree.WriteTable(w, "analytics", &tree.Confinement{Table: tree.Table{Parts: []string{"Analytics"}}}))
	assert.Equal(t, `"events""analytics"`, w.b.String())
	assert.Empty(t, w.args)
}

// TestWriteTableRefusesUnscoped: a table with a tenant column and no
// tenant, or a confinement given for another table, is an error wrapping
// ErrUnscoped, and nothing is written.
func TestWriteTableRefusesUnscoped(t *testing.T) {
	for _, c := range []struct {
		name string
		conf *tree.Confinement
		want string
	}{
		{"events", &tree.Confinement{Table: tree.Table{Parts: []string{"events"}, TenantColumn: "project_id"}}, "given no tenant"},
		{"events", &tree.Confinement{Table: tree.Table{Parts: []string{"orders"}, TenantColumn: "project_id"}, Tenant: "7"}, `table "orders" was given for table "events"`},
		{"events", &tree.Confinement{Table: tree.Table{Parts: []string{"a", "events"}}}, `table "a.events" was given for table "events"`},
	} {
		w := &textWriter{e: engine.SQLite}
		err := tree.WriteTable(w, c.name, c.conf)
		require.ErrorIs(t, err, tree.ErrUnscoped)
		assert.ErrorContains(t, err, c.want)
		assert.Empty(t, w.b.String(), "nothing is written")
	}
}
