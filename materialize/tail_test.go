package materialize

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/require"
)

// TestTailEqualsInline: with a live tail, the stored table keeps the rows
// up to its build instant and every read adds the newer ones from the
// source, so a read equals the inline query although the table is older
// than the data: here the table is built as of 5 days before the demo's
// end, and rows are inserted after the build too. Without the tail the
// same reads miss those rows, which shows the comparison can fail.
func TestTailEqualsInline(t *testing.T) {
	skipUnderRace(t)
	t.Parallel() // a database of its own: the sweeps share the CPUs
	db := openDemo(t, 8000)
	builtAt := demo.End.AddDate(0, 0, -5).Add(7*time.Hour + 30*time.Minute)
	shapes := []shape{
		{name: "daily_distinct_by_property", query: `SELECT date(timestamp) AS day, count(DISTINCT distinct_id) AS users, count(*) AS n
			FROM events WHERE json_extract(properties, '$.country') = {variables.country}
			AND timestamp >= {variables.date_from} AND timestamp < {variables.date_to} GROUP BY day ORDER BY day`,
			dates: []string{"date_from", "date_to"}, values: func(p *pools) map[string]any {
				v := rangeValues(p)
				v["country"] = p.country()
				return v
			}},
		// The ends bucketed by day and by month: the stored rows before
		// the build instant's day or month are groups of their own.
		{name: "daily_distinct_day_and_month_ends", query: `SELECT date(timestamp) AS day, count(DISTINCT distinct_id) AS users
			FROM events WHERE timestamp >= {variables.date_from} AND timestamp < {variables.date_to} GROUP BY day ORDER BY day`,
			dates: []string{"date_from", "date_to"}, bkts: map[string]engine.Bucket{"date_to": engine.Month}, values: func(p *pools) map[string]any {
				v := map[string]any{"date_from": p.date(engine.Day), "date_to": p.date(engine.Month)}
				if p.rng.IntN(2) == 0 { // past the rows that arrive after the build
					v["date_to"] = variable.Timestamp{Time: demo.End.AddDate(0, 1, 0)}
				}
				return v
			}},
		{name: "cte_union_all_range", query: `WITH u AS (SELECT timestamp, distinct_id, event FROM events
			WHERE event = '$pageview' AND timestamp >= {variables.date_from} AND timestamp < {variables.date_to}
			UNION ALL SELECT timestamp, distinct_id, 'bought' FROM events
			WHERE event = 'purchase' AND timestamp >= {variables.date_from} AND timestamp < {variables.date_to})
			SELECT event, count(*) AS n, count(DISTINCT distinct_id) AS users FROM u GROUP BY event ORDER BY event`,
			dates: []string{"date_from", "date_to"}, values: func(p *pools) map[string]any {
				v := rangeValues(p)
				if p.rng.IntN(2) == 0 { // past the rows that arrive after the build
					v["date_to"] = variable.Timestamp{Time: demo.End.AddDate(0, 1, 0)}
				}
				return v
			}},
		{name: "nested_per_user_range", query: `WITH per_user AS (SELECT distinct_id, count(*) AS n, max(timestamp) AS last FROM events
			WHERE timestamp >= {variables.date_from} AND timestamp < {variables.date_to} GROUP BY distinct_id)
			SELECT count(*) AS users, sum(n) AS events, max(n) AS most, max(last) AS last FROM per_user`,
			dates: []string{"date_from", "date_to"}, values: func(p *pools) map[string]any {
				v := rangeValues(p)
				if p.rng.IntN(2) == 0 { // past the rows that arrive after the build
					v["date_to"] = variable.Timestamp{Time: demo.End.AddDate(0, 1, 0)}
				}
				return v
			}},
		{name: "nested_chain_histogram", query: `WITH per_user AS (SELECT distinct_id, count(*) AS n FROM events
			WHERE event IN {variables.events} GROUP BY distinct_id),
			histogram AS (SELECT n, count(*) AS users FROM per_user GROUP BY n)
			SELECT n, users FROM histogram ORDER BY n`,
			values: func(p *pools) map[string]any { return map[string]any{"events": p.events()} }},
		{name: "window_rolling_7d_daily", query: `SELECT date(timestamp) AS day, count(*) AS n,
			sum(count(*)) OVER (ORDER BY date(timestamp) ROWS BETWEEN 6 PRECEDING AND CURRENT ROW) AS n_7d
			FROM events WHERE timestamp >= {variables.date_from} GROUP BY date(timestamp) ORDER BY day`,
			dates: []string{"date_from"}, values: func(p *pools) map[string]any { return map[string]any{"date_from": p.date(engine.Day)} }},
		{name: "not_equal_event_range", sampled: true, query: `SELECT event, count(*) AS n, count(DISTINCT distinct_id) AS users FROM events
			WHERE event != {variables.event} AND timestamp >= {variables.date_from} GROUP BY event ORDER BY event`,
			dates: []string{"date_from"}, values: func(p *pools) map[string]any {
				return map[string]any{"event": p.event(), "date_from": p.date(engine.Day)}
			}},
		{name: "not_like_not_in_ungrouped", sampled: true, query: `SELECT count(*) AS n, max(timestamp) AS last FROM events
			WHERE json_extract(properties, '$.country') NOT LIKE {variables.pattern} AND event NOT IN {variables.events}`,
			values: func(p *pools) map[string]any { return map[string]any{"pattern": p.pattern(), "events": p.events()} }},
		{name: "having_and_case_variables", sampled: true, query: `SELECT CASE WHEN event = {variables.event} THEN 'it' ELSE 'other' END AS kind,
			count(*) AS n, max(timestamp) AS last FROM events WHERE timestamp >= {variables.date_from}
			GROUP BY kind HAVING count(*) > {variables.min_n} ORDER BY kind`,
			dates: []string{"date_from"}, values: func(p *pools) map[string]any {
				return map[string]any{"event": p.event(), "date_from": p.date(engine.Day), "min_n": int64(p.rng.IntN(3000))}
			}},
		{name: "window_over_rows_in_cte", sampled: true, query: `WITH ordered AS (SELECT distinct_id, timestamp,
			row_number() OVER (PARTITION BY distinct_id ORDER BY timestamp DESC, uuid) AS k FROM events
			WHERE timestamp >= {variables.date_from})
			SELECT distinct_id, timestamp FROM ordered WHERE k = 1 ORDER BY distinct_id`,
			dates: []string{"date_from"}, values: func(p *pools) map[string]any { return map[string]any{"date_from": p.date(engine.Day)} }},
		{name: "like_escape_key", query: `SELECT event, count(*) AS n, max(timestamp) AS last FROM events
			WHERE event LIKE {variables.pattern} ESCAPE '!' AND timestamp >= {variables.date_from} GROUP BY event ORDER BY event`,
			dates: []string{"date_from"}, values: escapeValues},
		{name: "variable_in_plain_select", query: `SELECT uuid, {variables.event} AS asked,
			CASE WHEN event = {variables.event} THEN 1 ELSE 0 END AS hit, timestamp FROM events
			WHERE distinct_id = {variables.user} ORDER BY timestamp, uuid`,
			values: func(p *pools) map[string]any { return map[string]any{"event": p.event(), "user": p.user()} }},
		{name: "events_of_list", query: `SELECT event, count(*) AS n, max(timestamp) AS last FROM events
			WHERE event IN {variables.events} GROUP BY event ORDER BY event`,
			values: func(p *pools) map[string]any { return map[string]any{"events": p.events()} }},
		{name: "rows_of_user", query: `SELECT uuid, event, timestamp FROM events WHERE distinct_id = {variables.user}
			ORDER BY timestamp DESC, uuid LIMIT 7`,
			values: func(p *pools) map[string]any { return map[string]any{"user": p.user()} }},
	}
	p := demoPools(t, db, 11, 11)
	type built struct {
		tail, plain *Plan
		shape       shape
	}
	var plans []built
	for i, s := range shapes {
		opts := s.options()
		opts.TailColumn = "timestamp"
		tail := mustPlan(t, s.query, opts)
		require.True(t, tail.Tail(), "tail.Tail() is false")
		opts.TailColumn = ""
		plain := mustPlan(t, s.query, opts)
		require.False(t, plain.Tail(), "plain.Tail() is true")
		for _, pl := range []struct {
			plan  *Plan
			table string
		}{{tail, fmt.Sprintf("tail_%d", i)}, {plain, fmt.Sprintf("plain_%d", i)}} {
			buildAt(t, db, pl.plan, pl.table, builtAt)
		}
		plans = append(plans, built{tail, plain, s})
	}
	insertLate(t, db)
	late := query(t, db, "SELECT DISTINCT distinct_id FROM events WHERE uuid LIKE '%-late' ORDER BY distinct_id LIMIT 20", nil)
	for _, r := range late.rows {
		p.users = append(p.users, r[0].(string))
	}

	for i, b := range plans {
		t.Run(b.shape.name, func(t *testing.T) {
			tpl, err := placeholder.Compile(b.shape.query)
			require.NoError(t, err)
			differs := 0
			runs := 40
			if b.shape.sampled && !long {
				runs = sampledRuns
			}
			for range runs {
				values := b.shape.values(p)
				q, args, err := tpl.Render(engine.SQLite, values)
				require.NoError(t, err)
				want := query(t, db, q, args)
				rq, got := readTail(t, db, b.tail, fmt.Sprintf("tail_%d", i), values, builtAt)
				if got, want := got.rows, want.rows; !reflect.DeepEqual(got, want) {
					t.Fatalf("values %v\ninline: %s\nread: %s: got.rows = %+v, want %+v", values, q, rq, got, want)
				}
				pq, pargs, err := b.plain.Read(fmt.Sprintf("plain_%d", i), values)
				require.NoError(t, err)
				if stale := query(t, db, pq, pargs); fmt.Sprint(stale.rows) != fmt.Sprint(want.rows) {
					differs++
				}
			}
			a, b := differs, 0
			require.True(t, (a > b), "the stored table without a tail never missed a newer row: the test shows nothing: differs = %v, want > %v", a, b)
		})
	}
	// A read of a tail plan needs the build instant.
	list := slices.IndexFunc(plans, func(b built) bool { return b.shape.name == "events_of_list" })
	_, _, err := plans[list].tail.Read(fmt.Sprintf("tail_%d", list), map[string]any{"events": []string{"purchase"}})
	require.ErrorIs(t, err, ErrInvalidValue)
	require.ErrorContains(t, err, BuiltAtVariable)
	_, err = Analyze("SELECT count(*) FROM events WHERE event = {variables.e}", Options{Engine: engine.SQLite, TailColumn: "a b"})
	require.ErrorIs(t, err, ErrInvalidOptions)
}

// buildAt runs plan's refresh into table on db as of builtAt, the build
// instant bound where the pre-compute query names it.
func buildAt(t *testing.T, db *sql.DB, plan *Plan, table string, builtAt time.Time) {
	t.Helper()
	r, err := plan.Refresh(table)
	require.NoError(t, err)
	for _, st := range r.Statements() {
		tpl, err := placeholder.Compile(st)
		require.NoError(t, err)
		q, args, err := tpl.Render(engine.SQLite, map[string]any{BuiltAtVariable: variable.Timestamp{Time: builtAt}})
		require.NoError(t, err)
		_, err = db.Exec(q, args...)
		require.NoError(t, err, "%v", q)
	}
}

// insertLate adds 300 rows arriving after every build, a day past the
// demo's last: what a tail must read from the source.
func insertLate(t *testing.T, db *sql.DB) {
	t.Helper()
	_, err := db.Exec(`INSERT INTO events (uuid, event, distinct_id, timestamp, properties)
		SELECT uuid || '-late', event, distinct_id, datetime(timestamp, '+1 day'), properties FROM events
		WHERE timestamp >= ? ORDER BY uuid LIMIT 300`, demo.End.AddDate(0, 0, -1).Format(demo.TimeLayout))
	require.NoError(t, err)
}

// readTail reads the tail plan's table with values and the build instant:
// the read's SQL and its answer.
func readTail(t *testing.T, db *sql.DB, plan *Plan, table string, values map[string]any, builtAt time.Time) (string, result) {
	t.Helper()
	withAt := map[string]any{BuiltAtVariable: builtAt}
	for k, v := range values {
		withAt[k] = v
	}
	rq, rargs, err := plan.Read(table, withAt)
	require.NoError(t, err)
	return rq, query(t, db, rq, rargs)
}

// demoPools are the pools of values that draw from a PCG of seed1 and
// seed2, their users the first 40 of db's demo events.
func demoPools(t *testing.T, db *sql.DB, seed1, seed2 uint64) *pools {
	t.Helper()
	p := &pools{rng: rand.New(rand.NewPCG(seed1, seed2))}
	for _, r := range query(t, db, "SELECT DISTINCT distinct_id FROM events ORDER BY distinct_id LIMIT 40", nil).rows {
		p.users = append(p.users, r[0].(string))
	}
	return p
}
