package memstore_test

import (
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/endpoint/storetest"
)

func TestMemoryStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) driver.Store { return memstore.New() })
}

func TestMemoryResultCacheConformance(t *testing.T) {
	storetest.RunResultCache(t, func(t *testing.T) driver.ResultCache { return memstore.NewResultCache(1 << 20) })
}

func TestMemoryRunLogConformance(t *testing.T) {
	storetest.RunRunLog(t, func(t *testing.T, maxAge time.Duration, max int, now func() time.Time) driver.RunLog {
		l := memstore.NewRunLog(maxAge, max)
		l.Now = now
		return l
	})
}
