package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
		v := creates.errs
		assert.True(t, (len(v) == 0), "creates.errs = %v, want it empty", v)
		assert.Equal(t, 1, creates.ok)
		if got, want := creates.conflicts, workers-1; got != want {
			t.Errorf("creates.conflicts = %v, want %v", got, want)
		}

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
		if v := updates.errs; !(len(v) == 0) {
			t.Errorf("updates.errs = %v, want it empty", v)
		}
		assert.Equal(t, 1, updates.ok)
		if got, want := updates.conflicts, workers-1; got != want {
			t.Errorf("updates.conflicts = %v, want %v", got, want)
		}
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
		if v := mixed.errs; !(len(v) == 0) {
			t.Errorf("mixed.errs = %v, want it empty", v)
		}
		got, err := st.Get(ctx, "p", "contested")
		require.NoError(t, err)
		if got, want := *got.LastExecutedAt, latest; !reflect.DeepEqual(got, want) {
			t.Errorf("*got.LastExecutedAt = %+v, want %+v", got, want)
		}
	})
}
