package endpoint_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/endpoint/sqlstore"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/insight"
	"github.com/endpointkit/endpointkit/internal/heldexec"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// flightOf runs req on the endpoint name n times at once, one run
// computing the answer and the n-1 others joined to its flight, and
// returns the n answers.
func flightOf(t *testing.T, svc *endpoint.Service, x *heldexec.Fake, name string, req endpoint.RunRequest, n int) []*endpoint.RunResult {
	t.Helper()
	before := x.Queries()
	x.Hold()
	out := make([]*endpoint.RunResult, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i], errs[i] = svc.Run(context.Background(), "1", name, req)
		}()
	}
	select {
	case <-x.Started: // the run that computes the answer is held
	case <-time.After(10 * time.Second):
		x.Release()
		t.Fatal("no query reached the executor in 10s")
	}
	for deadline := time.Now().Add(10 * time.Second); endpoint.FlightWaiters(svc) < n-1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			x.Release()
			t.Fatalf("%d runs joined the flight in 10s, want %d", endpoint.FlightWaiters(svc), n-1)
		}
	}
	x.Release()
	wg.Wait()
	computed := 0
	ids := map[string]bool{}
	for i, res := range out {
		require.NoError(t, errs[i], "run %d", i)
		if !res.IsCached {
			computed++
		}
		ids[res.ExecutionID] = true
	}
	if q := x.Queries() - before; q != 1 || computed != 1 || len(ids) != n {
		t.Fatalf("%d queries, %d answers computed, %d execution ids; want 1, 1, %d", q, computed, len(ids), n)
	}
	return out
}

// content is the JSON of what an answer says of its data: everything but
// what is its run's own (execution id, is_cached).
func content(t *testing.T, res *endpoint.RunResult) string {
	t.Helper()
	b, err := json.Marshal(struct {
		Name                   string
		Version                int
		Columns, Types         []string
		Results                any
		HasMore                bool
		Materialized           bool
		MaterializedAt         *time.Time
		InlineReason           string
		VersionCreatedAt       *time.Time
		LastRefresh            *time.Time
		Statistics             *endpoint.Statistics
		RowsRead, BytesRead    *int64
		Debug                  *endpoint.DebugInfo
		ColumnsNil, TypesNil   bool
		StatsNil, RefreshedNil bool
	}{
		res.Name, res.EndpointVersion, res.Columns, res.Types, json.RawMessage(resultsJSON(t, res)), res.HasMore,
		res.EndpointMaterialized, res.EndpointMaterializedAt, res.InlineReason, res.EndpointVersionCreatedAt,
		res.LastRefresh, res.Statistics, statRows(res), statBytes(res), res.Debug,
		res.Columns == nil, res.Types == nil, res.Statistics == nil, res.LastRefresh == nil,
	})
	require.NoError(t, err, "encoding an answer")
	return string(b)
}

func statRows(res *endpoint.RunResult) *int64 {
	if res.Statistics == nil {
		return nil
	}
	return res.Statistics.RowsRead
}

func statBytes(res *endpoint.RunResult) *int64 {
	if res.Statistics == nil {
		return nil
	}
	return res.Statistics.BytesRead
}

// vandalize writes over everything a host can write in res: its slices,
// the values of its rows or series, what its pointers point to.
func vandalize(res *endpoint.RunResult) {
	for i := range res.Columns {
		res.Columns[i] = "vandal"
	}
	for i := range res.Types {
		res.Types[i] = "vandal"
	}
	switch r := res.Results.(type) {
	case [][]any:
		for _, row := range r {
			for j := range row {
				row[j] = "vandal"
			}
		}
		if len(r) > 0 {
			r[0] = nil
		}
	case json.RawMessage:
		for i := range r {
			r[i] = '!'
		}
	case *insight.Result:
		r.HasMore = !r.HasMore
		for i := range r.Series {
			s := &r.Series[i]
			s.Label, s.BreakdownValue, s.Count = "vandal", "vandal", -1
			writeFloats(s.Data)
			writeStrings(s.Days)
			writeStrings(s.Labels)
		}
		for i := range r.Cohorts {
			c := &r.Cohorts[i]
			c.Label, c.Date, c.BreakdownValue = "vandal", "vandal", "vandal"
			for j := range c.Values {
				c.Values[j] = insight.RetentionValue{Count: -1, Label: "vandal"}
			}
		}
		for i := range r.Lifecycle {
			s := &r.Lifecycle[i]
			s.Count = -1
			writeFloats(s.Data)
			writeStrings(s.Days)
			writeStrings(s.Labels)
		}
		if len(r.Series) > 0 {
			r.Series[0] = insight.TrendsSeries{}
		}
	}
	for _, p := range []*time.Time{res.LastRefresh, res.EndpointMaterializedAt, res.EndpointVersionCreatedAt} {
		if p != nil {
			*p = time.Unix(1, 0)
		}
	}
	if st := res.Statistics; st != nil {
		st.ElapsedMS = -1
		for _, p := range []*int64{st.RowsRead, st.BytesRead} {
			if p != nil {
				*p = -1
			}
		}
	}
	if res.Debug != nil {
		res.Debug.SQL = "vandal"
	}
}

func writeFloats(s []float64) {
	for i := range s {
		s[i] = -1
	}
}

func writeStrings(s []string) {
	for i := range s {
		s[i] = "vandal"
	}
}

// ownEnv is an env whose executor can be held (see flightOf) and reports
// 6 rows and 60 bytes read for every answer, so that each answer's
// statistics have counts to write to; with the result cache cache makes
// (none when nil), over the demo events when events > 0.
func ownEnv(t *testing.T, events int, cache func(e *env) driver.ResultCache) (*env, *heldexec.Fake) {
	t.Helper()
	e := newEnv(t)
	if events > 0 {
		require.NoError(t, demo.Load(context.Background(), e.db, events, 11))
	}
	x := heldexec.NewFake(execOf(e), heldexec.Held(1), heldexec.Read(6, 60))
	cfg := endpoint.Config{Endpoints: e.eps, Variables: e.vstore, Executor: x, Now: e.clock.Now}
	if cache != nil {
		cfg.ResultCache = cache(e)
	}
	svc, err := endpoint.New(cfg)
	require.NoError(t, err)
	e.svc = svc
	return e, x
}

// resultCaches are the result caches the library ships, and none.
var resultCaches = map[string]func(e *env) driver.ResultCache{
	"none":   nil,
	"memory": func(*env) driver.ResultCache { return memstore.NewResultCache(1 << 20) },
	"sql": func(e *env) driver.ResultCache {
		st, err := sqlstore.New(e.db, engine.SQLite)
		if err != nil {
			panic(err)
		}
		if err := st.Migrate(context.Background()); err != nil {
			panic(err)
		}
		return st.ResultCache(sqlstore.CacheOptions{Now: e.clock.Now})
	},
}

// ownCase is an endpoint whose answers TestAnswersAreTheirOwn attacks.
type ownCase struct {
	name   string
	events int
	setup  func(t *testing.T, e *env)
	req    endpoint.RunRequest
}

var ownCases = []ownCase{
	{"sql", 0, func(t *testing.T, e *env) {
		e.create(t, "q", e.query("SELECT id, country, amount, created FROM orders WHERE country = {variables.country} ORDER BY id", "country"))
	}, endpoint.RunRequest{Variables: map[string]any{"country": "US"}}},
	{"materialized", 2000, func(t *testing.T, e *env) {
		e.createMat(t, "q", e.daily(), endpoint.CreateRequest{})
		e.materialize(t, "q")
	}, endpoint.RunRequest{Variables: runVars("US", "2025-05-01", "2025-05-08")}},
	{"trends", insightEvents, func(t *testing.T, e *env) {
		e.create(t, "q", insightQuery(t, trendsByBrowser))
	}, endpoint.RunRequest{}},
	{"retention", insightEvents, func(t *testing.T, e *env) {
		e.create(t, "q", insightQuery(t, retentionByBrowser))
	}, endpoint.RunRequest{}},
	{"materialized trends", insightEvents, func(t *testing.T, e *env) {
		e.createMat(t, "q", insightQuery(t, trendsByBrowserCountry), endpoint.CreateRequest{})
		e.materialize(t, "q")
	}, endpoint.RunRequest{Variables: map[string]any{"$browser": "Chrome", "country": "US"}}},
	{"lifecycle", insightEvents, func(t *testing.T, e *env) {
		e.create(t, "q", insightQuery(t, lifecycleWeekly))
	}, endpoint.RunRequest{}},
}

// TestAnswersAreTheirOwn: an answer is its caller's to write to. The
// answers of one flight (one run computing, the others joined to it)
// say the same but share nothing: a host writing over one answer (its
// rows and their values, columns, types, series, and what its time and
// statistics pointers point to) changes no other answer of the flight,
// nor what a later run answers, from the result cache (in memory or
// SQL) or computed again; an answer read from the cache, written over,
// corrupts the cache no more. SQL, materialized and insight endpoints.
func TestAnswersAreTheirOwn(t *testing.T) {
	for _, c := range ownCases {
		for cacheName, cache := range resultCaches {
			if c.events > 0 && cacheName == "sql" {
				continue // one SQL cache case is enough; the demo loads are slow
			}
			t.Run(c.name+"/cache="+cacheName, func(t *testing.T) {
				e, x := ownEnv(t, c.events, cache)
				c.setup(t, e)
				answers := flightOf(t, e.svc, x, "q", c.req, 4)
				want := content(t, answers[0])
				for i, res := range answers {
					require.Equal(t, want, content(t, res), "answer %d of the flight says", i)
				}
				require.Equal(t, strings.HasPrefix(c.name, "materialized"), answers[0].EndpointMaterialized, "materialized")
				for i := range answers {
					vandalize(answers[i])
					for j := i + 1; j < len(answers); j++ {
						require.Equal(t, want, content(t, answers[j]), "after its host wrote over answer %d, answer %d of the same flight says", i, j)
					}
				}
				// A later run: from the cache when there is one.
				again, err := e.svc.Run(context.Background(), "1", "q", c.req)
				require.NoError(t, err)
				require.Equal(t, cache != nil, again.IsCached, "a later run: is_cached with cache %s", cacheName)
				if cache == nil {
					return
				}
				require.Equal(t, want, content(t, again), "after the flight's answers were written over, the cache answers")
				vandalize(again)
				require.Equal(t, want, content(t, runReq(t, e, "q", c.req)), "after a cached answer was written over, the cache answers")
			})
		}
	}
}

// TestAnswersWrittenWhileOthersRead: under -race, the hosts of a
// flight's answers write over theirs while the others read theirs, each
// in its own goroutine, as hosts serving requests do; nothing is shared.
func TestAnswersWrittenWhileOthersRead(t *testing.T) {
	for _, c := range []ownCase{ownCases[0], ownCases[2]} {
		t.Run(c.name, func(t *testing.T) {
			e, x := ownEnv(t, c.events, resultCaches["memory"])
			c.setup(t, e)
			for round := range 3 {
				req := c.req
				if round > 0 {
					req.Refresh = endpoint.RefreshForce
				}
				answers := flightOf(t, e.svc, x, "q", req, 6)
				var wg sync.WaitGroup
				for i, res := range answers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if i%2 == 0 {
							vandalize(res)
							return
						}
						for range 3 {
							_, err := json.Marshal(res)
							assert.NoError(t, err)
						}
					}()
				}
				wg.Wait()
			}
		})
	}
}

// TestRunLogOwnsItsCounts: the run log keeps the rows and bytes read
// that each run reported, whatever a host writes to its answer's
// statistics after the run, and whatever the hosts of the other runs of
// its flight write to theirs. A run that joined another's flight logs
// none (the engine read nothing for it: the computing run logged what it
// read), so that the log's counts add up to what the engine read.
func TestRunLogOwnsItsCounts(t *testing.T) {
	e, x := ownEnv(t, 0, nil)
	ownCases[0].setup(t, e)
	answers := append(flightOf(t, e.svc, x, "q", ownCases[0].req, 3), runReq(t, e, "q", ownCases[0].req))
	for _, res := range answers {
		vandalize(res)
	}
	logs, _, err := e.svc.Logs(context.Background(), "1", "q", 0, "")
	require.NoError(t, err)
	require.Len(t, logs, len(answers))
	var computed int
	for _, l := range logs {
		if l.Cached {
			if l.RowsRead != nil || l.BytesRead != nil {
				t.Errorf("cached run %s logged rows_read %s, bytes_read %s; want null", l.ExecutionID, ptrText(l.RowsRead), ptrText(l.BytesRead))
			}
		} else if computed++; l.RowsRead == nil || *l.RowsRead != 6 || l.BytesRead == nil || *l.BytesRead != 60 {
			t.Errorf("run %s logged rows_read %s, bytes_read %s; want 6 and 60", l.ExecutionID, ptrText(l.RowsRead), ptrText(l.BytesRead))
		}
		if l.Rows == nil || *l.Rows != 3 {
			t.Errorf("run %s logged rows %s, want 3", l.ExecutionID, ptrText(l.Rows))
		}
	}
	assert.Equal(t, 2, computed)
}

func ptrText[T any](p *T) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}

// sameJSON reports whether two answers' results encode alike: a run that
// joined another's flight has them as JSON, the run that computed them
// as rows or an *insight.Result.
func sameJSON(a, b any) bool {
	ja, err := json.Marshal(a)
	if err != nil {
		return false
	}
	jb, err := json.Marshal(b)
	return err == nil && string(ja) == string(jb)
}

// TestLogsAreTheirOwn: a page of the run log is its caller's own: writing
// to what its entries' counts point to changes nothing of what the log
// says next.
func TestLogsAreTheirOwn(t *testing.T) {
	e, _ := ownEnv(t, 0, nil)
	ownCases[0].setup(t, e)
	runReq(t, e, "q", ownCases[0].req)
	ctx := context.Background()
	for range 2 {
		logs, _, err := e.svc.Logs(ctx, "1", "q", 0, "")
		require.NoError(t, err)
		l := logs[0]
		if l.Rows == nil || *l.Rows != 3 || l.RowsRead == nil || *l.RowsRead != 6 || l.BytesRead == nil || *l.BytesRead != 60 {
			t.Fatalf("the log says rows %s, rows_read %s, bytes_read %s; want 3, 6 and 60", ptrText(l.Rows), ptrText(l.RowsRead), ptrText(l.BytesRead))
		}
		*l.Rows, *l.RowsRead, *l.BytesRead = -1, -1, -1
	}
}
