package endpoint_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/stretchr/testify/require"
)

// slowGets is a store whose reads return a while after they read, so that
// a run's read of an endpoint overlaps the writes of another goroutine.
type slowGets struct{ driver.Store }

func (s slowGets) Get(ctx context.Context, project, name string) (driver.Endpoint, error) {
	e, err := s.Store.Get(ctx, project, name)
	time.Sleep(100 * time.Microsecond)
	return e, err
}

// TestRunsDuringWrites: while runs go on in other goroutines, every write
// of the endpoint is seen by the next run of the goroutine that wrote it:
// a run that read the old record or compiled the old version while the
// write went through does not put it back in the cache.
func TestRunsDuringWrites(t *testing.T) {
	e := newEnv(t, func(c *endpoint.Config) { c.Endpoints = slowGets{c.Endpoints} })
	ctx := context.Background()
	e.create(t, "ep", e.query("SELECT 0 AS v"))
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				if _, err := run(e, "ep", nil); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := 1; i <= 40; i++ {
		q := e.query(fmt.Sprintf("SELECT %d AS v", i))
		if _, err := e.svc.Update(ctx, "1", "ep", endpoint.UpdateRequest{Query: q}); err != nil {
			t.Fatal(err)
		}
		res, err := run(e, "ep", nil)
		require.NoError(t, err)
		// The run may have joined another goroutine's run of the new
		// version, whose answer it has as JSON.
		got := resultsJSON(t, res)
		require.Equal(t, i+1, res.EndpointVersion, "after update %d: version %d results %s", i, res.EndpointVersion, got)
		require.Equal(t, fmt.Sprintf("[[%d]]", i), got, "after update %d: version %d results %s", i, res.EndpointVersion, got)
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
