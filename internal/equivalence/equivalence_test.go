package equivalence

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/materialize"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// answer is what one run answered, normalized.
type answer struct {
	err     string
	columns []string
	rows    [][]any // SQL
	insight any     // insight results as JSON
	hasMore bool
	// kinds are the JSON types a client reads in each column (see
	// jsonKinds), which normalization does not show.
	kinds string
	// types are the answer's types (RunResult.Types), which a typed
	// client reads as the columns' types.
	types string
	// json is the results' JSON as a client reads it (see resultsJSON).
	json string
	// materialized is EndpointMaterialized, cached IsCached.
	materialized, cached bool
}

// outcome is what one case gave on one engine.
type outcome struct {
	inline answer
	// mat is the run after Materialize, nil when the case was not run
	// materialized; wantRead says whether it should have read the stored
	// table (the library may send a run inline: a date off its bucket).
	mat      *answer
	wantRead bool
	// cached and matCached are the same run asked again at once, which
	// the result cache answers, after inline and materialized.
	cached, matCached *answer
	// canMaterialize is the Service's verdict on the saved query, and
	// why not.
	canMaterialize bool
	whyNot         string
}

// engineRun is everything one engine answered.
type engineRun struct {
	// name is the target's (sqlite-kept for SQLite on kept statements),
	// engine its engine's.
	name, engine string
	outcomes     map[string]*outcome
}

// TestEquivalence runs the corpus on every engine that is available and
// requires: every case answers on SQLite; every other engine answers each
// case as SQLite does, unless the allow-list names the difference (which
// must then still occur); on every engine, each run of a materializable
// endpoint made after Materialize reads the stored table when the library
// says it can and answers as the inline run did.
func TestEquivalence(t *testing.T) {
	t.Parallel() // beside the other matrices: see engineParallel
	specs := corpus()
	require.GreaterOrEqual(t, countCases(specs), minCases, "the corpus has")
	var (
		mu   sync.Mutex
		runs []*engineRun
	)
	t.Run("engines", func(t *testing.T) {
		eachTarget(t, func(t *testing.T, _ int, tg target) {
			r := runEngine(t, tg, specs)
			mu.Lock()
			runs = append(runs, r)
			mu.Unlock()
		})
	})
	if t.Failed() {
		return
	}
	slices.SortFunc(runs, func(a, b *engineRun) int { return engineOrder(a.name) - engineOrder(b.name) })
	require.NotEmpty(t, runs, "SQLite did not run")
	require.Equal(t, "sqlite", runs[0].name, "SQLite did not run")
	compare(t, specs, runs)
}

// engineOf is the engine.Engine of the dialect named d, nil for none.
func engineOf(d string) engine.Engine {
	for _, tg := range targets {
		if tg.d.name == d {
			return tg.d.e
		}
	}
	return nil
}

func engineOrder(name string) int {
	return slices.IndexFunc(targets, func(tg target) bool { return tg.name() == name })
}

func countCases(specs []*spec) int {
	n := 0
	for _, s := range specs {
		n += len(s.runs)
	}
	return n
}

// runEngine saves every spec on the engine and runs its cases, inline and,
// where it can be materialized, again after Materialize. The specs of each
// database run at the same time as the other databases', which on a server
// mostly wait for it.
func runEngine(t *testing.T, tg target, specs []*spec) *engineRun {
	var used []storage
	for _, s := range specs {
		if !slices.Contains(used, s.storage) {
			used = append(used, s.storage)
		}
	}
	svcs := tg.services(t, used, demoEvents)
	bySvc := map[*endpoint.Service][]*spec{}
	for _, s := range specs {
		bySvc[svcs[s.storage]] = append(bySvc[svcs[s.storage]], s)
	}
	out := &engineRun{name: tg.name(), engine: tg.d.name, outcomes: map[string]*outcome{}}
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	for svc, group := range bySvc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, s := range group {
				got := runSpec(tg, svc, s)
				mu.Lock()
				maps.Copy(out.outcomes, got)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return out
}

// runSpec saves s on svc and runs its cases, by case id.
func runSpec(tg target, svc *endpoint.Service, s *spec) map[string]*outcome {
	ctx := context.Background()
	out := map[string]*outcome{}
	q := &endpoint.Query{Kind: s.kind}
	if s.kind == endpoint.KindSQL {
		q.SQL, q.Variables = s.sql(tg.d), refs(s.vars)
	} else {
		q.Insight = []byte(s.insight)
	}
	ep, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: s.name, Query: q})
	for i, r := range s.runs {
		o := &outcome{}
		out[caseID(s, i)] = o
		if err != nil {
			o.inline.err = "create: " + describe(err)
			continue
		}
		o.canMaterialize, o.whyNot = ep.Materialization.CanMaterialize, ep.Materialization.Reason
		o.inline = runOnce(ctx, svc, s, r, endpoint.RefreshForce)
		if s.kind == endpoint.KindSQL {
			c := runOnce(ctx, svc, s, r, endpoint.RefreshCache)
			o.cached = &c
		}
	}
	if err != nil || !s.mat {
		return out
	}
	if !ep.Materialization.CanMaterialize {
		for i := range s.runs {
			out[caseID(s, i)].mat = &answer{err: "cannot materialize: " + ep.Materialization.Reason}
		}
		return out
	}
	if _, err = svc.Update(ctx, "1", s.name, s.materialized("")); err == nil {
		err = svc.Materialize(ctx, "1", s.name)
	}
	for i, r := range s.runs {
		if r.inlineOnly {
			continue
		}
		o := out[caseID(s, i)]
		if err != nil {
			o.mat = &answer{err: "materialize: " + describe(err)}
			continue
		}
		a := runOnce(ctx, svc, s, r, endpoint.RefreshForce)
		o.mat, o.wantRead = &a, readsTable(tg, s, r)
		if s.kind == endpoint.KindSQL {
			c := runOnce(ctx, svc, s, r, endpoint.RefreshCache)
			o.matCached = &c
		}
	}
	return out
}

// runOnce runs case r of s in refresh mode refresh (force: computed now,
// and cached; cache: from the result cache when it holds the answer) and
// normalizes the answer.
func runOnce(ctx context.Context, svc *endpoint.Service, s *spec, r run, refresh string) answer {
	req := endpoint.RunRequest{Variables: r.vars, Refresh: refresh}
	if r.limit > 0 {
		req.Limit = &r.limit
	}
	res, err := svc.Run(ctx, "1", s.name, req)
	return answerOf(s, res, err)
}

// answerOf normalizes the answer of a run of s.
func answerOf(s *spec, res *endpoint.RunResult, err error) answer {
	if err != nil {
		return answer{err: describe(err)}
	}
	a := answer{columns: res.Columns, hasMore: res.HasMore, materialized: res.EndpointMaterialized, cached: res.IsCached}
	if s.kind == endpoint.KindSQL {
		// The JSON kinds as a client reads them; the rows of a cached
		// answer (its results are their JSON) decoded.
		text, err := resultsJSON(res)
		if err != nil {
			return answer{err: "JSON: " + err.Error()}
		}
		a.json = string(text)
		if a.kinds, err = jsonKinds(text); err != nil {
			return answer{err: "JSON: " + err.Error()}
		}
		rows, ok := res.Results.([][]any)
		if !ok {
			if rows, err = decodeResults(text); err != nil {
				return answer{err: "JSON: " + err.Error()}
			}
		}
		a.types = strings.Join(res.Types, ",")
		if a.rows, err = normalizeRows(res.Types, rows); err != nil {
			return answer{err: "normalize: " + err.Error()}
		}
		if !s.ordered {
			sortRows(a.rows)
		}
		return a
	}
	if a.insight, err = normalizeJSON(res.Results); err != nil {
		return answer{err: "normalize: " + err.Error()}
	}
	return a
}

// readsTable says whether a materialized run of r should read the stored
// table: always for an insight; for SQL, when the library's plan can
// answer the values exactly (materialize.Plan.Read), as the Service
// decides. The Service also goes inline when a read of the table fails on
// the database; this is what the check catches.
func readsTable(tg target, s *spec, r run) bool {
	if s.kind != endpoint.KindSQL {
		return true
	}
	opts := materialize.Options{Engine: tg.d.e, Types: map[string]variable.Type{}, Buckets: s.buckets}
	values := map[string]any{}
	for _, v := range variables {
		raw, ok := r.vars[v.CodeName]
		if !ok {
			continue
		}
		opts.Types[v.CodeName] = v.Type
		val, err := v.Coerce(raw, now)
		if err != nil {
			return false
		}
		values[v.CodeName] = val
	}
	a, err := materialize.Analyze(s.sql(tg.d), opts)
	if err != nil || a.Plan == nil {
		return false
	}
	_, _, err = a.Plan.Read("t", values)
	return err == nil
}

// describe gives an error with its cause, which the Service keeps out of
// the message a client reads.
func describe(err error) string {
	var e *endpoint.Error
	if errors.As(err, &e) && e.Err != nil {
		return e.Error() + ": " + e.Err.Error()
	}
	return err.Error()
}

// compare checks the answers of every engine against SQLite's and the
// allow-list, and logs one line per engine.
func compare(t *testing.T, specs []*spec, runs []*engineRun) {
	ref := runs[0]
	needed := map[*difference]map[string]bool{} // the entries a difference used, by engine
	use := func(l *difference, engineName string) {
		if needed[l] == nil {
			needed[l] = map[string]bool{}
		}
		needed[l][engineName] = true
	}
	for _, r := range runs {
		cases, equal, matEqual, listedN := 0, 0, 0, 0
		for _, s := range specs {
			for i := range s.runs {
				id := caseID(s, i)
				o := r.outcomes[id]
				if o == nil {
					continue
				}
				cases++
				if o.inline.err != "" && r == ref {
					t.Errorf("%s on sqlite failed: %s", id, o.inline.err)
					continue
				}
				if d := diff(ref.outcomes[id].inline, o.inline); d == "" {
					equal++
				} else if l, ok := listedFor(crossEngine, s.name, id, r.name); ok {
					use(l, r.name)
					listedN++
				} else {
					t.Errorf("%s differs on %s from sqlite (not listed in docs/engines.md):\n%s\nsql: %s",
						id, r.name, d, sqlOf(s, r.name))
				}
				for _, a := range []*answer{&o.inline, o.cached, o.mat, o.matCached} {
					if a == nil {
						continue
					}
					if m := mixedKinds(*a, engineOf(r.engine)); m != "" {
						t.Errorf("%s on %s: %s\nsql: %s", id, r.name, m, sqlOf(s, r.name))
					}
				}
				checkCached(t, id, r.name, "inline", &o.inline, o.cached)
				if o.mat == nil {
					continue
				}
				checkCached(t, id, r.name, "materialized", o.mat, o.matCached)
				d := diff(o.inline, *o.mat)
				if d == "" && o.mat.err == "" {
					d = shapeDiff(o.inline, *o.mat)
				}
				if d != "" {
					if l, ok := listedFor(storedValues, s.name, id, r.name); ok {
						use(l, r.name)
						continue
					}
					t.Errorf("%s on %s: the materialized run differs from the inline run (not listed in docs/engines.md):\n%s\nsql: %s",
						id, r.name, d, sqlOf(s, r.name))
					continue
				}
				switch {
				case o.mat.materialized != o.wantRead:
					t.Errorf("%s on %s: endpoint_materialized = %v after Materialize, want %v", id, r.name, o.mat.materialized, o.wantRead)
				case o.wantRead:
					matEqual++
				}
			}
		}
		checkEmptyTypes(t, specs, r)
		t.Logf("engine=%s cases=%d equal=%d materialized_equal=%d", r.name, cases, equal, matEqual)
		if listedN > 0 {
			t.Logf("engine=%s listed_differences=%d (docs/engines.md)", r.name, listedN)
		}
	}
	// Every allow-list entry must still be needed on every engine it names
	// that ran a case it covers.
	for _, r := range runs[1:] {
		for i := range listed {
			l := &listed[i]
			if !slices.Contains(l.engines, r.name) || !covered(specs, r, l) {
				continue
			}
			assert.True(t, needed[l][r.name], "allow-list entry %s on %s is no longer needed: the engine answers as it should; remove it here and in docs/engines.md", l.id, r.name)
		}
	}
}

// shapeDiff describes how the types and JSON kinds of b differ from a's,
// "" when they are the same: two answers of one version on one engine
// type their columns alike, and write each column's values as one JSON
// kind.
func shapeDiff(a, b answer) string {
	switch {
	case a.err != "" || b.err != "":
	case a.types != b.types:
		return fmt.Sprintf("types %q versus %q", a.types, b.types)
	case a.kinds != b.kinds:
		return fmt.Sprintf("JSON kinds %q versus %q", a.kinds, b.kinds)
	}
	return ""
}

// mixedKinds names a column of a whose values are of more than one JSON
// kind though its type has a kind (endpoint.ColumnKindOf on engine e):
// "" when there is none. A column of a type of no
// kind (SQLite's json_extract, whose type is its values') may mix them.
func mixedKinds(a answer, e engine.Engine) string {
	if a.err != "" || a.kinds == "" {
		return ""
	}
	types := strings.Split(a.types, ",")
	for i, k := range strings.Split(a.kinds, ",") {
		if len(k) > 1 && i < len(types) && endpoint.ColumnKindOf(e, types[i]) != endpoint.KindOther {
			return fmt.Sprintf("column %q of type %s has values of JSON kinds %q", a.columns[i], types[i], k)
		}
	}
	return ""
}

// checkCached requires the cached answer c of a run (the same request
// again, at once) to be the answer a it repeats, from the cache: its
// columns, types, JSON kinds and results' JSON (the cache holds an
// answer's JSON, whose times are RFC 3339 text).
func checkCached(t *testing.T, id, engineName, state string, a, c *answer) {
	t.Helper()
	if c == nil || a.err != "" {
		return
	}
	d := shapeDiff(*a, *c)
	switch {
	case c.err != "" || d != "":
	case !slices.Equal(a.columns, c.columns):
		d = fmt.Sprintf("columns %q versus %q", a.columns, c.columns)
	case a.hasMore != c.hasMore:
		d = fmt.Sprintf("hasMore %v versus %v", a.hasMore, c.hasMore)
	case a.json != c.json:
		d = fmt.Sprintf("results %s\nversus %s", short(a.json), short(c.json))
	}
	switch {
	case c.err != "":
		t.Errorf("%s on %s (%s): the cached run failed: %s", id, engineName, state, c.err)
	case !c.cached:
		t.Errorf("%s on %s (%s): the run asked again was not answered from the cache", id, engineName, state)
	case d != "":
		t.Errorf("%s on %s (%s): the cached answer differs from the computed one: %s", id, engineName, state, d)
	}
}

// checkEmptyTypes: an answer without rows has the columns and types of
// an answer of the same endpoint with rows, inline and materialized, on
// every engine: they are the version's. (SQLite types an expression by its
// values only: the version types those whose type SQLite fixes, count(*)
// INTEGER, and leaves the others "", with rows and without.)
func checkEmptyTypes(t *testing.T, specs []*spec, r *engineRun) {
	t.Helper()
	compared := 0
	defer func() { t.Logf("engine=%s empty_answers_compared=%d", r.name, compared) }()
	for _, s := range specs {
		if s.kind != endpoint.KindSQL {
			continue
		}
		for _, stored := range []bool{false, true} {
			var full, empty, fullCols, emptyCols []string
			var fullID, emptyID string
			for i := range s.runs {
				o := r.outcomes[caseID(s, i)]
				if o == nil {
					continue
				}
				a := &o.inline
				if stored {
					a = o.mat
				}
				if a == nil || a.err != "" {
					continue
				}
				types := strings.Split(a.types, ",")
				if len(a.rows) > 0 && full == nil {
					full, fullCols, fullID = types, a.columns, caseID(s, i)
				} else if len(a.rows) == 0 && empty == nil {
					empty, emptyCols, emptyID = types, a.columns, caseID(s, i)
				}
			}
			if full == nil || empty == nil {
				continue
			}
			compared++
			if assert.True(t, slices.Equal(empty, full), "%s on %s (stored: %v): columns %q types %q without rows, %q %q with rows (%s)", emptyID, r.name, stored, emptyCols, empty, fullCols, full, fullID) {
				assert.True(t, slices.Equal(emptyCols, fullCols), "%s on %s (stored: %v): columns %q types %q without rows, %q %q with rows (%s)", emptyID, r.name, stored, emptyCols, empty, fullCols, full, fullID)
			}
		}
	}
}

// covered reports whether engine run r ran a case that entry l covers
// (materialized, for an entry about stored runs).
func covered(specs []*spec, r *engineRun, l *difference) bool {
	for _, s := range specs {
		for i := range s.runs {
			o := r.outcomes[caseID(s, i)]
			if matches(l.id, s.name, caseID(s, i)) && o != nil && (l.of == crossEngine || o.mat != nil) {
				return true
			}
		}
	}
	return false
}

// diff describes how b differs from a, "" when they are the same.
func diff(a, b answer) string {
	switch {
	case a.err != "" || b.err != "":
		if a.err != "" && b.err != "" {
			return ""
		}
		return fmt.Sprintf("error: %q\nversus:  %q", a.err, b.err)
	case !slices.Equal(a.columns, b.columns):
		return fmt.Sprintf("columns %q\nversus   %q", a.columns, b.columns)
	case a.hasMore != b.hasMore:
		return fmt.Sprintf("hasMore %v versus %v", a.hasMore, b.hasMore)
	case a.insight != nil || b.insight != nil:
		if !same(a.insight, b.insight) {
			return fmt.Sprintf("results %s\nversus   %s", short(a.insight), short(b.insight))
		}
	case !same(a.rows, b.rows):
		return fmt.Sprintf("rows %s\nversus %s", short(a.rows), short(b.rows))
	}
	return ""
}

func short(v any) string {
	s := fmt.Sprintf("%v", v)
	if len(s) > 1500 {
		return s[:1500] + "..."
	}
	return strings.ReplaceAll(s, "\n", " ")
}

// sqlOf is the SQL of a SQL spec on the named engine, for messages.
func sqlOf(s *spec, engineName string) string {
	if s.kind != endpoint.KindSQL {
		return s.insight
	}
	for _, tg := range targets {
		if tg.d.name == engineName {
			return s.sql(tg.d)
		}
	}
	return ""
}

// materialized is the update that materializes s's endpoint with its
// buckets and optional breakdowns, and a live tail on tail when not "".
func (s *spec) materialized(tail string) endpoint.UpdateRequest {
	yes := true
	upd := endpoint.UpdateRequest{IsMaterialized: &yes}
	if s.buckets != nil {
		upd.MaterializationBuckets = &s.buckets
	}
	if s.optional != nil {
		upd.OptionalBreakdowns = &s.optional
	}
	if tail != "" {
		upd.MaterializationTail = &tail
	}
	return upd
}
