package memstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/endpoint/storetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every store of the package passes the conformance suite of its driver
// interface.
func TestConformance(t *testing.T) {
	t.Run("Store", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) driver.Store { return memstore.New() })
	})
	t.Run("KeyStore", func(t *testing.T) {
		storetest.RunKeyStore(t, func(t *testing.T) driver.KeyStore { return memstore.NewKeyStore() })
	})
	t.Run("ResultCache", func(t *testing.T) {
		storetest.RunResultCache(t, func(t *testing.T) driver.ResultCache { return memstore.NewResultCache(1 << 20) })
	})
	t.Run("RunLog", func(t *testing.T) {
		storetest.RunRunLog(t, func(t *testing.T, maxAge time.Duration, max int, now func() time.Time) driver.RunLog {
			l := memstore.NewRunLog(maxAge, max)
			l.Now = now
			return l
		})
	})
}

// The result cache keeps within its byte bound by evicting the least
// recently used entries, refuses a value larger than an eighth of the
// bound (dropping what the key held), and a non-positive bound means the
// default.
func TestResultCacheBound(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	later := now.Add(time.Hour)
	const max = 8 << 10
	c := memstore.NewResultCache(max)
	value := []byte(strings.Repeat("v", 500))
	for i := range 100 {
		require.NoError(t, c.Set(ctx, "k"+strings.Repeat("x", i%7)+string(rune('a'+i%26)), value, later))
		require.LessOrEqual(t, c.Bytes(), int64(max), "after %d sets", i+1)
	}
	assert.Positive(t, c.Len())
	assert.Less(t, c.Len(), 100, "nothing was evicted")

	require.NoError(t, c.Set(ctx, "big", []byte("small"), later))
	_, ok, err := c.Get(ctx, "big", now)
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, c.Set(ctx, "big", make([]byte, max/8), later))
	_, ok, err = c.Get(ctx, "big", now)
	require.NoError(t, err)
	assert.False(t, ok, "a value over an eighth of the bound was kept, or the old one stayed")

	d := memstore.NewResultCache(0)
	require.NoError(t, d.Set(ctx, "big", make([]byte, 1<<20), later))
	_, ok, err = d.Get(ctx, "big", now)
	require.NoError(t, err)
	assert.True(t, ok, "a cache of the default %d bytes refused 1 MiB", memstore.DefaultResultCacheBytes)
}
