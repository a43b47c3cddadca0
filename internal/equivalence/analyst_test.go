package equivalence

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/materialize"
	"github.com/endpointkit/endpointkit/variable"
)

var update = flag.Bool("update", false, "rewrite testdata/analyst/verdicts.golden from the analyst corpus's verdicts")

// analystGolden is the file of the analyst corpus's expected verdicts.
var analystGolden = filepath.Join("testdata", "analyst", "verdicts.golden")

// minAnalyst is the least number of queries the analyst corpus holds.
const minAnalyst = 60

// dialects are the dialects an analyst query can be written for, by name.
var dialects = []*dialect{sqliteDialect, postgresDialect, mysqlDialect, clickhouseDialect}

// analyze is materialize's verdict on q written for d, with the corpus's
// variable types, as the Service takes it: again with the declared types
// of the fixture's columns (catalogTypes) when they decide a sum
// (materialize.Analysis.Untyped).
func analyze(q *analyst, d *dialect) (*materialize.Analysis, error) {
	opts := materialize.Options{Engine: d.e, Types: map[string]variable.Type{}}
	for _, v := range variables {
		opts.Types[v.CodeName] = v.Type
	}
	return analyzeTyped(q.sql(d), d, opts)
}

// analyzeTyped is materialize.Analyze of sql on d with opts, and again
// with the declared types of the tables it names in Analysis.Untyped, as
// the Service reads them from the engine's catalog.
func analyzeTyped(sql string, d *dialect, opts materialize.Options) (*materialize.Analysis, error) {
	a, err := materialize.Analyze(sql, opts)
	if err != nil || !a.Materializable() || len(a.Untyped) == 0 {
		return a, err
	}
	all := catalogTypes(d)
	opts.ColumnTypes = map[string]map[string]string{}
	for _, t := range a.Untyped {
		cols, ok := all[t.Name]
		if !ok {
			return nil, fmt.Errorf("the fixture declares no table %s", t.Name)
		}
		opts.ColumnTypes[t.Name] = cols
	}
	return materialize.Analyze(sql, opts)
}

// catalogTypes are the fixture's tables' columns on d with the types the
// engine's catalog names for them, as the Service reads them (a statement
// that reads no row; TestAnalystEquivalence checks that the Service's
// verdicts agree): the numbers' types, "" for the rest (a type that
// decides no sum). SQLite names no type for a view's expression.
func catalogTypes(d *dialect) map[string]map[string]string {
	integer, real, n := map[string]string{
		"sqlite": "INTEGER", "postgres": "INT8", "mysql": "BIGINT", "clickhouse": "Nullable(Int64)",
	}[d.name], map[string]string{
		"sqlite": "REAL", "postgres": "FLOAT8", "mysql": "DOUBLE", "clickhouse": "Nullable(Float64)",
	}[d.name], map[string]string{
		"sqlite": "", "postgres": "FLOAT8", "mysql": "DOUBLE", "clickhouse": "Nullable(Float64)",
	}[d.name]
	cols := func(names string, typed map[string]string) map[string]string {
		out := map[string]string{}
		for _, c := range strings.Fields(names) {
			out[c] = typed[c]
		}
		return out
	}
	return map[string]map[string]string{
		"events":   cols("project_id uuid event distinct_id timestamp properties", nil),
		"events_p": cols("project_id uuid event distinct_id timestamp country plan browser amount", map[string]string{"amount": n}),
		"items": cols("id name name_ci grp qty price flag ts_text ts tstz props day",
			map[string]string{"id": integer, "qty": integer, "price": real}),
		"items_j": cols("id grp qty ts_text plan n n_text s z b u sp c missing",
			map[string]string{"id": integer, "qty": integer, "n": n}),
	}
}

// verdictLine is the golden line of q's verdict on d.
func verdictLine(name string, q *analyst, a *materialize.Analysis) string {
	engines := "all"
	if q.engines != nil {
		engines = strings.Join(q.engines, ",")
	}
	verdict, code, reason := "materializes", "-", "-"
	if !a.Materializable() {
		verdict, code, reason = "refused", string(a.Reasons[0].Code), a.Reasons[0].Located()
	}
	return fmt.Sprintf("%s | %s | %s | %s | %s | %s", name, strings.Join(q.shapes, ", "), engines, verdict, code, strings.ReplaceAll(reason, "\n", " "))
}

// TestAnalystVerdicts: each query of the analyst corpus has the verdict
// testdata/analyst/verdicts.golden lists (its name, shapes, engines,
// verdict, the stable Code and the reason of a refusal), on every engine
// it is written for: a line per query with its first engine's verdict,
// and a line name@engine where another engine's differs. A verdict that
// changes fails until the golden is rewritten with -update. It logs the
// share of the corpus that materializes.
func TestAnalystVerdicts(t *testing.T) {
	qs := analystQueries()
	require.GreaterOrEqual(t, len(qs), minAnalyst, "the analyst corpus is too small")
	var lines []string
	names, mat := map[string]bool{}, 0
	for _, q := range qs {
		require.False(t, names[q.name], "two analyst queries are named %s", q.name)
		names[q.name] = true
		var first string
		for i, d := range dialects {
			if !q.runsOn(d.name) {
				continue
			}
			a, err := analyze(q, d)
			require.NoError(t, err, q.name)
			line := verdictLine(q.name, q, a)
			if first == "" {
				first = line
				lines = append(lines, line)
				if a.Materializable() {
					mat++
				}
				continue
			}
			if strings.SplitN(line, " | ", 2)[1] != strings.SplitN(first, " | ", 2)[1] {
				lines = append(lines, verdictLine(q.name+"@"+dialects[i].name, q, a))
			}
		}
	}
	got := "# name | shapes | engines | verdict | code | reason\n" + strings.Join(lines, "\n") + "\n"
	t.Logf("analyst corpus: %d of %d queries materialize (%.0f%%)", mat, len(qs), 100*float64(mat)/float64(len(qs)))
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(analystGolden), 0o755))
		require.NoError(t, os.WriteFile(analystGolden, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(analystGolden)
	require.NoError(t, err, "go test -run TestAnalystVerdicts -update writes it")
	assert.Equal(t, string(want), got, "a verdict of the analyst corpus changed; if on purpose, rewrite the golden with -update")
}

// analystSpecs are the analyst queries written for the engine of tg as
// corpus specs: mat where materialize says the query materializes there.
// The default run keeps the first two runs of each (on the buckets'
// boundaries and off them), and on a server or chDB one query in every
// (their DDL is slow: a MariaDB refresh takes half a second); -tags long
// runs every run, of every query on SQLite and of one in longEvery
// elsewhere.
func analystSpecs(t *testing.T, tg target, every, longEvery int) []*spec {
	t.Helper()
	var out []*spec
	// A server's or chDB's share: one query in every by default, one in
	// longEvery with -tags long; SQLite takes every query.
	step := 1
	if tg.env != "" || tg.direct != nil {
		step = every
		if long {
			step = longEvery
		}
	}
	only := analystOnly()
	for i, q := range analystQueries() {
		// A query written for some engines only runs on each of them.
		switch {
		case !q.runsOn(tg.d.name):
			continue
		case only != nil:
			if !only[q.name] {
				continue
			}
		case q.engines == nil && i%step != 0:
			continue
		}
		a, err := analyze(q, tg.d)
		require.NoError(t, err, q.name)
		s := &spec{name: "analyst_" + q.name, kind: endpoint.KindSQL, sql: q.sql, vars: q.vars, storage: q.storage,
			ordered: q.ordered, mat: a.Materializable(), runs: q.runsOf()}
		if s.storage == "" {
			s.storage = asText
		}
		if !long {
			// On a day's boundaries and off them.
			s.runs = s.runs[:min(2, len(s.runs))]
		}
		out = append(out, s)
	}
	return out
}

// analystOnly returns the names of the analyst queries that
// EK_ANALYST_ONLY lists (comma-separated), for a run targeted at them on
// every engine whatever its share; nil when it is not set.
func analystOnly() map[string]bool {
	env := os.Getenv("EK_ANALYST_ONLY")
	if env == "" {
		return nil
	}
	out := map[string]bool{}
	for _, name := range strings.Split(env, ",") {
		out[strings.TrimSpace(name)] = true
	}
	return out
}

// TestAnalystEquivalence runs the analyst corpus on every engine that is
// up (SQLite always; PostgreSQL, MariaDB and ClickHouse when their
// variables name them): every query answers inline on every engine it is
// written for, and every query that materializes answers each run
// materialized as it did inline (its rows, columns, types and JSON kinds,
// and from the result cache), read from the stored table where the plan
// says it can be, on and off the buckets' boundaries.
func TestAnalystEquivalence(t *testing.T) {
	t.Parallel() // beside the other matrices: see engineParallel
	eachTarget(t, func(t *testing.T, _ int, tg target) {
		if tg.kept && !long {
			t.Skip("SQLite on kept statements: -tags long")
		}
		// One query in two on a server or chDB with -tags long: all
		// of them, every run of each, on four engines ran the long
		// sweep past CI's time.
		specs := analystSpecs(t, tg, 3, 2)
		r := runEngine(t, tg, specs)
		checkAnalyst(t, specs, r)
	})
}

// checkAnalyst checks one engine's answers of the analyst corpus.
func checkAnalyst(t *testing.T, specs []*spec, r *engineRun) {
	t.Helper()
	cases, mats, reads := 0, 0, 0
	for _, s := range specs {
		read := false
		for i := range s.runs {
			id := caseID(s, i)
			o := r.outcomes[id]
			require.NotNil(t, o, id)
			cases++
			if !assert.Empty(t, o.inline.err, "%s on %s failed inline\nsql: %s", id, r.name, sqlOf(s, r.engine)) {
				continue
			}
			// The golden's verdict, taken with the fixture's declared
			// types (catalogTypes), is the Service's, taken with the
			// engine's catalog.
			assert.Equal(t, s.mat, o.canMaterialize, "%s on %s: the Service's verdict (%s) is not the analysis's", id, r.name, o.whyNot)
			checkCached(t, id, r.name, "inline", &o.inline, o.cached)
			if o.mat == nil {
				continue
			}
			d := diff(o.inline, *o.mat)
			if d == "" && o.mat.err == "" {
				d = shapeDiff(o.inline, *o.mat)
			}
			if !assert.Empty(t, d, "%s on %s: the materialized run differs from the inline run\nsql: %s", id, r.name, sqlOf(s, r.engine)) {
				continue
			}
			checkCached(t, id, r.name, "materialized", o.mat, o.matCached)
			assert.Equal(t, o.wantRead, o.mat.materialized, "%s on %s: endpoint_materialized after Materialize", id, r.name)
			if o.wantRead && o.mat.materialized {
				reads++
				read = true
			}
		}
		if s.mat {
			mats++
			assert.True(t, read, "%s on %s materializes, but no run read the stored table", s.name, r.name)
		}
	}
	t.Logf("engine=%s analyst_queries=%d materialized=%d cases=%d read_from_stored_table=%d", r.name, len(specs), mats, cases, reads)
}

// analystSample reports whether the analyst query of index i is in the
// isolation matrix: one in six by default, every one with -tags long.
func analystSample(i int) bool { return long || i%6 == 0 }

// analystIsolationEvents is the size of the demo data of the analyst
// isolation matrix, the default run's with -tags long too: it compares two
// databases, which the size does not change, and TestAnalystEquivalence
// sweeps the larger data; with 5,000 events a self join of events_p
// (analyst_users_two_browsers) ran past run_timeout on SQLite, every way a
// run happens repeating it.
const analystIsolationEvents = 400

// TestAnalystIsolation is the isolation matrix over the analyst corpus:
// on a database that also holds project 2's rows, project 1's runs of
// every analyst query (a sample by default, each with its first two runs)
// answer as on a database of project 1 alone, with no marker of project 2, in every way a run can
// happen, inline and (for the queries that materialize) materialized, on
// and off the buckets' boundaries, and with a live tail on the query's
// time column and rows added after the refresh.
func TestAnalystIsolation(t *testing.T) {
	t.Parallel() // beside the other matrices: see engineParallel
	eachTarget(t, func(t *testing.T, _ int, tg target) {
		if tg.kept && !long {
			t.Skip("SQLite on kept statements: -tags long")
		}
		var specs []*spec
		arbitrary := map[string]bool{}
		for _, q := range analystQueries() {
			arbitrary["analyst_"+q.name] = q.arbitrary
		}
		for i, s := range analystSpecs(t, tg, 4, 1) {
			if arbitrary[s.name] {
				continue // its rows are any the engine picks
			}
			if analystSample(i) && (long || tg.env == "" && tg.direct == nil || s.storage == asText) {
				// Two runs, on a bucket's boundaries and off them, even
				// with -tags long: every way a run happens repeats each
				// run (17 ways), and TestAnalystEquivalence runs every
				// value on every engine already; all of them here made
				// the long sweep run past go test's timeout.
				s.runs = s.runs[:min(2, len(s.runs))]
				specs = append(specs, s)
			}
		}
		iso := newIsolation(t, tg, specs, analystIsolationEvents)
		for _, s := range specs {
			iso.spec(t, s)
		}
		analystTail(t, iso, specs)
		t.Logf("%s: analyst corpus, %d cases, %d comparisons (%d materialized, %d with a live tail)", tg.d.name, iso.cases, iso.comparisons, iso.materialized, iso.tails)
	})
}

// analystTail is isolation.tail on the analyst specs, each materialized
// again with a live tail on its own time column (qualified in a join).
func analystTail(t *testing.T, iso *isolation, specs []*spec) {
	t.Helper()
	tails := map[string]string{}
	for _, q := range analystQueries() {
		tails["analyst_"+q.name] = q.tail
	}
	ctx := context.Background()
	var ready []*spec
	for _, s := range tailSpecs(specs) {
		name, col := s.name+"_tail", tails[s.name]
		switch col {
		case noTail:
			continue
		case "":
			col = "timestamp"
		}
		if !iso.both(t, s, func(svc *endpoint.Service) error {
			_, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: name, Query: &endpoint.Query{Kind: s.kind, SQL: s.sql(iso.tg.d), Variables: refs(s.vars)}})
			return err
		}) || !iso.materialize(t, s, name, col) {
			continue
		}
		ready = append(ready, s)
	}
	for st, db := range iso.sharedDB {
		if iso.tg.env == "" && st != asText {
			continue // SQLite: one database for every storage
		}
		require.NoError(t, insertEvents(ctx, db, iso.tg.d.e, append(lateRows("1"), lateRows("2")...)))
		require.NoError(t, insertEvents(ctx, iso.aloneDB[st], iso.tg.d.e, lateRows("1")))
	}
	for _, s := range ready {
		for i, from := range []string{"2025-05-31T12:00:00Z", "2025-06-01", "2025-05-20 06:30:00"} {
			r := run{vars: map[string]any{"from": from}}
			for _, v := range s.vars {
				if v == "to" {
					r.vars["to"] = "2025-06-20"
				} else if v != "from" {
					r.vars[v] = s.runs[0].vars[v]
				}
			}
			iso.tails++
			for _, w := range []way{computed, direct} {
				iso.compare(t, s, s.name+"_tail", 100+i, r, w, "live tail", false)
			}
		}
	}
}
