package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
)

// refreshInterval is how often the server looks for materialized endpoints
// whose stored table is missing or older than their freshness period.
const refreshInterval = time.Minute

// refreshLoop calls svc.RefreshStale at once and then every interval, until
// ctx is done. Failures are written to log and retried at the next tick; the
// endpoints concerned keep answering (from their last good table while it
// is fresh, inline otherwise).
func refreshLoop(ctx context.Context, svc *endpoint.Service, interval time.Duration, log io.Writer) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		n, err := svc.RefreshStale(ctx)
		if n > 0 {
			fmt.Fprintf(log, "materialized %d endpoint(s)\n", n)
		}
		if err != nil && ctx.Err() == nil {
			fmt.Fprintf(log, "materialization: %v\n", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
