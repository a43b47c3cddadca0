package budget

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"
)

// ErrUnavailable is wrapped by the error of a Guard that fails closed when
// its counter store failed: the run is refused, not for its budget but
// because the budget could not be counted (an HTTP API answers 503).
var ErrUnavailable = errors.New("budget: the counter store is unavailable")

// GuardConfig configures NewGuard.
type GuardConfig struct {
	// FailOpen admits the runs whose budget could not be counted (the
	// store unreachable, too slow). The default, false, refuses them: a
	// budget exists to bound what a caller may cost, and an outage of the
	// store must not lift every bound at once (a client hammering the
	// service would be let through exactly when the shared store is
	// overloaded). A host that prefers availability to its bounds sets it.
	FailOpen bool
	// Timeout bounds each Take of the store; 0 is DefaultTakeTimeout, a
	// negative value none (the caller's context alone).
	Timeout time.Duration
	// Logger receives each failure; nil is slog.Default().
	Logger *slog.Logger
}

// DefaultTakeTimeout bounds a Take of a Guard: a counter store slower than
// this fails the Take rather than holding the run.
const DefaultTakeTimeout = time.Second

// Guard is a Counter that decides what a failure of the store behind it
// means, as GuardConfig.FailOpen says, and logs and counts each failure
// (Failures). Its Take fails only for arguments out of range (ErrInvalid)
// and, failing closed, with an error wrapping ErrUnavailable. One Guard may
// serve every budget of a host (keys, projects, tokens), so that their
// failures are counted together.
type Guard struct {
	c        Counter
	failOpen bool
	timeout  time.Duration
	logger   *slog.Logger
	failures atomic.Int64
}

// NewGuard returns a Guard over c.
func NewGuard(c Counter, cfg GuardConfig) *Guard {
	g := &Guard{c: c, failOpen: cfg.FailOpen, timeout: cfg.Timeout, logger: cfg.Logger}
	if g.timeout == 0 {
		g.timeout = DefaultTakeTimeout
	}
	if g.logger == nil {
		g.logger = slog.Default()
	}
	return g
}

// Guarded returns c when it is a *Guard, or a Guard over c with cfg.
func Guarded(c Counter, cfg GuardConfig) *Guard {
	if g, ok := c.(*Guard); ok {
		return g
	}
	return NewGuard(c, cfg)
}

// FailsOpen reports whether g admits the runs it could not count.
func (g *Guard) FailsOpen() bool { return g.failOpen }

// Failures is how many Takes failed in the store behind g (each logged).
func (g *Guard) Failures() int64 { return g.failures.Load() }

// Take counts a run in the store behind g. A failure of the store is
// logged and counted, then answered as FailOpen says: an allowed Decision,
// or an error wrapping ErrUnavailable.
func (g *Guard) Take(ctx context.Context, key string, limit int64, window time.Duration) (Decision, error) {
	if err := Check(key, limit, window); err != nil {
		return Decision{}, err
	}
	tctx := ctx
	if g.timeout > 0 {
		var cancel context.CancelFunc
		tctx, cancel = context.WithTimeout(ctx, g.timeout)
		defer cancel()
	}
	d, err := g.c.Take(tctx, key, limit, window)
	if err == nil {
		return d, nil
	}
	if ctx.Err() != nil {
		// The caller gave up: not the store's failure.
		return Decision{}, ctx.Err()
	}
	g.failures.Add(1)
	g.logger.ErrorContext(ctx, "budget: counting a run failed", "key", key, "fail_open", g.failOpen, "err", err)
	if g.failOpen {
		return Decision{Allowed: true}, nil
	}
	return Decision{}, fmt.Errorf("%w: %w", ErrUnavailable, err)
}
