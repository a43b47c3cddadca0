package endpoint_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/examples/demo"
)

// rowsRecorder is sqlexec's executor recording the statements it read
// with QueryRows and the rows it handed over, and counting Query's calls.
type rowsRecorder struct {
	*sqlexec.Executor
	mu      sync.Mutex
	streams []string
	rows    atomic.Int64
	queries atomic.Int64
}

func (r *rowsRecorder) Query(ctx context.Context, st driver.Statement, b driver.Bounds) (*driver.Result, error) {
	r.queries.Add(1)
	return r.Executor.Query(ctx, st, b)
}

func (r *rowsRecorder) QueryRows(ctx context.Context, st driver.Statement, b driver.Bounds, sink driver.RowSink) (*driver.Result, error) {
	r.mu.Lock()
	r.streams = append(r.streams, st.SQL())
	r.mu.Unlock()
	return r.Executor.QueryRows(ctx, st, b, countingSink{sink, &r.rows})
}

type countingSink struct {
	driver.RowSink
	n *atomic.Int64
}

func (c countingSink) Row(row []any) error { c.n.Add(1); return c.RowSink.Row(row) }

// keptRows is a RowWriter that keeps the head and a copy of each row.
type keptRows struct {
	head *endpoint.RunResult
	rows [][]any
}

func (k *keptRows) Begin(head *endpoint.RunResult) error { k.head = head; return nil }
func (k *keptRows) Row(row []any) error {
	k.rows = append(k.rows, append([]any(nil), row...))
	return nil
}

// TestRunRowsStoredTable: a run of a materialized endpoint that reads its
// stored table streams that read (RunRows hands the rows to its writer as
// the executor reads them, through QueryRows, and Query reads nothing),
// the partial buckets of an unaligned range and the live tail included:
// the one statement the plan prints, which merges them with the stored
// rows. Its rows are the inline run's. With the result cache on, an
// answer the cache holds is the cache's (no statement runs), whole, for
// the caller to write.
func TestRunRowsStoredTable(t *testing.T) {
	for _, cached := range []bool{false, true} {
		name := "no cache"
		if cached {
			name = "result cache"
		}
		t.Run(name, func(t *testing.T) {
			rec := &rowsRecorder{}
			e := newEnv(t, func(c *endpoint.Config) {
				rec.Executor = c.Executor.(*sqlexec.Executor)
				c.Executor = rec
				if cached {
					c.ResultCache = memstore.NewResultCache(1 << 20)
				}
			})
			require.NoError(t, demo.Load(context.Background(), e.db, 5000, 7))
			q := e.query(propertyDistinct, "country", "from", "to")
			e.createMat(t, "tail", q, endpoint.CreateRequest{MaterializationTail: "timestamp"})
			e.create(t, "inline", q)
			e.materialize(t, "tail")
			e.clock.t = e.clock.t.Add(2 * time.Hour)
			// Unaligned ends: partial days at both edges, and the tail.
			vars := runVars("US", "2025-05-25T06:30:00Z", "2025-06-01T12:30:00Z")
			want := e.mustRun(t, "inline", vars)
			require.NotEmpty(t, want.Results)

			if cached {
				// The answer the cache then holds is written from it.
				first := e.mustRun(t, "tail", vars)
				require.True(t, first.EndpointMaterialized)
			}
			rec.queries.Store(0)
			rec.rows.Store(0)
			rec.streams = nil
			w := &keptRows{}
			res, err := e.svc.RunRows(context.Background(), "1", "tail", endpoint.RunRequest{Variables: vars}, w)
			require.NoError(t, err)
			assert.True(t, res.EndpointMaterialized, "the stored table answered")
			assert.Zero(t, rec.queries.Load(), "statements read with Query")
			if cached {
				assert.True(t, res.IsCached)
				assert.Nil(t, w.head, "a cached answer is the caller's to write, whole")
				assert.Empty(t, rec.streams, "no statement runs for a cached answer")
				assert.Equal(t, resultsJSON(t, want), resultsJSON(t, res))
				return
			}
			require.Len(t, rec.streams, 1, "the read is one statement, streamed")
			assert.Contains(t, rec.streams[0], "endpointkit_", "the statement reads the stored table")
			assert.Contains(t, strings.ToLower(rec.streams[0]), "events", "and the source, for the edges and the tail")
			assert.Nil(t, res.Results, "the rows went to the writer")
			require.NotNil(t, w.head)
			assert.Equal(t, want.Columns, w.head.Columns)
			assert.EqualValues(t, len(w.rows), rec.rows.Load())
			assert.Equal(t, want.Results, w.rows)
		})
	}
}
