package equivalence

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
)

// floatSumSQL is a sum of the items' floating-point column price (REAL,
// double precision, DOUBLE, Float64) over a range of days: a materialized
// read adds up the days' stored sums again, in another order than the
// query adds up the rows.
const floatSumSQL = "SELECT grp, count(*) AS n, sum(price) AS total FROM items\nWHERE ts_text >= {variables.from} AND ts_text < {variables.to} GROUP BY grp ORDER BY grp"

// TestFloatColumnSum: on every engine, the endpoint reads the declared
// type of the column a materialized query sums from the engine's catalog.
// A sum of the floating-point column price over a range is refused when
// the endpoint is materialized (cannot_materialize), naming the aggregate,
// its line and column, the column and its type, and a rewrite in the
// engine's exact type; the rewrite, as the refusal words it, saves,
// materializes, reads the stored table and answers byte for byte as the
// inline query. Before the endpoint read the catalog, the float sum was
// materialized.
func TestFloatColumnSum(t *testing.T) {
	t.Parallel() // beside the other matrices: see engineParallel
	eachTarget(t, func(t *testing.T, _ int, tg target) {
		if tg.kept && !long {
			t.Skip("SQLite on kept statements: -tags long")
		}
		ctx := context.Background()
		svc := tg.services(t, []storage{asText}, 20)[asText]
		refused := &spec{name: "float_sum", kind: endpoint.KindSQL, sql: shared(floatSumSQL), vars: []string{"from", "to"}}
		_, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: refused.name, Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: floatSumSQL, Variables: refs(refused.vars)}})
		require.NoError(t, err)
		_, err = svc.Update(ctx, "1", refused.name, refused.materialized(""))
		var e *endpoint.Error
		require.ErrorAs(t, err, &e, "a sum of a floating-point column over a range was materialized")
		assert.Equal(t, endpoint.CodeCannotMaterialize, e.Code)
		assert.Contains(t, e.Detail, "Cannot materialize endpoint. Reason: sum(price) adds up floating-point values (price of items, a column of type ")
		// The rewrite the refusal gives, in place of the sum.
		_, rewrite, ok := strings.Cut(e.Detail, "instead: ")
		if tg.d.e.ExactSumType() == "" {
			_, rewrite, ok = strings.Cut(e.Detail, "instead, such as cents: ")
		}
		require.True(t, ok, e.Detail)
		if x := tg.d.e.ExactSumType(); x != "" {
			assert.Equal(t, "sum(CAST(price AS "+x+"))", rewrite)
		} else {
			assert.Equal(t, "sum(CAST(round((price) * 100) AS INTEGER)) / 100.0", rewrite)
		}
		// The editor's verdict on the query: the aggregate's code.
		q := &endpoint.Query{Kind: endpoint.KindSQL, SQL: floatSumSQL, Variables: refs(refused.vars)}
		for id, ref := range q.Variables {
			ref.Value = json.RawMessage(`"2025-05-01"`)
			if ref.CodeName == "to" {
				ref.Value = json.RawMessage(`"2025-05-08"`)
			}
			q.Variables[id] = ref
		}
		res, err := svc.RunQuery(ctx, "1", endpoint.QueryRequest{Query: q})
		require.NoError(t, err)
		require.False(t, res.Materialization.CanMaterialize)
		assert.Equal(t, "aggregate", res.Materialization.Reasons[0].Code)
		assert.Equal(t, strings.TrimPrefix(e.Detail, "Cannot materialize endpoint. Reason: "), res.Materialization.Reasons[0].Message)
		exact := &spec{name: "exact_sum", kind: endpoint.KindSQL, sql: shared(strings.Replace(floatSumSQL, "sum(price)", rewrite, 1)),
			vars: []string{"from", "to"}, mat: true, ordered: true,
			runs: ranges([2]string{"2025-04-28", "2025-06-02"}, [2]string{"2025-05-01", "2025-05-08"}, [2]string{"2025-04-29", "2025-05-13"})}
		out := runSpec(tg, svc, exact)
		for i := range exact.runs {
			o := out[caseID(exact, i)]
			require.Empty(t, o.inline.err, caseID(exact, i))
			require.NotNil(t, o.mat, caseID(exact, i))
			require.Empty(t, o.mat.err, caseID(exact, i))
			assert.True(t, o.mat.materialized, "%s read no stored table", caseID(exact, i))
			assert.Equal(t, o.inline.json, o.mat.json, "%s: the materialized answer differs from inline", caseID(exact, i))
			assert.Equal(t, o.inline.types, o.mat.types, caseID(exact, i))
		}
	})
}
