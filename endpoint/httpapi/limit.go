package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/limit"
)

// defaultLimiter is the limiter of a handler built without WithLimiter.
func defaultLimiter() *limit.Limiter {
	l, err := limit.New(limit.Config{})
	if err != nil {
		// The zero Config is valid by construction.
		panic("httpapi: default limits: " + err.Error())
	}
	return l
}

// admit takes a run slot of project, returning the function that gives it
// back; a refusal is the 429 or 503 error to answer, with Retry-After set
// on w.
func (h *handler) admit(w http.ResponseWriter, project string) (release func(), err error) {
	if h.cfg.limiter == nil {
		return func() {}, nil
	}
	release, err = h.cfg.limiter.Acquire(project)
	if err == nil {
		return release, nil
	}
	var le *limit.Error
	if !errors.As(err, &le) {
		return nil, err
	}
	secs := retrySeconds(le.RetryAfter)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	return nil, limitError(le, secs)
}

// writeDeadline gives the writing of a computed answer its own deadline
// (WithWriteTimeout), where the server lets a handler set one. A writer
// that cannot (httptest's, a host's wrapper without Unwrap) is left as it
// is without asking http.ResponseController, whose refusal is an error
// formatted anew each time.
func (h *handler) writeDeadline(w http.ResponseWriter) {
	if !setsWriteDeadline(w) {
		return
	}
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(h.cfg.writeTimeout))
}

// setsWriteDeadline reports whether http.ResponseController can set w's
// write deadline: whether w, or a writer it unwraps to, has
// SetWriteDeadline, as the controller looks for it.
func setsWriteDeadline(w http.ResponseWriter) bool {
	for {
		switch t := w.(type) {
		case interface{ SetWriteDeadline(time.Time) error }:
			return true
		case interface{ Unwrap() http.ResponseWriter }:
			w = t.Unwrap()
		default:
			return false
		}
	}
}

// retrySeconds is d in whole seconds for Retry-After, rounded up (a client
// retrying on time must not be refused again) and at least 1.
func retrySeconds(d time.Duration) int {
	secs := int((d + time.Second - 1) / time.Second)
	return max(secs, 1)
}

// limitError is the answer to a refused run: it names the limit by its
// setting, so that a host's operator knows which one to raise.
func limitError(le *limit.Error, secs int) *endpoint.Error {
	project := clip(le.Project, maxEchoRunes)
	var detail string
	switch le.Limit {
	case limit.ProjectPerHour:
		detail = fmt.Sprintf("Too many runs: project '%s' may start %d runs per hour (%s). Retry after %d s.", project, le.Max, le.Limit, secs)
	case limit.ProjectPerMinute:
		detail = fmt.Sprintf("Too many runs: project '%s' may start %d runs per minute (%s). Retry after %d s.", project, le.Max, le.Limit, secs)
	case limit.ProjectConcurrency:
		detail = fmt.Sprintf("Too many runs at once: project '%s' may have %d runs in progress (%s). Retry after %d s.", project, le.Max, le.Limit, secs)
	case limit.TokenPerMinute:
		return &endpoint.Error{Status: http.StatusTooManyRequests, Code: CodeThrottled, Err: le,
			Detail: fmt.Sprintf("Too many runs: this embed token may start %d runs per minute (rpm). Retry after %d s.", le.Max, secs),
			Limit:  "rpm", LimitValue: int64(le.Max)}
	case limit.CounterUnavailable:
		return &endpoint.Error{Status: http.StatusServiceUnavailable, Code: endpoint.CodeBudgetUnavailable, Err: le,
			Detail: fmt.Sprintf("The run's budget could not be counted: the budget store is unavailable. Retry after %d s.", secs)}
	default:
		return &endpoint.Error{
			Status: http.StatusServiceUnavailable,
			Code:   CodeOverloaded,
			Detail: fmt.Sprintf("The server is busy: it takes at most %d runs at once (%s). Retry after %d s.", le.Max, le.Limit, secs),
			Err:    le,
		}
	}
	return &endpoint.Error{Status: http.StatusTooManyRequests, Code: CodeThrottled, Detail: detail, Err: le}
}
