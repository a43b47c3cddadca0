package mcp

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/embed"
)

// tokenRates counts each embed token's runs over the last minute, for its
// rpm claim, per verified token (Claims.ID). Entries go when their token
// expires, so memory is bounded by the live tokens. The count is this
// handler's: runs over the HTTP API are counted there.
type tokenRates struct {
	mu sync.Mutex
	m  map[[sha256.Size]byte]*tokenWindow
}

type tokenWindow struct {
	starts  []time.Time // the runs of the last minute, oldest first
	expires time.Time
}

// take counts a run of c at now, or returns how long to wait when c has
// used its rpm runs within the last minute.
func (t *tokenRates) take(c *embed.Claims, now time.Time) time.Duration {
	key := sha256.Sum256([]byte(c.ID))
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[[sha256.Size]byte]*tokenWindow{}
	}
	for k, w := range t.m {
		if now.After(w.expires) {
			delete(t.m, k)
		}
	}
	w := t.m[key]
	if w == nil {
		w = &tokenWindow{expires: c.ExpiresAt}
		t.m[key] = w
	}
	i := 0
	for i < len(w.starts) && now.Sub(w.starts[i]) >= time.Minute {
		i++
	}
	w.starts = w.starts[i:]
	if len(w.starts) >= c.RPM {
		return w.starts[0].Add(time.Minute).Sub(now)
	}
	w.starts = append(w.starts, now)
	return 0
}

// checkRPM refuses a run past the token's rpm, in the HTTP API's words.
func (t *tokenRates) checkRPM(c *embed.Claims) error {
	if c == nil || c.RPM <= 0 {
		return nil
	}
	wait := t.take(c, time.Now())
	if wait <= 0 {
		return nil
	}
	secs := max(int((wait+time.Second-1)/time.Second), 1)
	e := endpoint.NewError(endpoint.ErrForbidden, "throttled", "",
		fmt.Sprintf("Too many runs: this embed token may start %d runs per minute (rpm). Retry after %d s.", c.RPM, secs))
	e.Status, e.Limit, e.LimitValue = http.StatusTooManyRequests, "rpm", int64(c.RPM)
	return e
}
