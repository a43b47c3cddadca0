package httpapi_test

import (
	"context"
	"database/sql"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/internal/heldexec"
)

// gatedBuild holds every write that builds a stored table until release,
// telling started when one is held.
type gatedBuild struct {
	started chan struct{}
	release func()
	gate    chan struct{}
}

func newGatedBuild() *gatedBuild {
	g := &gatedBuild{started: make(chan struct{}, 1), gate: make(chan struct{})}
	g.release = sync.OnceFunc(func() { close(g.gate) })
	return g
}

// hold is the BeforeExec of the executor g gates.
func (g *gatedBuild) hold(ctx context.Context, stmts []driver.Statement) error {
	if !slices.ContainsFunc(stmts, func(st driver.Statement) bool { return strings.Contains(st.SQL(), "CREATE TABLE") }) {
		return nil
	}
	select {
	case g.started <- struct{}{}:
	default:
	}
	select {
	case <-g.gate:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestMaterializeAnswers202WhileTheRefreshRuns: POST materialize answers
// 202 at once with the status route (Location, status_url) while the
// refresh it started is held in its build, which therefore cannot have
// ended; the status shows that refresh's progress meanwhile, and its end
// once the build goes on. Before, the POST answered only once the
// refresh ended.
func TestMaterializeAnswers202WhileTheRefreshRuns(t *testing.T) {
	g := newGatedBuild()
	h := newHarness(t, func(events *sql.DB) driver.Executor {
		return heldexec.NewFake(newExecutor(events), heldexec.BeforeExec(g.hold))
	})
	t.Cleanup(g.release)
	mustStatus(t, http.StatusCreated, h.setupDaily(nil))

	answered := make(chan response, 1)
	go func() { answered <- h.do("POST", "/api/projects/1/endpoints/daily/materialize", keyP1, nil) }()
	var r response
	select {
	case r = <-answered:
	case <-time.After(30 * time.Second): // a guard against a hang, not a measure
		t.Fatal("POST materialize did not answer while its refresh was held")
	}
	mustStatus(t, http.StatusAccepted, r)
	status := "/api/projects/1/endpoints/daily/materialization_status"
	assert.Equal(t, status, r.Header.Get("Location"))
	assert.Equal(t, status, r.Body["status_url"])
	assert.Equal(t, false, r.Body["joined"])

	<-g.started // the refresh is in its build, held
	st := h.do("GET", status, keyP1, nil)
	mustStatus(t, http.StatusOK, st)
	assert.Equal(t, "running", st.Body["status"], "%s", st.Raw)
	p, ok := st.Body["progress"].(map[string]any)
	require.True(t, ok, "no progress in %s", st.Raw)
	assert.Equal(t, "building", p["phase"])
	assert.Equal(t, "manual", p["trigger"])
	assert.Nil(t, p["rows_written"])
	assert.NotEmpty(t, p["note"])
	assert.NotNil(t, p["elapsed_ms"])

	// A second POST meanwhile joins the refresh under way.
	again := h.do("POST", "/api/projects/1/endpoints/daily/materialize/", keyP1, map[string]any{})
	mustStatus(t, http.StatusAccepted, again)
	assert.Equal(t, true, again.Body["joined"])

	g.release()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st = h.do("GET", status, keyP1, nil)
		if st.Body["status"] == "completed" || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	require.Equal(t, "completed", st.Body["status"], "%s", st.Raw)
	assert.Nil(t, st.Body["progress"])
	assert.NotNil(t, st.Body["rows"])

	// ?wait=true keeps the blocking answer; a wait that is no boolean is refused.
	mustStatus(t, http.StatusOK, h.do("POST", "/api/projects/1/endpoints/daily/materialize?wait=true", keyP1, nil))
	bad := h.do("POST", "/api/projects/1/endpoints/daily/materialize?wait=soon", keyP1, nil)
	mustStatus(t, http.StatusBadRequest, bad)
	assert.Equal(t, "wait must be true or false.", bad.detail())
	assert.Equal(t, "wait", bad.Body["attr"])
}
