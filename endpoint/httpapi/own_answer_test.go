package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/internal/heldexec"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// heldRequests holds the end of every run made over HTTP (one with a
// request id) until release is closed: the HTTP API writes its answer
// after that.
type heldRequests struct{ release chan struct{} }

func (o heldRequests) ObserveRun(ctx context.Context, _ endpoint.RunEvent) {
	if endpoint.RequestID(ctx) != "" {
		<-o.release
	}
}

func (heldRequests) ObserveRefresh(context.Context, endpoint.RefreshEvent) {}

// TestHTTPAnswerIsNotAHostsAnswer: a host that runs an endpoint through
// the Go API and writes over the answer it got changes nothing of the
// answer an HTTP client gets from the same flight, whichever of the two
// runs computed it.
func TestHTTPAnswerIsNotAHostsAnswer(t *testing.T) {
	for _, hostFirst := range []bool{true, false} {
		name := map[bool]string{true: "host computes", false: "client computes"}[hostFirst]
		t.Run(name, func(t *testing.T) {
			for attempt := 0; ; attempt++ {
				joined, body, want := hostAndClient(t, hostFirst)
				if !joined && attempt < 5 {
					continue // the second run came after the first ended; again
				}
				require.True(t, joined, "in 6 attempts the second run never joined the first's flight")
				cols, rows, _ := strings.Cut(want, "\x00")
				if !strings.Contains(body, cols) || !strings.Contains(body, rows) || strings.Contains(body, "vandal") || strings.Contains(body, `"last_refresh":"1970-`) {
					t.Fatalf("the client got %s, want %s and %s", body, cols, rows)
				}
				return
			}
		})
	}
}

// hostAndClient runs one endpoint at once from a host (Go) and a client
// (HTTP), the first of them holding the query until the second has had
// time to join its flight; the host writes over its answer before the
// client's is written. It returns whether the second run joined, the
// client's body and the results it should hold.
func hostAndClient(t *testing.T, hostFirst bool) (joined bool, body, want string) {
	t.Helper()
	events := openEvents(t, demoEvents)
	x := heldexec.New(newExecutor(events), 4)
	obs := heldRequests{release: make(chan struct{})}
	eps, vars := newStores(t)
	svc, err := endpoint.New(endpoint.Config{Endpoints: eps, Variables: vars, Executor: x, Observer: obs})
	require.NoError(t, err)
	ctx := context.Background()
	q := &endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT event, count(*) AS n FROM events GROUP BY event ORDER BY event"}
	if _, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "counts", Query: q}); err != nil {
		t.Fatal(err)
	}
	first, err := svc.Run(ctx, "1", "counts", endpoint.RunRequest{})
	require.NoError(t, err)
	want = resultsOf(t, first)

	keys := httpapi.NewKeyring()
	require.NoError(t, keys.Add(keyP1, "1"))
	srv := httptest.NewServer(httpapi.New(svc, keys, httpapi.WithLimiter(nil)))
	defer srv.Close()

	x.Hold()
	host := make(chan *endpoint.RunResult, 1)
	client := make(chan string, 1)
	runHost := func() {
		res, err := svc.Run(ctx, "1", "counts", endpoint.RunRequest{})
		assert.NoError(t, err)
		host <- res
	}
	runClient := func() {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/projects/1/endpoints/counts/run", strings.NewReader(`{}`))
		req.Header.Set("Authorization", "Bearer "+keyP1)
		req.Header.Set("Content-Type", "application/json")
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Error(err)
			client <- ""
			return
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		client <- string(b)
	}
	if hostFirst {
		go runHost()
		<-x.Started
		go runClient()
	} else {
		go runClient()
		<-x.Started
		go runHost()
	}
	time.Sleep(100 * time.Millisecond) // for the second run to join
	x.Release()
	res := <-host
	if res != nil {
		// The host writes over its answer while the client's is not yet
		// written.
		if rows, ok := res.Results.([][]any); ok {
			for _, row := range rows {
				for j := range row {
					row[j] = "vandal"
				}
			}
		}
		for i := range res.Columns {
			res.Columns[i] = "vandal"
		}
		if res.LastRefresh != nil {
			*res.LastRefresh = time.Unix(1, 0)
		}
	}
	close(obs.release)
	body = <-client
	hostJoined := res != nil && res.IsCached
	clientJoined := strings.Contains(body, `"is_cached":true`)
	return hostJoined != clientJoined, body, want
}

// resultsOf is the JSON of an answer's results and columns as the HTTP
// API writes them.
func resultsOf(t *testing.T, res *endpoint.RunResult) string {
	t.Helper()
	cols, err := json.Marshal(res.Columns)
	require.NoError(t, err)
	rows, err := json.Marshal(res.Results)
	require.NoError(t, err)
	return `"columns":` + string(cols) + "\x00" + `"results":` + string(rows)
}
