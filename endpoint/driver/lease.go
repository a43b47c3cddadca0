package driver

import (
	"context"
	"time"
)

// Leaser is implemented by a Store that can lease names to one holder at a
// time, so that Services in several processes sharing the store never
// refresh one endpoint at once. A lease is held until its expiry; its
// holder renews it while it works, so a holder that dies loses it when it
// expires, and another takes over. memstore.Store and the stores of package
// sqlstore implement it; with a Store that does not, refreshes are
// exclusive within one Service only.
//
// Guidelines for implementers: times come from the caller's clock (the
// Service's), so compare them, never the store's own clock. AcquireLease
// is atomic: of concurrent callers for one free name, one gets it. The
// conformance suite in endpoint/storetest (RunLeaser) states the contract.
type Leaser interface {
	// AcquireLease gives holder the lease on name until expires, when no
	// one holds it, its lease expired at or before now, or holder holds it
	// already (a renewal); it reports whether holder holds it now.
	AcquireLease(ctx context.Context, name, holder string, now, expires time.Time) (bool, error)
	// ReleaseLease ends holder's lease on name; a lease another holder
	// took meanwhile is left alone.
	ReleaseLease(ctx context.Context, name, holder string) error
}
