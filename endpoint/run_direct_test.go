package endpoint_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// wrappedOnly is an executor whose engine does not stop early
// (engine.Engine.StopsEarly), so that every run pages through the wrapper,
// as before runs could go unwrapped.
type wrappedOnly struct{ driver.Executor }

func (x wrappedOnly) Engine() engine.Engine { return computesAll{x.Executor.Engine()} }

// computesAll is an engine that computes every row of a result whether
// or not they are read.
type computesAll struct{ engine.Engine }

func (computesAll) StopsEarly() bool { return false }

// TestDirectRunsAnswerAsWrapped: a run that reads a plain SELECT as written,
// stopping after limit+1 rows, answers exactly what the run through the
// paging wrapper answers (rows, hasMore, columns and types), for every
// limit and offset; only plain SELECTs without an offset skip the wrapper.
func TestDirectRunsAnswerAsWrapped(t *testing.T) {
	e := newEnv(t)
	wrapped, err := endpoint.New(endpoint.Config{
		Endpoints: e.eps, Variables: e.vstore, Executor: wrappedOnly{sqlexec.New(e.db, engine.SQLite)}, Now: e.clock.Now,
	})
	require.NoError(t, err)
	queries := []struct {
		sql    string
		vars   []string
		values map[string]any
		direct bool
	}{
		{"SELECT id, country FROM orders ORDER BY id", nil, nil, true},
		{"SELECT country, count(*) AS n, sum(amount) AS s, max(created) AS last FROM orders GROUP BY country ORDER BY n DESC, country", nil, nil, true},
		{"SELECT * FROM orders WHERE amount > {variables.min_amount} ORDER BY amount", []string{"min_amount"}, map[string]any{"min_amount": 5}, true},
		{"SELECT id FROM orders WHERE plan IN ({variables.plans}) ORDER BY id", []string{"plans"}, map[string]any{"plans": []any{"pro", "free"}}, true},
		{"SELECT id, NULL AS z, amount * 2 AS a2, paid = 1 AS p FROM orders ORDER BY id LIMIT 4", nil, nil, true},
		{"SELECT 1", nil, nil, true},
		{"-- newest first\nSELECT id FROM orders ORDER BY id DESC; -- done", nil, nil, true},
		{"SELECT id FROM orders WHERE 0", nil, nil, true},
		{"SELECT NULL AS n FROM orders", nil, nil, true},
		{"WITH x AS (SELECT id FROM orders) SELECT * FROM x ORDER BY id", nil, nil, false},
	}
	ctx := context.Background()
	for i, q := range queries {
		name := fmt.Sprintf("q%d", i)
		e.create(t, name, e.query(q.sql, q.vars...))
		for _, limit := range []int{0, 1, 2, 5, 6, 7, 100} {
			for _, offset := range []*int{nil, ptr(0), ptr(2)} {
				req := endpoint.RunRequest{Variables: q.values, Limit: ptr(limit), Offset: offset, Debug: true}
				got, err := e.svc.Run(ctx, "1", name, req)
				require.NoError(t, err, "%s limit %d", q.sql, limit)
				want, err := wrapped.Run(ctx, "1", name, req)
				require.NoError(t, err)
				where := fmt.Sprintf("%q limit %d offset %v", q.sql, limit, offset)
				if !reflect.DeepEqual(got.Results, want.Results) || got.HasMore != want.HasMore ||
					!slices.Equal(got.Columns, want.Columns) || !slices.Equal(got.Types, want.Types) {
					t.Fatalf("%s: direct %v %v %q %q, wrapped %v %v %q %q", where,
						got.Results, got.HasMore, got.Columns, got.Types, want.Results, want.HasMore, want.Columns, want.Types)
				}
				isDirect := !strings.HasPrefix(got.Debug.SQL, "SELECT * FROM (\n")
				wantDirect := q.direct && (offset == nil || *offset == 0)
				assert.Equal(t, wantDirect, isDirect, "%s: ran %q, unwrapped", where, got.Debug.SQL)
				assert.True(t, strings.HasPrefix(want.Debug.SQL, "SELECT * FROM (\n"), "%s: the wrapped-only Service ran %q", where, want.Debug.SQL)
			}
		}
	}
}

// TestDirectRunColumnNames: through the wrapper SQLite renames a column
// whose name repeats ("id:1"); run as written, the engine names it as the
// query does, but the answer has the names the version was saved with (the
// description at save runs through the wrapper), whichever way it ran.
func TestDirectRunColumnNames(t *testing.T) {
	e := newEnv(t)
	e.create(t, "dup", e.query("SELECT o.id, p.id FROM orders o JOIN orders p ON p.id = o.id ORDER BY o.id"))
	got, err := run(e, "dup", nil)
	require.NoError(t, err, "direct: %q, %v", got.Columns, err)
	require.True(t, slices.Equal(got.Columns, []string{"id", "id:1"}), "direct: %q, %v", got.Columns, err)
	got, err = e.svc.Run(context.Background(), "1", "dup", endpoint.RunRequest{Offset: ptr(1)})
	require.NoError(t, err, "wrapped: %q, %v", got.Columns, err)
	require.True(t, slices.Equal(got.Columns, []string{"id", "id:1"}), "wrapped: %q, %v", got.Columns, err)
}

func ptr[T any](v T) *T { return &v }

// TestDirectRunsOnlySelect: statements that are not a plain SELECT still go
// through the wrapper, which SQLite refuses for anything but a query, so a
// saved DELETE or INSERT fails instead of writing.
func TestDirectRunsOnlySelect(t *testing.T) {
	e := newEnv(t)
	for i, sql := range []string{
		"DELETE FROM orders WHERE id = 1",
		"WITH x AS (SELECT 1) DELETE FROM orders WHERE id = 2",
		"INSERT INTO orders SELECT 7, country, plan, amount, paid, created FROM orders WHERE id = 1 RETURNING id",
		"UPDATE orders SET amount = 0 RETURNING id",
		"SELECT * INTO copy FROM orders",
	} {
		name := fmt.Sprintf("w%d", i)
		if _, err := e.svc.Create(context.Background(), "1", endpoint.CreateRequest{Name: name, Query: e.query(sql)}); err != nil {
			continue // refused at save: fine too
		}
		_, err := run(e, name, nil)
		assert.Error(t, err, "%q ran", sql)
	}
	var n int
	var sum float64
	if err := e.db.QueryRow("SELECT count(*), sum(amount) FROM orders").Scan(&n, &sum); err != nil || n != 6 || sum != 154.5 {
		t.Fatalf("orders changed: %d rows, amount %v, %v", n, sum, err)
	}
}
