package httpapi_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/endpoint/limit"
	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/variable"
)

// BenchmarkHTTPRun is one run through the handler, key check and JSON
// included, of a 3-variable endpoint on real SQLite over 10,000 events:
// the cost a client sees minus the network.
func BenchmarkHTTPRun(b *testing.B) {
	events := openEvents(b, 10000)
	h := benchHandler(b, newService(b, newExecutor(events)))
	body := []byte(`{"variables": {"event": "purchase", "from": "2025-05-01", "to": "2025-05-08"}}`)

	for b.Loop() {
		req := httptest.NewRequest("POST", "/api/projects/1/endpoints/by_country/run", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+keyP1)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
}

// benchHandler creates the 3-variable endpoint "by_country" in project 1
// of svc and returns the handler over svc.
func benchHandler(b *testing.B, svc *endpoint.Service) http.Handler {
	b.Helper()
	ctx := context.Background()
	for _, v := range []variable.Variable{
		{ID: idEvent, Name: "event", Type: variable.String},
		{ID: idFrom, Name: "from", Type: variable.Date},
		{ID: idTo, Name: "to", Type: variable.Date},
	} {
		_, err := svc.CreateVariable(ctx, "1", v)
		require.NoError(b, err)
	}
	q := endpoint.Query{
		Kind: endpoint.KindSQL,
		SQL: "SELECT json_extract(properties, '$.country') AS country, count(*) AS n FROM events" +
			" WHERE event = {variables.event} AND timestamp >= {variables.from} AND timestamp < {variables.to}" +
			" GROUP BY country ORDER BY n DESC, country",
		Variables: map[string]endpoint.VariableRef{
			idEvent: {VariableID: idEvent, CodeName: "event"},
			idFrom:  {VariableID: idFrom, CodeName: "from"},
			idTo:    {VariableID: idTo, CodeName: "to"},
		},
	}
	_, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "by_country", Query: &q})
	require.NoError(b, err)
	keys := httpapi.NewKeyring()
	require.NoError(b, keys.Add(keyP1, "1"))
	// The limiter stays, so that its cost is measured, but without the
	// rates: a benchmark runs far more than 240 times a minute.
	l, err := limit.New(limit.Config{ProjectPerMinute: limit.Unlimited, ProjectPerHour: limit.Unlimited})
	require.NoError(b, err)
	return httpapi.New(svc, keys, httpapi.WithLimiter(l))
}

// fixedExecutor answers every query with the same rows, so that a benchmark
// measures the handler and the Service, not a database.
type fixedExecutor struct{ res *endpoint.Result }

func (f fixedExecutor) Dialect() placeholder.Dialect { return placeholder.SQLite }
func (f fixedExecutor) Query(context.Context, string, []any) (*endpoint.Result, error) {
	return &endpoint.Result{Columns: f.res.Columns, Types: f.res.Types, Rows: f.res.Rows}, nil
}
func (f fixedExecutor) Exec(context.Context, string, []any) error { return nil }

// BenchmarkHTTPRunOverhead is BenchmarkHTTPRun with in-memory stores and an
// executor that returns ten fixed rows: the cost of the handler (key check,
// body decoding, JSON answer) and the Service together, without a database.
func BenchmarkHTTPRunOverhead(b *testing.B) {
	rows := make([][]any, 10)
	for i := range rows {
		rows[i] = []any{"US", int64(i)}
	}
	svc, err := endpoint.New(endpoint.Config{
		Endpoints: endpoint.NewMemoryStore(),
		Variables: variable.NewMemoryStore(),
		Executor:  fixedExecutor{&endpoint.Result{Columns: []string{"country", "n"}, Types: []string{"TEXT", "INTEGER"}, Rows: rows}},
	})
	require.NoError(b, err)
	h := benchHandler(b, svc)
	body := []byte(`{"variables": {"event": "purchase", "from": "2025-05-01", "to": "2025-05-08"}}`)
	for b.Loop() {
		req := httptest.NewRequest("POST", "/api/projects/1/endpoints/by_country/run", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+keyP1)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
}
