package driver

import (
	"context"
	"time"
)

// ResultCache keeps the encoded answers of runs, so that a run asking what
// an earlier run asked is answered without executing its query
// (endpoint.Config.ResultCache). Keys are opaque strings of at most 64 bytes that
// the Service derives from the endpoint, its version and every input of the
// run; values are opaque bytes the Service encodes and decodes.
//
// Guidelines for implementers: it is a cache, so it may drop any entry at
// any time, and refuse to keep a value (too large, full) by returning nil
// without storing it. Get never returns a value past its expiry: an entry
// is fresh while now is before the expires given to Set. Set replaces the
// value of a key. Values returned must not alias values stored, since the
// caller may keep them. Every method is safe for concurrent use. An error
// is a failure of the storage (the run then goes on without the cache),
// never a miss. The conformance suite in endpoint/storetest
// (RunResultCache) states the contract as tests.
type ResultCache interface {
	// Get returns the value stored under key if it is fresh at now.
	Get(ctx context.Context, key string, now time.Time) (value []byte, ok bool, err error)
	// Set stores value under key until expires.
	Set(ctx context.Context, key string, value []byte, expires time.Time) error
}
