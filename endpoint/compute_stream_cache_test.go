package endpoint_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/examples/demo"
)

// runEvents is an Observer keeping every RunEvent.
type runEvents struct {
	mu  sync.Mutex
	evs []endpoint.RunEvent
}

func (o *runEvents) ObserveRun(_ context.Context, ev endpoint.RunEvent) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.evs = append(o.evs, ev)
}

func (o *runEvents) ObserveRefresh(context.Context, endpoint.RefreshEvent) {}

func (o *runEvents) last(t *testing.T) endpoint.RunEvent {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	require.NotEmpty(t, o.evs)
	return o.evs[len(o.evs)-1]
}

// TestRunRowsStoredTableFillsCache: with the result cache on, a streamed
// run that reads a materialized endpoint's stored table (its edges and
// tail from the source) writes its rows to its writer as they are read,
// and keeps its answer in the cache as they pass: the next run is the
// cache's, with the inline run's results. A run asking refresh "force"
// streams and keeps its answer too.
func TestRunRowsStoredTableFillsCache(t *testing.T) {
	rec := &rowsRecorder{}
	obs := &runEvents{}
	e := newEnv(t, func(c *endpoint.Config) {
		rec.Executor = c.Executor.(*sqlexec.Executor)
		c.Executor = rec
		c.ResultCache = memstore.NewResultCache(1 << 20)
		c.Observer = obs
	})
	require.NoError(t, demo.Load(context.Background(), e.db, 5000, 7))
	q := e.query(propertyDistinct, "country", "from", "to")
	e.createMat(t, "tail", q, endpoint.CreateRequest{MaterializationTail: "timestamp"})
	e.create(t, "inline", q)
	e.materialize(t, "tail")
	e.clock.t = e.clock.t.Add(2 * time.Hour)
	vars := runVars("US", "2025-05-25T06:30:00Z", "2025-06-01T12:30:00Z")
	want := e.mustRun(t, "inline", vars)
	require.NotEmpty(t, want.Results)

	for _, refresh := range []string{"", endpoint.RefreshForce} {
		rec.queries.Store(0)
		rec.streams = nil
		w := &keptRows{}
		res, err := e.svc.RunRows(context.Background(), "1", "tail", endpoint.RunRequest{Variables: vars, Refresh: refresh}, w)
		require.NoError(t, err)
		assert.False(t, res.IsCached)
		assert.True(t, res.EndpointMaterialized, "the stored table answered")
		require.Len(t, rec.streams, 1, "the read is one statement, streamed")
		assert.Zero(t, rec.queries.Load(), "statements read with Query")
		require.NotNil(t, w.head)
		assert.Equal(t, want.Results, w.rows)
		assert.NoError(t, obs.last(t).CacheErr)

		rec.streams = nil
		cached := e.mustRun(t, "tail", vars)
		assert.True(t, cached.IsCached, "refresh %q: the next run is the cache's", refresh)
		assert.Empty(t, rec.streams)
		assert.Zero(t, rec.queries.Load())
		assert.True(t, cached.EndpointMaterialized)
		assert.Equal(t, resultsJSON(t, want), resultsJSON(t, cached))
	}
}

// TestAnswerNotCachedIsTold: an answer that weighs more than
// MaxCachedAnswerBytes is answered and not kept, whether the run computed
// it whole (Run) or streamed it (RunRows): the run that computed it tells
// why (RunEvent.CacheErr, ErrAnswerNotCached), and the next run computes
// again. A smaller one is kept, and the run tells nothing.
func TestAnswerNotCachedIsTold(t *testing.T) {
	rec := &rowsRecorder{}
	obs := &runEvents{}
	e := newEnv(t, func(c *endpoint.Config) {
		rec.Executor = c.Executor.(*sqlexec.Executor)
		c.Executor = rec
		c.ResultCache = memstore.NewResultCache(1 << 20)
		c.MaxCachedAnswerBytes = 200
		c.Observer = obs
	})
	e.create(t, "all", e.query("SELECT id, country, amount FROM orders ORDER BY id"))
	e.create(t, "one", e.query("SELECT id FROM orders ORDER BY id LIMIT 1"))
	ctx := context.Background()

	for _, streamed := range []bool{false, true} {
		run := func(name string) *endpoint.RunResult {
			if streamed {
				res, err := e.svc.RunRows(ctx, "1", name, endpoint.RunRequest{}, &keptRows{})
				require.NoError(t, err)
				return res
			}
			return e.mustRun(t, name, nil)
		}
		first := run("all")
		assert.False(t, first.IsCached)
		err := obs.last(t).CacheErr
		require.ErrorIs(t, err, endpoint.ErrAnswerNotCached, "streamed %v", streamed)
		assert.Contains(t, err.Error(), "max_cached_answer_bytes (200 bytes)")
		assert.False(t, run("all").IsCached, "nothing was kept")

		small := run("one")
		assert.NoError(t, obs.last(t).CacheErr)
		if !streamed {
			assert.False(t, small.IsCached)
		}
		assert.True(t, run("one").IsCached)
	}
}
