package httpapi_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/internal/cputime"
	"github.com/endpointkit/endpointkit/internal/heldexec"
	"github.com/endpointkit/endpointkit/variable"
)

// BenchmarkRunChain is the handler's own work on a run, without a
// database: the run route of BenchmarkHTTPRunOverhead (in-memory stores,
// an executor that answers one fixed row at once), in process, reported
// in the CPU time the process used per request (cpu-ns/op) beside the
// wall time, which a machine shared with other work makes noisy:
//
//	go test ./endpoint/httpapi -run '^$' -bench BenchmarkRunChain -benchmem -count 6
//
// run is the run route as clients send it; run/ with the trailing slash
// the API accepts too; other is a route beside it (GET of the endpoint),
// routed by the API's mux.
func BenchmarkRunChain(b *testing.B) {
	svc, err := endpoint.New(endpoint.Config{
		Endpoints: memstore.New(),
		Variables: variable.NewMemoryStore(),
		Executor: heldexec.NewFake(nil, heldexec.Answer(&driver.Result{Columns: []string{"n"}, Types: []string{"INTEGER"}, Rows: [][]any{{int64(1)}}}),
			heldexec.Unrecorded()),
	})
	require.NoError(b, err)
	h := benchHandler(b, svc)
	body := []byte(`{"variables": {"event": "purchase", "from": "2025-05-01", "to": "2025-05-08"}}`)
	for _, c := range []struct {
		name, method, path string
		body               []byte
	}{
		{"run", "POST", "/api/projects/1/endpoints/by_country/run", body},
		{"run/", "POST", "/api/projects/1/endpoints/by_country/run/", body},
		{"other", "GET", "/api/projects/1/endpoints/by_country", nil},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu0, ok := cputime.Process()
			for b.Loop() {
				req := httptest.NewRequest(c.method, c.path, bytes.NewReader(c.body))
				req.Header.Set("Authorization", "Bearer "+keyP1)
				req.Header.Set("Content-Type", "application/json")
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
			}
			if cpu1, ok1 := cputime.Process(); ok && ok1 {
				b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
			}
		})
	}
}
