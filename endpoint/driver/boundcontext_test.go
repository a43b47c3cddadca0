package driver_test

import (
	"context"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/stretchr/testify/require"
)

// TestBoundContext: a timeout becomes the context's deadline unless the
// context has a nearer one; no timeout leaves the context as it is.
func TestBoundContext(t *testing.T) {
	ctx, cancel := driver.BoundContext(context.Background(), time.Minute)
	defer cancel()
	d, ok := ctx.Deadline()
	require.True(t, ok, "deadline %v", d)
	require.LessOrEqual(t, time.Until(d), time.Minute, "deadline %v", d)
	near, cancelNear := context.WithTimeout(context.Background(), time.Second)
	defer cancelNear()
	kept, cancelKept := driver.BoundContext(near, time.Minute)
	defer cancelKept()
	if kept != near {
		t.Fatal("a nearer deadline of the caller's was replaced")
	}
	none, cancelNone := driver.BoundContext(context.Background(), 0)
	defer cancelNone()
	if _, ok := none.Deadline(); ok {
		t.Fatal("no timeout set a deadline")
	}
}
