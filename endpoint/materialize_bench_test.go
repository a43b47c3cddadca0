package endpoint_test

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/require"
)

// matBenchEvents is the size of the materialization benchmarks' data set.
const matBenchEvents = 1_000_000

// matBench is a Service over 1,000,000 demo events with the daily
// purchases query saved twice, inline and materialized. It is built once
// per process, by the first benchmark that needs it, so that go test
// without -bench never loads it.
var matBench struct {
	once sync.Once
	svc  *endpoint.Service
	err  error
}

func matBenchService(b *testing.B) *endpoint.Service {
	b.Helper()
	matBench.once.Do(func() { matBench.svc, matBench.err = newMatBenchService() })
	require.NoError(b, matBench.err)
	return matBench.svc
}

// demoDB returns an in-memory SQLite database of n demo events (drawn
// with seed), on one connection: each connection to :memory: is a
// database of its own.
func demoDB(n int, seed uint64) (*sql.DB, error) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	if err := demo.Load(context.Background(), db, n, seed); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

func newMatBenchService() (*endpoint.Service, error) {
	ctx := context.Background()
	db, err := demoDB(matBenchEvents, 7)
	if err != nil {
		return nil, err
	}
	svc, err := endpoint.New(endpoint.Config{
		Endpoints: memstore.New(),
		Variables: variable.NewMemoryStore(),
		Executor:  sqlexec.New(db, engine.SQLite),
		// The table stays fresh however long the benchmarks run.
		Now: func() time.Time { return demo.End },
	})
	if err != nil {
		return nil, err
	}
	q := &endpoint.Query{Kind: endpoint.KindSQL, SQL: dailyPurchases, Variables: map[string]endpoint.VariableRef{}}
	for _, v := range []variable.Variable{{Name: "Country", Type: variable.String}, {Name: "From", Type: variable.Date}, {Name: "To", Type: variable.Date}} {
		got, err := svc.CreateVariable(ctx, "1", v)
		if err != nil {
			return nil, err
		}
		q.Variables[got.ID] = endpoint.VariableRef{VariableID: got.ID, CodeName: got.CodeName}
	}
	if _, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "inline", Query: q}); err != nil {
		return nil, err
	}
	if _, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "daily", Query: q, IsMaterialized: true}); err != nil {
		return nil, err
	}
	if err := svc.Materialize(ctx, "1", "daily"); err != nil {
		return nil, err
	}
	return svc, nil
}

// matBenchRequest asks for a month of one country's purchases.
var matBenchRequest = endpoint.RunRequest{Variables: map[string]any{"country": "US", "from": "2025-04-01", "to": "2025-05-01"}}

func benchRun(b *testing.B, name string, materialized bool) {
	svc := matBenchService(b)
	ctx := context.Background()
	for b.Loop() {
		res, err := svc.Run(ctx, "1", name, matBenchRequest)
		require.NoError(b, err)
		require.Equal(b, materialized, res.EndpointMaterialized, "materialized %v, %d rows", res.EndpointMaterialized, len(res.Results.([][]any)))
		require.Len(b, res.Results.([][]any), 30, "materialized %v, %d rows", res.EndpointMaterialized, len(res.Results.([][]any)))
	}
}

// BenchmarkServiceRunInline runs "daily purchases and revenue for a
// country between two dates" through the Service against 1,000,000 demo
// events on SQLite.
func BenchmarkServiceRunInline(b *testing.B) { benchRun(b, "inline", false) }

// BenchmarkServiceRunMaterialized runs the same request against the same
// query saved as a materialized endpoint: a read of its stored table.
func BenchmarkServiceRunMaterialized(b *testing.B) { benchRun(b, "daily", true) }

// BenchmarkServiceMaterialize is the time to build the stored table of the
// daily purchases endpoint from 1,000,000 events (one refresh).
func BenchmarkServiceMaterialize(b *testing.B) {
	svc := matBenchService(b)
	ctx := context.Background()
	for b.Loop() {
		require.NoError(b, svc.Materialize(ctx, "1", "daily"))
	}
	e, err := svc.Get(ctx, "1", "daily")
	if err != nil || e.Materialization.Status != endpoint.StatusCompleted {
		b.Fatal(fmt.Sprint(e.Materialization, err))
	}
}
