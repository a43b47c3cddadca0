package httpapi_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/endpoint/limit"
	"github.com/stretchr/testify/require"
)

// bigAnswer is an endpoint of about 9 MB of rows.
const bigAnswer = `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 4500)
SELECT i, printf('%.*c', 2000, 'x') AS pad FROM n`

// stalledWriter is a client that stops reading: its writes wait until
// the test lets them go, telling the test when the first one started.
type stalledWriter struct {
	*httptest.ResponseRecorder
	writing chan struct{}
	gate    chan struct{}
	once    bool
}

func (w *stalledWriter) Write(b []byte) (int, error) {
	if !w.once {
		w.once = true
		close(w.writing)
	}
	<-w.gate
	return w.ResponseRecorder.Write(b)
}

func slowReaderHandler(t *testing.T, opts ...httpapi.Option) http.Handler {
	t.Helper()
	svc := newService(t, newExecutor(openEvents(t, 10)))
	for _, name := range []string{"big", "one"} {
		sql := "SELECT 1 AS one"
		if name == "big" {
			sql = bigAnswer
		}
		_, err := svc.Create(context.Background(), "1", endpoint.CreateRequest{Name: name, Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: sql}})
		require.NoError(t, err)
	}
	keys := httpapi.NewKeyring()
	require.NoError(t, keys.AddAllProjects(keyAdmin))
	l, err := limit.New(limit.Config{ProjectConcurrency: 1})
	require.NoError(t, err)
	return httpapi.New(svc, keys, append([]httpapi.Option{httpapi.WithLimiter(l)}, opts...)...)
}

func runRequest(name, body string) *http.Request {
	req := httptest.NewRequest("POST", "/api/projects/1/endpoints/"+name+"/run", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+keyAdmin)
	req.Header.Set("Content-Type", "application/json")
	return req
}

// TestSlowReaderHoldsNoRunSlot: a client that stops reading its answer
// does not keep the project's run slot while the answer is written: with
// one run at a time, another run of the project is answered meanwhile.
// Three such clients took a project offline until the write timeout.
func TestSlowReaderHoldsNoRunSlot(t *testing.T) {
	h := slowReaderHandler(t)
	slow := &stalledWriter{ResponseRecorder: httptest.NewRecorder(), writing: make(chan struct{}), gate: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(slow, runRequest("big", `{"limit": 4500}`))
	}()
	select {
	case <-slow.writing:
	case <-time.After(30 * time.Second):
		t.Fatal("the big answer was never written")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, runRequest("one", `{}`))
	close(slow.gate)
	<-done
	got, want := rec.Code, http.StatusOK
	require.Equal(t, want, got, "another run while the slow client reads: %s: rec.Code", rec.Body)
	require.Equal(t, http.StatusOK, slow.Code)
}

// TestWriteTimeoutCutsOffAStalledClient: once an answer is computed, its
// writing has a deadline of its own (WithWriteTimeout): a client that
// reads nothing is cut off then, and the handler returns.
func TestWriteTimeoutCutsOffAStalledClient(t *testing.T) {
	returned := make(chan struct{}, 1)
	inner := slowReaderHandler(t, httpapi.WithWriteTimeout(300*time.Millisecond))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner.ServeHTTP(w, r)
		returned <- struct{}{}
	}))
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.(*net.TCPConn).SetReadBuffer(4096))
	body := `{"limit": 4500}`
	_, err = fmt.Fprintf(conn, "POST /api/projects/1/endpoints/big/run HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", keyAdmin, len(body), body)
	require.NoError(t, err)
	select {
	case <-returned:
	case <-time.After(20 * time.Second):
		t.Fatal("the handler still writes to a client that reads nothing")
	}
}
