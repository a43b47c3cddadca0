package endpoint_test

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
)

// countedValue is a value that counts the times it is encoded as JSON.
type countedValue struct {
	v int64
	n *atomic.Int64
}

func (c countedValue) MarshalJSON() ([]byte, error) {
	c.n.Add(1)
	return []byte(strconv.FormatInt(c.v, 10)), nil
}

// encodeCounter answers its executor's rows with each integer a
// countedValue (of no database type, so that the version keeps it as it
// is), held at the gate while it is set.
type encodeCounter struct {
	queryCounter
	encoded atomic.Int64
}

func (x *encodeCounter) Query(ctx context.Context, st driver.Statement, b driver.Bounds) (*driver.Result, error) {
	res, err := x.queryCounter.Query(ctx, st, b)
	if err != nil {
		return nil, err
	}
	for i := range res.Types {
		res.Types[i] = ""
	}
	for _, row := range res.Rows {
		for i, v := range row {
			if n, ok := v.(int64); ok {
				row[i] = countedValue{v: n, n: &x.encoded}
			}
		}
	}
	return res, nil
}

// TestJoinedRunEncodedOnce: with the result cache on, the answer of runs
// that joined one flight is encoded as JSON once, for the cache and the
// runs that joined alike (it was encoded twice: once to cache it, once
// more to share it), and each run's answer is whole.
func TestJoinedRunEncodedOnce(t *testing.T) {
	x := &encodeCounter{}
	e := newEnv(t, func(c *endpoint.Config) {
		x.Executor = c.Executor
		c.Executor = x
		c.ResultCache = memstore.NewResultCache(1 << 20)
	})
	e.create(t, "by_country", e.query("SELECT id FROM orders WHERE country = {variables.country} ORDER BY id", "country"))
	x.queries.Store(0)
	x.gate, x.started = make(chan struct{}), make(chan struct{}, 16)
	req := endpoint.RunRequest{Variables: map[string]any{"country": "US"}}
	const n = 4
	results := make(chan *endpoint.RunResult, n)
	var wg sync.WaitGroup
	run := func() {
		defer wg.Done()
		res, err := e.svc.Run(context.Background(), "1", "by_country", req)
		assert.NoError(t, err)
		results <- res
	}
	wg.Add(1)
	go run()
	<-x.started
	for range n - 1 {
		wg.Add(1)
		go run()
	}
	require.Eventually(t, func() bool { return endpoint.FlightWaiters(e.svc) == n-1 }, 5*time.Second, time.Millisecond)
	x.encoded.Store(0)
	close(x.gate)
	wg.Wait()
	close(results)
	const rows = 3 // [[1],[3],[5]]
	assert.EqualValues(t, rows, x.encoded.Load(), "encodings of the rows' values: once each")
	assert.EqualValues(t, 1, x.queries.Load())
	shared := 0
	for res := range results {
		if res.IsCached {
			shared++
			assert.JSONEq(t, "[[1],[3],[5]]", string(res.Results.(json.RawMessage)))
		}
	}
	assert.Equal(t, n-1, shared)
}
