package httpapi_test

import (
	"context"
	"database/sql"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/internal/heldexec"
	"github.com/stretchr/testify/require"
)

// slowWrites makes every write take delay (nanoseconds) more, or until its
// context ends.
func slowWrites(delay *atomic.Int64) heldexec.Option {
	return heldexec.BeforeExec(func(ctx context.Context, _ []driver.Statement) error {
		select {
		case <-time.After(time.Duration(delay.Load())):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
}

// TestMaterializeOutlivesTheServersWriteTimeout: a refresh that takes
// longer than the server's WriteTimeout is still answered, as a run that
// does is: its answer has a write deadline of its own from when the refresh
// ends (WithWriteTimeout), rather than the connection closed without one.
func TestMaterializeOutlivesTheServersWriteTimeout(t *testing.T) {
	var delay atomic.Int64
	h := newHarness(t, func(events *sql.DB) driver.Executor {
		return heldexec.NewFake(newExecutor(events), slowWrites(&delay))
	})
	mustStatus(t, http.StatusCreated, h.setupDaily(nil))
	srv := httptest.NewUnstartedServer(h.handler)
	srv.Config.WriteTimeout = 200 * time.Millisecond
	srv.Start()
	t.Cleanup(srv.Close)
	delay.Store(int64(600 * time.Millisecond))
	req, err := http.NewRequest("POST", srv.URL+"/api/projects/1/endpoints/daily/materialize?wait=true", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+keyP1)
	resp, err := srv.Client().Do(req)
	require.NoError(t, err, "a refresh longer than the server's write timeout was not answered")
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err, "the answer was cut")
	require.Equal(t, http.StatusOK, resp.StatusCode, "status %d: %s", resp.StatusCode, body)
	require.Contains(t, string(body), `"status":"completed"`, "status %d: %s", resp.StatusCode, body)
}
