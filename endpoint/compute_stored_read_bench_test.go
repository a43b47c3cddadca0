package endpoint_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/require"
)

// customerDays is "orders and revenue per day of one customer": grouped by
// day, with the customer compared to a variable, so that the stored table
// holds one row per customer and day.
const customerDays = `SELECT day, count(*) AS orders, sum(amount) AS revenue FROM sales
WHERE customer = {variables.customer} GROUP BY day ORDER BY day`

// bigCustomerDays is how many days the customer a read benchmark selects
// has orders on: more than the page of 100 rows it asks for.
const bigCustomerDays = 150

// salesSQL fills sales with customer c0 ordering twice on each of
// bigCustomerDays days, and each of the customers c1 to c<n-1> (n being
// the first argument) twice on two days: 2*(n-1) + 300 rows whose
// materialization holds n customers, at most 2*(n-1) + 150 stored rows.
const salesSQL = `INSERT INTO sales (customer, day, amount)
WITH RECURSIVE seq(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq WHERE i < ?1 - 1),
big(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM big WHERE i < 2 * ?2 - 1)
SELECT 'c' || i, date('2025-01-01', '+' || (i % 7) || ' days'), i % 100 FROM seq WHERE i > 0
UNION ALL SELECT 'c' || i, date('2025-01-01', '+' || (i % 5) || ' days'), i % 50 FROM seq WHERE i > 0
UNION ALL SELECT 'c0', date('2025-01-01', '+' || (i / 2) || ' days'), i FROM big`

// newMatReadService returns a Service over a SQLite database of sales by
// groups customers, with customerDays saved as the materialized endpoint
// "days" and refreshed.
func newMatReadService(b *testing.B, groups int) *endpoint.Service {
	b.Helper()
	ctx := context.Background()
	db, err := sql.Open("sqlite", ":memory:")
	require.NoError(b, err)
	b.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE sales (customer TEXT NOT NULL, day TEXT NOT NULL, amount INTEGER NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	if _, err := db.Exec(salesSQL, groups, bigCustomerDays); err != nil {
		b.Fatal(err)
	}
	svc, err := endpoint.New(endpoint.Config{
		Endpoints: memstore.New(),
		Variables: variable.NewMemoryStore(),
		Executor:  sqlexec.New(db, engine.SQLite),
		Now:       func() time.Time { return time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC) },
	})
	require.NoError(b, err)
	v, err := svc.CreateVariable(ctx, "1", variable.Variable{Name: "Customer", Type: variable.String})
	require.NoError(b, err)
	q := &endpoint.Query{Kind: endpoint.KindSQL, SQL: customerDays,
		Variables: map[string]endpoint.VariableRef{v.ID: {VariableID: v.ID, CodeName: v.CodeName}}}
	if _, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "days", Query: q, IsMaterialized: true}); err != nil {
		b.Fatal(err)
	}
	require.NoError(b, svc.Materialize(ctx, "1", "days"))
	return svc
}

// BenchmarkMaterializedRead runs a materialized endpoint grouped by a
// column of 10, 1,000 and 100,000 distinct values, with an equality
// variable selecting one value (the customer with 150 days) and limit 100.
// A read's cost should not grow with the number of groups stored beside
// the one it selects.
func BenchmarkMaterializedRead(b *testing.B) {
	for _, groups := range []int{10, 1000, 100_000} {
		b.Run(fmt.Sprintf("groups=%d", groups), func(b *testing.B) {
			svc := newMatReadService(b, groups)
			ctx := context.Background()
			limit := 100
			req := endpoint.RunRequest{Variables: map[string]any{"customer": "c0"}, Limit: &limit}
			for b.Loop() {
				res, err := svc.Run(ctx, "1", "days", req)
				require.NoError(b, err)
				if !res.EndpointMaterialized || len(res.Results.([][]any)) != limit || !res.HasMore {
					b.Fatalf("materialized %v, %d rows, has_more %v", res.EndpointMaterialized, len(res.Results.([][]any)), res.HasMore)
				}
			}
		})
	}
}
