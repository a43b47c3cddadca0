package endpoint_test

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/stretchr/testify/require"
)

// rowCounter wraps an executor and records, per query, how many rows it
// returned.
type rowCounter struct {
	driver.Executor
	mu   sync.Mutex
	rows map[string]int // by query text; the last run of each
}

func (x *rowCounter) Query(ctx context.Context, st driver.Statement, b driver.Bounds) (*driver.Result, error) {
	res, err := x.Executor.Query(ctx, st, b)
	if res != nil {
		x.mu.Lock()
		x.rows[st.SQL()] = len(res.Rows)
		x.mu.Unlock()
	}
	return res, err
}

// storedReads returns the row counts of the queries that read a stored
// table, and forgets every count.
func (x *rowCounter) storedReads() []int {
	x.mu.Lock()
	defer x.mu.Unlock()
	var n []int
	for q, rows := range x.rows {
		if strings.Contains(q, "endpointkit_mat_") {
			n = append(n, rows)
		}
	}
	clear(x.rows)
	return n
}

// newPageEnv is newEnv with demo events and a Service whose executor counts
// the rows each query returns.
func newPageEnv(t *testing.T, events int) (*env, *rowCounter) {
	t.Helper()
	e := newEnv(t)
	require.NoError(t, demo.Load(context.Background(), e.db, events, 7))
	x := &rowCounter{Executor: execOf(e), rows: map[string]int{}}
	svc, err := endpoint.New(endpoint.Config{Endpoints: e.eps, Variables: e.vstore, Executor: x, Now: e.clock.Now})
	require.NoError(t, err)
	e.svc = svc
	return e, x
}

// TestMaterializedReadsOnePage: a materialized run with limit N reads at
// most N+1 rows of the stored table (the one more tells has_more), and
// answers what the inline run answers. Paging the read in Go instead would
// read every day of the country's purchases.
func TestMaterializedReadsOnePage(t *testing.T) {
	e, x := newPageEnv(t, 5000)
	q := e.query(dailyPurchases, "country", "from", "to")
	e.createMat(t, "daily", q, endpoint.CreateRequest{})
	e.create(t, "inline", q)
	e.materialize(t, "daily")
	vars := runVars("US", "2025-03-03", "2025-06-01")
	all := e.mustRun(t, "daily", vars).Results.([][]any)
	require.GreaterOrEqual(t, len(all), 50)
	x.storedReads()
	for _, p := range [][2]int{{1, 0}, {1, 40}, {5, 10}, {0, 0}, {3, 1000}} {
		limit, offset := p[0], p[1]
		req := endpoint.RunRequest{Variables: vars, Limit: &limit, Offset: &offset}
		got, err := e.svc.Run(context.Background(), "1", "daily", req)
		require.NoError(t, err)
		reads := x.storedReads()
		require.True(t, got.EndpointMaterialized, "limit %d offset %d: materialized %v, stored reads %v", limit, offset, got.EndpointMaterialized, reads)
		require.Len(t, reads, 1, "limit %d offset %d: materialized %v, stored reads %v", limit, offset, got.EndpointMaterialized, reads)
		require.LessOrEqual(t, reads[0], limit+1, "limit %d offset %d: the read", limit, offset)
		want, err := e.svc.Run(context.Background(), "1", "inline", req)
		require.NoError(t, err)
		require.Equal(t, want.Results, got.Results, "limit %d offset %d: %v %v, want %v %v", limit, offset, got.Results, got.HasMore, want.Results, want.HasMore)
		require.Equal(t, want.HasMore, got.HasMore, "limit %d offset %d: %v %v, want %v %v", limit, offset, got.Results, got.HasMore, want.Results, want.HasMore)
	}
}

// topBuyers is a query whose own ORDER BY and LIMIT pick its rows before
// a run's page is taken from them.
const topBuyers = `SELECT distinct_id, count(*) AS purchases, sum(amount) AS spent
FROM (SELECT distinct_id, json_extract(properties, '$.country') AS country, json_extract(properties, '$.amount') AS amount
      FROM events WHERE event = 'purchase') AS p
WHERE country = {variables.country}
GROUP BY distinct_id ORDER BY purchases DESC, spent DESC, distinct_id LIMIT 7`

// latestEvents pages plain rows ordered by a column it does not select
// first.
const latestEvents = `SELECT uuid, event
FROM (SELECT uuid, event, timestamp, json_extract(properties, '$.country') AS country FROM events) AS e
WHERE country = {variables.country} ORDER BY timestamp DESC, uuid`

// TestMaterializedPagesOwnLimit: pages of a materialized run equal the
// inline run's pages for a query with its own LIMIT (the LIMIT first, then
// the page) and for plain rows, each read returning at most a page and
// one row.
func TestMaterializedPagesOwnLimit(t *testing.T) {
	e, x := newPageEnv(t, 5000)
	for _, sql := range []string{topBuyers, latestEvents} {
		q := e.query(sql, "country")
		e.createMat(t, "mat", q, endpoint.CreateRequest{})
		e.create(t, "inline", q)
		e.materialize(t, "mat")
		x.storedReads() // the refresh counts the rows it built
		for _, country := range []string{"US", "DE", "XX"} {
			vars := map[string]any{"country": country}
			for _, p := range [][2]int{{3, 0}, {3, 3}, {3, 6}, {10, 0}, {0, 0}, {2, 6}, {2, 10}} {
				limit, offset := p[0], p[1]
				req := endpoint.RunRequest{Variables: vars, Limit: &limit, Offset: &offset}
				got, err := e.svc.Run(context.Background(), "1", "mat", req)
				require.NoError(t, err)
				reads := x.storedReads()
				if !got.EndpointMaterialized || len(reads) != 1 || reads[0] > limit+1 {
					t.Fatalf("%s limit %d offset %d: materialized %v, rows read %v", country, limit, offset, got.EndpointMaterialized, reads)
				}
				want, err := e.svc.Run(context.Background(), "1", "inline", req)
				require.NoError(t, err)
				if !reflect.DeepEqual(got.Results, want.Results) || !reflect.DeepEqual(got.Columns, want.Columns) || got.HasMore != want.HasMore {
					t.Fatalf("%s limit %d offset %d:\nmaterialized %v %v\ninline       %v %v", country, limit, offset, got.Results, got.HasMore, want.Results, want.HasMore)
				}
			}
		}
		// The query's LIMIT caps the rows whatever the page.
		if sql == topBuyers {
			limit := 100
			res, err := e.svc.Run(context.Background(), "1", "mat", endpoint.RunRequest{Variables: map[string]any{"country": "US"}, Limit: &limit})
			if err != nil || len(res.Results.([][]any)) != 7 || res.HasMore {
				t.Fatalf("US top buyers: %v, has_more %v, %v; want 7 rows", res.Results, res.HasMore, err)
			}
			x.storedReads()
		}
		for _, name := range []string{"mat", "inline"} {
			require.NoError(t, e.svc.Delete(context.Background(), "1", name))
		}
	}
}
