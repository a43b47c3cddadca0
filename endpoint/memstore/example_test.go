package memstore_test

import (
	"context"
	"fmt"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/memstore"
)

// A result cache in memory, bounded in bytes: an answer is served until it
// expires.
func ExampleNewResultCache() {
	ctx := context.Background()
	cache := memstore.NewResultCache(1 << 20)
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	_ = cache.Set(ctx, "answer", []byte(`[[1],[3]]`), now.Add(time.Minute))
	v, ok, _ := cache.Get(ctx, "answer", now)
	fmt.Println(string(v), ok)
	_, ok, _ = cache.Get(ctx, "answer", now.Add(2*time.Minute))
	fmt.Println(ok)
	// Output:
	// [[1],[3]] true
	// false
}
