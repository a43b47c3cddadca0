//go:build long

package httpapi_test

import (
	"context"
	"database/sql"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/endpoint/sqlstore"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/require"
)

// millionEvents is the size of the events table of the cache benchmarks.
const millionEvents = 1_000_000

// cacheBench is one SQLite file of a million demo events, shared by the
// benchmarks of a test binary (loading it takes a while), and two handlers
// over it: one whose Service keeps a result cache, one without. TestMain
// removes the file.
var cacheBench struct {
	once           sync.Once
	err            error
	cached, inline http.Handler
	dir            string
	closers        []io.Closer
}

// TestMain runs the package's tests and then removes what the cache
// benchmarks left.
func TestMain(m *testing.M) {
	code := m.Run()
	for _, c := range cacheBench.closers {
		c.Close()
	}
	if cacheBench.dir != "" {
		os.RemoveAll(cacheBench.dir)
	}
	os.Exit(code)
}

// dailyBody is the benchmark run: purchases and buyers per day over the
// whole 90 days of demo events (tens of thousands of rows read through the
// (event, timestamp) index and grouped).
var dailyBody = []byte(`{"variables": {"event": "purchase", "from": "2025-03-01", "to": "2025-06-01"}}`)

const dailyPath = "/api/projects/1/endpoints/daily/run"

func loadCacheBench(tb testing.TB) {
	tb.Helper()
	cacheBench.once.Do(func() { cacheBench.err = buildCacheBench() })
	require.NoError(tb, cacheBench.err)
}

func buildCacheBench() error {
	dir, err := os.MkdirTemp("", "endpointkit-cache-bench")
	if err != nil {
		return err
	}
	cacheBench.dir = dir
	open := func(name string) (*sql.DB, error) {
		db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, name)+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)")
		if err == nil {
			cacheBench.closers = append(cacheBench.closers, db)
		}
		return db, err
	}
	events, err := open("events.db")
	if err != nil {
		return err
	}
	ctx := context.Background()
	if err := demo.Load(ctx, events, millionEvents, demoSeed); err != nil {
		return err
	}
	keys := httpapi.NewKeyring()
	if err := keys.Add(keyP1, "1"); err != nil {
		return err
	}
	build := func(name string, cache driver.ResultCache) (http.Handler, error) {
		db, err := open(name)
		if err != nil {
			return nil, err
		}
		st, err := sqlstore.New(db, engine.SQLite)
		if err != nil {
			return nil, err
		}
		if err := st.Migrate(ctx); err != nil {
			return nil, err
		}
		svc, err := endpoint.New(endpoint.Config{Endpoints: st.Endpoints(), Variables: st.Variables(), Executor: newExecutor(events), ResultCache: cache})
		if err != nil {
			return nil, err
		}
		refs := map[string]endpoint.VariableRef{}
		for _, v := range []variable.Variable{
			{ID: idEvent, Name: "event", Type: variable.String},
			{ID: idFrom, Name: "from", Type: variable.Date},
			{ID: idTo, Name: "to", Type: variable.Date},
		} {
			if _, err := svc.CreateVariable(ctx, "1", v); err != nil {
				return nil, err
			}
			refs[v.ID] = endpoint.VariableRef{VariableID: v.ID, CodeName: v.Name}
		}
		q := endpoint.Query{Kind: endpoint.KindSQL, Variables: refs,
			SQL: "SELECT date(timestamp) AS day, count(*) AS purchases, count(DISTINCT distinct_id) AS buyers FROM events " +
				"WHERE event = {variables.event} AND timestamp >= {variables.from} AND timestamp < {variables.to} GROUP BY day ORDER BY day"}
		if _, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "daily", Query: &q}); err != nil {
			return nil, err
		}
		return httpapi.New(svc, keys, httpapi.WithLimiter(nil)), nil
	}
	if cacheBench.cached, err = build("cached.db", memstore.NewResultCache(0)); err != nil {
		return err
	}
	cacheBench.inline, err = build("inline.db", nil)
	return err
}

// BenchmarkRunCached is a run of the benchmark endpoint through the HTTP
// handler answered from the result cache (the first run, before the loop,
// fills it). Against BenchmarkRunInline, in one run:
//
//	go test -tags long -run '^$' -bench 'BenchmarkRun(Cached|Inline)$' -benchmem ./endpoint/httpapi/
func BenchmarkRunCached(b *testing.B) {
	loadCacheBench(b)
	serveBench(b, cacheBench.cached, dailyPath, dailyBody)
	b.ReportAllocs()
	for b.Loop() {
		serveBench(b, cacheBench.cached, dailyPath, dailyBody)
	}
}

// BenchmarkRunInline is the same run through a handler whose Service has
// no result cache: every run executes the query over a million events.
func BenchmarkRunInline(b *testing.B) {
	loadCacheBench(b)
	b.ReportAllocs()
	for b.Loop() {
		serveBench(b, cacheBench.inline, dailyPath, dailyBody)
	}
}
