package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

// outcomes counts what concurrent calls returned.
type outcomes struct {
	mu                      sync.Mutex
	ok, conflicts, failures int
	errs                    []error
}

func (o *outcomes) add(err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case err == nil:
		o.ok++
	case errors.Is(err, driver.ErrConflict):
		o.conflicts++
	default:
		o.failures++
		o.errs = append(o.errs, err)
	}
}

func TestEndpointsConcurrently(t *testing.T) {
	const workers = 8
	forEachBackend(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		st := s.Endpoints()

		// Racing creates of one name: one wins, the others conflict.
		var creates outcomes
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				e, v := endpointFixture("p", fmt.Sprintf("contender%d", w))
				e.Name = "contested"
				creates.add(st.Create(ctx, e, v))
			}()
		}
		wg.Wait()
		assert.Empty(t, creates.errs)
		assert.Equal(t, 1, creates.ok)
		assert.Equal(t, workers-1, creates.conflicts)

		// Racing updates from the same read: one new version wins.
		base, err := st.Get(ctx, "p", "contested")
		require.NoError(t, err)
		var updates outcomes
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				e, v := nextVersion(base, fmt.Sprintf("SELECT %d", w))
				updates.add(st.Update(ctx, e, v))
			}()
		}
		wg.Wait()
		assert.Empty(t, updates.errs)
		assert.Equal(t, 1, updates.ok)
		assert.Equal(t, workers-1, updates.conflicts)
		vs, err := st.Versions(ctx, "p", base.ID)
		require.NoError(t, err)
		assert.Len(t, vs, 2)

		// Runs recorded while the endpoint is read and edited: none fails,
		// and the latest run time stays.
		var mixed outcomes
		latest := t0.Add(time.Duration(workers*10) * time.Second)
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 10; i++ {
					at := t0.Add(time.Duration(w*10+i+1) * time.Second)
					mixed.add(st.MarkExecuted(ctx, "p", base.ID, at))
					_, err := st.Get(ctx, "p", "contested")
					mixed.add(err)
					_, err = st.List(ctx, "p")
					mixed.add(err)
				}
			}()
		}
		wg.Wait()
		assert.Empty(t, mixed.errs)
		got, err := st.Get(ctx, "p", "contested")
		require.NoError(t, err)
		assert.Equal(t, latest, *got.LastExecutedAt)
	})
}
