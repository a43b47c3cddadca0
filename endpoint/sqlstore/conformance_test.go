package sqlstore

import (
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	epstoretest "github.com/endpointkit/endpointkit/endpoint/storetest"
	"github.com/endpointkit/endpointkit/variable"
	varstoretest "github.com/endpointkit/endpointkit/variable/storetest"
)

func TestVariableStoreConformance(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			varstoretest.Run(t, func(t *testing.T) variable.Store { return b.open(t).Variables() })
		})
	}
}

func TestEndpointStoreConformance(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			epstoretest.Run(t, func(t *testing.T) driver.Store { return b.open(t).Endpoints() })
		})
	}
}

func TestResultCacheConformance(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			epstoretest.RunResultCache(t, func(t *testing.T) driver.ResultCache {
				return b.open(t).ResultCache(CacheOptions{})
			})
		})
	}
}

func TestRunLogConformance(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			epstoretest.RunRunLog(t, func(t *testing.T, maxAge time.Duration, max int, now func() time.Time) driver.RunLog {
				return b.open(t).RunLog(RunLogOptions{MaxAge: maxAge, MaxPerEndpoint: max, Now: now})
			})
		})
	}
}
