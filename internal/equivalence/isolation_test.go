package equivalence

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/embed"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The isolation matrix: project 1's endpoints, on a database that also
// holds project 2's rows, answer exactly as on a database holding project
// 1's rows alone, in every way a run can happen, and no answer holds a
// marker of project 2's rows.

// marker is in every row of project 2 (its distinct_id and uuid, and in
// half of them its properties and event name too), and in no row of
// project 1.
const marker = "p2mark"

// isolationPolicy is the example server's policy: the events (and the
// corpus's view of them) scoped by project_id; the items have no tenant.
func isolationPolicy(t *testing.T) access.Policy {
	t.Helper()
	p, err := access.NewStatic(access.Rules{Tables: []access.Table{
		{Name: "events", TenantColumn: "project_id"},
		{Name: "events_p", TenantColumn: "project_id"},
		{Name: "items"},
	}}, nil)
	require.NoError(t, err)
	return p
}

// otherProject is project 2's events: every event name the corpus filters
// on, at times that fall inside, at the edges of, and between the buckets
// of every date range of the corpus (a step of 3h37m13s from March to
// June). Half of them have the same properties as project 1's rows (so
// that a leak changes a count rather than adding a group), half marked
// ones.
func otherProject(n int, from time.Time, step time.Duration, prefix string) [][]any {
	events := []string{"$pageview", "purchase", "signed_up", "$autocapture", marker + "_event"}
	rows := make([][]any, 0, n)
	for i := range n {
		props := `{"$browser":"Chrome","country":"US","plan":"pro","amount":7}`
		ev := events[i%len(events)]
		if i%2 == 1 {
			props = fmt.Sprintf(`{"$browser":"%s-%d","country":"%s-%d","plan":"%s","amount":%d}`, marker, i%3, marker, i%4, marker, i%50+1)
		} else if ev == marker+"_event" {
			ev = "$pageview"
		}
		rows = append(rows, []any{"2", fmt.Sprintf("%s-%s%05d", marker, prefix, i), ev,
			fmt.Sprintf("%s-user-%02d", marker, i%23), from.Add(time.Duration(i) * step).Format("2006-01-02 15:04:05"), props})
	}
	return rows
}

// lateRows are events after the Services' clock, for the live tail: the
// same rows of project 1 on both databases, and marked rows of project 2
// on the shared one.
func lateRows(project string) [][]any {
	if project == "2" {
		return otherProject(40, now.Add(37*time.Minute), 2*time.Hour+11*time.Minute, "late")
	}
	var rows [][]any
	for i := range 30 {
		rows = append(rows, []any{"1", fmt.Sprintf("late-%04d", i), []string{"$pageview", "purchase", "signed_up"}[i%3],
			fmt.Sprintf("late-user-%d", i%5), now.Add(time.Duration(i)*(3*time.Hour+7*time.Minute) + 41*time.Minute).Format("2006-01-02 15:04:05"),
			`{"$browser":"Chrome","country":"US","plan":"pro","amount":3}`})
	}
	return rows
}

// readsEvents reports whether the corpus reads the events for s: every
// insight, and SQL over events or its view.
func readsEvents(s *spec) bool {
	return s.kind != endpoint.KindSQL || strings.Contains(s.sql(sqliteDialect), "events")
}

// isolationShare is how many targets share the runs of a SQL spec past
// its first isolationRuns in the default run: SQLite, SQLite on kept
// statements, PostgreSQL and MariaDB (ClickHouse takes SQLite's share).
const (
	isolationRuns  = 4
	isolationShare = 4
)

// isolationSpecs are the specs of the corpus that read events, for the
// target of index ti; the default run keeps a sample of the insights, every
// lifecycle, and of each SQL spec its first isolationRuns runs (on and off
// the buckets' boundaries) on every target and each later run on one
// target in turn, so that every run is compared on some engine (with
// every run on every engine, the matrix took most of the package's time;
// TestEquivalence runs each on every engine). On a server (server) the
// default run takes the lifecycles in turn too, one in two on each (each
// is two refreshes, of DDL a MariaDB takes half a second for, and most of
// the matrix's time there); SQLite takes them all. -tags long takes all.
func isolationSpecs(ti int, server bool) []*spec {
	var out []*spec
	insights, lifecycles := 0, 0
	for _, s := range corpus() {
		if !readsEvents(s) {
			continue
		}
		if s.kind == endpoint.KindSQL && !long {
			var runs []run
			for j, r := range s.runs {
				if j < isolationRuns || r.inlineOnly || j%isolationShare == ti%isolationShare {
					runs = append(runs, r)
				}
			}
			s.runs = runs
		}
		if s.kind == endpoint.KindLifecycle {
			// Every lifecycle: its statement reads the events twice (the
			// series' events, and every event of their users).
			lifecycles++
			if server && !long && lifecycles%2 != ti%2 {
				continue
			}
			s.runs = firstRuns(s.runs, 2)
			out = append(out, s)
			continue
		}
		if s.kind != endpoint.KindSQL {
			insights++
			if !long && insights%4 != 1 {
				continue
			}
			s.runs = firstRuns(s.runs, 2)
		}
		out = append(out, s)
	}
	return out
}

// way is one way a run can happen, run against one Service.
type way struct {
	name string
	run  func(ctx context.Context, svc *endpoint.Service, d *dialect, s *spec, name string, r run) answer
}

// runReq runs r of the endpoint name with req's other fields.
func runReq(ctx context.Context, svc *endpoint.Service, s *spec, name string, r run, req endpoint.RunRequest) (*endpoint.RunResult, answer) {
	if req.Variables == nil && req.Fixed == nil {
		req.Variables = r.vars
	}
	if r.limit > 0 {
		req.Limit = &r.limit
	}
	res, err := svc.Run(ctx, "1", name, req)
	return res, marked(answerOf(s, res, err), res)
}

// marked turns an answer that shows a marker of project 2 into a failure.
func marked(a answer, res any) answer {
	if b, _ := json.Marshal(res); strings.Contains(string(b), marker) {
		a.err = "LEAK: the answer shows project 2's rows: " + short(string(b))
	}
	return a
}

var (
	computed = way{"computed", func(ctx context.Context, svc *endpoint.Service, _ *dialect, s *spec, name string, r run) answer {
		_, a := runReq(ctx, svc, s, name, r, endpoint.RunRequest{Refresh: endpoint.RefreshForce})
		return a
	}}
	cached = way{"cached", func(ctx context.Context, svc *endpoint.Service, _ *dialect, s *spec, name string, r run) answer {
		runReq(ctx, svc, s, name, r, endpoint.RunRequest{})
		res, a := runReq(ctx, svc, s, name, r, endpoint.RunRequest{})
		if a.err == "" && !res.IsCached {
			a.err = "not answered from the cache"
		}
		return a
	}}
	direct = way{"direct", func(ctx context.Context, svc *endpoint.Service, _ *dialect, s *spec, name string, r run) answer {
		_, a := runReq(ctx, svc, s, name, r, endpoint.RunRequest{Refresh: endpoint.RefreshDirect})
		return a
	}}
	token = way{"embed token", func(ctx context.Context, svc *endpoint.Service, _ *dialect, s *spec, name string, r run) answer {
		claims := &embed.Claims{Project: "1", Endpoints: []string{name}, Fixed: r.vars}
		_, a := runReq(ctx, svc, s, name, r, endpoint.RunRequest{Variables: map[string]any{}, Fixed: maps.Clone(r.vars), Token: claims})
		return a
	}}
	editor = way{"editor query", func(ctx context.Context, svc *endpoint.Service, d *dialect, s *spec, _ string, r run) answer {
		req := editorRequest(d, s, r)
		res, err := svc.RunQuery(ctx, "1", req)
		if err != nil {
			return answerOf(s, nil, err)
		}
		out := &endpoint.RunResult{Columns: res.Columns, Types: res.Types, Results: res.Results, HasMore: res.HasMore}
		return marked(answerOf(s, out, nil), res)
	}}
	inlineWays       = []way{computed, cached, token, editor, storedKey, viaMCP, viaMCPQuery, asCSV, asNDJSON, streamedCSV, streamedNDJSON, streamedParquet}
	materializedWays = []way{computed, cached, direct, token, storedKey, viaMCP, asCSV, asNDJSON, streamedCSV, streamedNDJSON, streamedParquet}
)

// editorRequest is r of s as the editor's query API takes it: the spec's
// SQL with its variables' values, or its insight query with r's values.
func editorRequest(d *dialect, s *spec, r run) endpoint.QueryRequest {
	req := endpoint.QueryRequest{Query: &endpoint.Query{Kind: s.kind}}
	if r.limit > 0 {
		req.Limit = &r.limit
	}
	if s.kind == endpoint.KindSQL {
		req.Query.SQL, req.Query.Variables = s.sql(d), refs(s.vars)
		for id, ref := range req.Query.Variables {
			if v, ok := r.vars[ref.CodeName]; ok {
				text, err := json.Marshal(v)
				if err != nil {
					panic(err)
				}
				ref.Value = text
			}
			req.Query.Variables[id] = ref
		}
	} else {
		req.Query.Insight, req.Variables = []byte(s.insight), r.vars
	}
	return req
}

// isolation is one engine's two databases: shared holds project 2's rows
// beside project 1's, alone project 1's only; the same fixture else.
type isolation struct {
	tg                  target
	shared, alone       map[storage]*endpoint.Service
	sharedDB, aloneDB   map[storage]demo.Loader
	cases, comparisons  int
	materialized, tails int
	// ways counts the comparisons of each way, by state and way.
	ways map[string]int
	// mu guards the counts, which the databases' specs add to at the same
	// time (isolation.specs).
	mu sync.Mutex
}

// count adds one to the count n, under iso.mu.
func (iso *isolation) count(n *int) {
	iso.mu.Lock()
	*n++
	iso.mu.Unlock()
}

// isolationEvents is the size of the demo data of the isolation matrix,
// the default run's with -tags long too, as analystIsolationEvents is: it
// compares two databases, a project's alone and beside another's rows,
// which the size does not change, and TestEquivalence sweeps the larger
// data. With -tags long the matrix takes every case, run and way instead
// of a sample; on 5,000 events it took most of CI's 'chdb long' step and
// ran past its timeout on a loaded machine.
const isolationEvents = 400

// TestIsolation is the isolation matrix: for every spec of the corpus that
// reads the events (a sample by default, all with -tags long) and every run
// of it, in each way a run can happen (computed, from the result cache,
// through an embed token, through the editor's query API, authenticated
// by a stored API key (keys_test.go), through the endpoint's MCP tool,
// answered in CSV and in NDJSON over HTTP (formats_test.go), streamed in
// CSV, NDJSON and Parquet as the engine reads the rows (refresh direct,
// Service.RunRows); materialized:
// on and off the buckets' boundaries as the corpus's values fall, computed,
// cached, direct, through a token and through its MCP tool; with a live tail and rows added
// after the refresh), project 1's answer holds no marker of project 2 and
// equals the answer on a database holding project 1's rows alone, on every
// engine that is up. A materialized read of a range off a bucket boundary
// read every project's rows from its partial buckets and its tail.
func TestIsolation(t *testing.T) {
	t.Parallel() // beside the other matrices: see engineParallel
	eachTarget(t, func(t *testing.T, ti int, tg target) {
		specs := isolationSpecs(ti, tg.env != "" || tg.direct != nil)
		iso := newIsolation(t, tg, specs, isolationEvents)
		iso.specs(t, specs)
		iso.tail(t, specs)
		iso.everyWay(t)
		t.Logf("%s: %d cases, %d comparisons (%d materialized, %d with a live tail)", tg.d.name, iso.cases, iso.comparisons, iso.materialized, iso.tails)
	})
}

// everyWay requires every way a run can happen to have been compared on
// the engine, inline and materialized: the default run compares some ways
// on a sample of the runs only (waysFor).
func (iso *isolation) everyWay(t *testing.T) {
	t.Helper()
	for state, ways := range map[string][]way{"inline": inlineWays, "materialized": materializedWays} {
		for _, w := range ways {
			assert.Positive(t, iso.ways[state+"/"+w.name], "%s: no %s run compared %s", iso.tg.name(), state, w.name)
		}
	}
}

// newIsolation opens tg's two databases for specs, each with events demo
// events of project 1.
func newIsolation(t *testing.T, tg target, specs []*spec, events int) *isolation {
	var used []storage
	for _, s := range specs {
		if !slices.Contains(used, s.storage) {
			used = append(used, s.storage)
		}
	}
	policy := isolationPolicy(t)
	other := otherProject(600, time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC), 3*time.Hour+37*time.Minute+13*time.Second, "")
	iso := &isolation{tg: tg, ways: map[string]int{}}
	iso.shared, iso.sharedDB = tg.servicesOf(t, used, fixture{demoEvents: events, events: other, access: policy, cache: true})
	iso.alone, iso.aloneDB = tg.servicesOf(t, used, fixture{demoEvents: events, access: policy, cache: true})
	return iso
}

// both creates (or updates) the endpoint on both Services.
func (iso *isolation) both(t *testing.T, s *spec, f func(svc *endpoint.Service) error) bool {
	t.Helper()
	for _, svc := range []*endpoint.Service{iso.shared[s.storage], iso.alone[s.storage]} {
		if err := f(svc); err != nil {
			t.Errorf("%s %s: %s", iso.tg.name(), s.name, describe(err))
			return false
		}
	}
	return true
}

// compare runs r in w on both Services and requires the same answer.
func (iso *isolation) compare(t *testing.T, s *spec, name string, i int, r run, w way, state string, wantRead bool) {
	t.Helper()
	ctx := context.Background()
	got := w.run(ctx, iso.shared[s.storage], iso.tg.d, s, name, r)
	want := w.run(ctx, iso.alone[s.storage], iso.tg.d, s, name, r)
	iso.mu.Lock()
	iso.comparisons++
	iso.ways[state+"/"+w.name]++
	iso.mu.Unlock()
	id := fmt.Sprintf("%s %s (%s, %s)", iso.tg.name(), caseID(s, i), state, w.name)
	switch {
	case strings.HasPrefix(got.err, "LEAK"):
		t.Errorf("%s: %s", id, got.err)
	case strings.HasPrefix(got.err, mismatch) || strings.HasPrefix(want.err, mismatch):
		t.Errorf("%s: %s / alone: %s", id, got.err, want.err)
	case got.err != want.err:
		t.Errorf("%s: error %q, alone %q", id, got.err, want.err)
	case got.materialized != want.materialized:
		t.Errorf("%s: endpoint_materialized %v, alone %v", id, got.materialized, want.materialized)
	case wantRead && w.name != editor.name && got.err == "" && !got.materialized:
		t.Errorf("%s: went inline where the stored table answers", id)
	default:
		d := diff(got, want)
		if d == "" {
			d = shapeDiff(got, want)
		}
		assert.Equal(t, "", d, "%s: differs from the database of project 1 alone", id)
	}
}

// specs runs iso.spec on each of specs (see each).
func (iso *isolation) specs(t *testing.T, specs []*spec) {
	iso.each(specs, func(s *spec) { iso.spec(t, s) })
}

// each calls f on each of specs: those of each database (of each storage
// on a server) specWorkers at a time on a server, in turn in the process
// (SQLite, chDB), the databases' at the same time, as runEngine does: on
// a server they mostly wait for it (MariaDB's DDL), not for the CPU. Each
// spec's endpoints are its own.
func (iso *isolation) each(specs []*spec, f func(s *spec)) {
	byDB := map[*endpoint.Service][]*spec{}
	for _, s := range specs {
		byDB[iso.shared[s.storage]] = append(byDB[iso.shared[s.storage]], s)
	}
	workers := 1
	if iso.tg.env != "" {
		workers = specWorkers
	}
	var wg sync.WaitGroup
	for _, group := range byDB {
		next := make(chan *spec)
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for s := range next {
					f(s)
				}
			}()
		}
		go func() {
			for _, s := range group {
				next <- s
			}
			close(next)
		}()
	}
	wg.Wait()
}

// specWorkers is how many specs of one database on a server the matrix
// runs at once: one at a time left the server mostly idle, waiting for
// each step's answer.
const specWorkers = 3

// spec runs every case of s in every way, inline and then materialized.
func (iso *isolation) spec(t *testing.T, s *spec) {
	ctx := context.Background()
	if !iso.both(t, s, func(svc *endpoint.Service) error {
		q := &endpoint.Query{Kind: s.kind}
		if s.kind == endpoint.KindSQL {
			q.SQL, q.Variables = s.sql(iso.tg.d), refs(s.vars)
		} else {
			q.Insight = []byte(s.insight)
		}
		_, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: s.name, Query: q})
		return err
	}) {
		return
	}
	for i, r := range s.runs {
		iso.count(&iso.cases)
		for _, w := range waysFor(inlineWays, s, i) {
			iso.compare(t, s, s.name, i, r, w, "inline", false)
		}
	}
	if !s.mat || !iso.materialize(t, s, s.name, "") {
		return
	}
	for i, r := range s.runs {
		if r.inlineOnly {
			continue
		}
		iso.count(&iso.materialized)
		for _, w := range waysFor(materializedWays, s, i) {
			iso.compare(t, s, s.name, i, r, w, "materialized", readsTable(iso.tg, s, r))
		}
	}
}

// materialize makes the endpoint name of s materialized (with a live tail
// on tail when not "") and refreshes it, on both Services.
func (iso *isolation) materialize(t *testing.T, s *spec, name, tail string) bool {
	ctx := context.Background()
	upd := s.materialized(tail)
	return iso.both(t, s, func(svc *endpoint.Service) error {
		if _, err := svc.Update(ctx, "1", name, upd); err != nil {
			return err
		}
		return svc.Materialize(ctx, "1", name)
	})
}

// tailSpecs are the materializable SQL specs over a date range, which a
// live tail serves.
func tailSpecs(specs []*spec) []*spec {
	var out []*spec
	for _, s := range specs {
		if s.kind == endpoint.KindSQL && s.mat && slices.Contains(s.vars, "from") {
			out = append(out, s)
		}
	}
	return out
}

// tail materializes each range spec again with a live tail on timestamp,
// adds rows after the refresh (project 1's to both databases, project 2's
// to the shared one), and compares runs whose range reaches past them.
func (iso *isolation) tail(t *testing.T, specs []*spec) {
	ctx := context.Background()
	var (
		mu    sync.Mutex
		ready []*spec
	)
	iso.each(tailSpecs(specs), func(s *spec) {
		name := s.name + "_tail"
		if !iso.both(t, s, func(svc *endpoint.Service) error {
			_, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: name, Query: &endpoint.Query{Kind: s.kind, SQL: s.sql(iso.tg.d), Variables: refs(s.vars)}})
			return err
		}) || !iso.materialize(t, s, name, "timestamp") {
			return
		}
		mu.Lock()
		ready = append(ready, s)
		mu.Unlock()
	})
	for st, db := range iso.sharedDB {
		if iso.tg.env == "" && st != asText {
			continue // SQLite: one database for every storage
		}
		require.NoError(t, insertEvents(ctx, db, iso.tg.d.e, append(lateRows("1"), lateRows("2")...)))
		require.NoError(t, insertEvents(ctx, iso.aloneDB[st], iso.tg.d.e, lateRows("1")))
	}
	iso.each(ready, func(s *spec) {
		for i, from := range []string{"2025-05-31T12:00:00Z", "2025-06-01", "2025-05-20 06:30:00"} {
			r := run{vars: map[string]any{"from": from}}
			for _, v := range s.vars {
				switch v {
				case "to":
					r.vars["to"] = "2025-06-20"
				case "text":
					r.vars["text"] = "Chrome"
				}
			}
			iso.count(&iso.tails)
			for _, w := range []way{computed, direct} {
				iso.compare(t, s, s.name+"_tail", 100+i, r, w, "live tail", false)
			}
		}
	})
}
