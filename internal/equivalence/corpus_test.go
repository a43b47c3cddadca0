package equivalence

import (
	"fmt"
	"strings"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
)

// spec is one endpoint of the corpus, saved on every engine, and the runs
// made of it: each run is a case.
type spec struct {
	// name is the endpoint's name; a case is name#i.
	name string
	kind string // endpoint.KindSQL, KindTrends, KindRetention or KindLifecycle
	// sql writes the query in an engine's dialect: shared text, with
	// engine syntax (JSON access) from the dialect.
	sql func(d *dialect) string
	// vars are the code names of the variables the SQL uses.
	vars []string
	// insight is the JSON of an insight query.
	insight string
	// storage picks the database (events timestamps) on the servers.
	storage storage
	// ordered: the query's ORDER BY is total, so row order is compared;
	// otherwise rows are compared as a multiset.
	ordered bool
	// mat: the endpoint can be materialized on every engine; its runs are
	// then repeated on the stored table.
	mat     bool
	buckets map[string]engine.Bucket
	// optional are the breakdown properties a materialized insight run
	// may omit.
	optional []string
	runs     []run
}

// run is one case: a run of a spec's endpoint.
type run struct {
	vars  map[string]any
	limit int // 0: the Service's default
	// inlineOnly: a materialized endpoint refuses the run (an insight's
	// date variables), so it is compared inline only.
	inlineOnly bool
}

// caseID names run i of s, as docs/engines.md and the allow-list do.
func caseID(s *spec, i int) string { return fmt.Sprintf("%s#%d", s.name, i) }

// The variables of the corpus, one of each type (two of some), created in
// every Service with these ids.
var variables = []variable.Variable{
	{ID: "00000000-0000-4000-8000-000000000001", Name: "text", CodeName: "text", Type: variable.String},
	{ID: "00000000-0000-4000-8000-000000000002", Name: "text2", CodeName: "text2", Type: variable.String},
	{ID: "00000000-0000-4000-8000-000000000003", Name: "num", CodeName: "num", Type: variable.Number},
	{ID: "00000000-0000-4000-8000-000000000004", Name: "flag", CodeName: "flag", Type: variable.Boolean},
	{ID: "00000000-0000-4000-8000-000000000005", Name: "from", CodeName: "from", Type: variable.Date},
	{ID: "00000000-0000-4000-8000-000000000006", Name: "to", CodeName: "to", Type: variable.Date},
	{ID: "00000000-0000-4000-8000-000000000007", Name: "at", CodeName: "at", Type: variable.Date},
	{ID: "00000000-0000-4000-8000-000000000008", Name: "grp", CodeName: "grp", Type: variable.List,
		Values: []string{"w", "x", "y", "z", "q"}},
	{ID: "00000000-0000-4000-8000-000000000009", Name: "names", CodeName: "names", Type: variable.List, IsMulti: true,
		Values: []string{"apple", "Apple", "apple ", "APPLE", "ñandú", "café", "Café", "pear", "Pear", "pear  ", "Ünïcode", "it's", "zeta", "nothing"}},
	{ID: "00000000-0000-4000-8000-000000000010", Name: "user", CodeName: "user", Type: variable.String},
	{ID: "00000000-0000-4000-8000-000000000011", Name: "countries", CodeName: "countries", Type: variable.List, IsMulti: true,
		Values: []string{"US", "us", "DE", "GB", "FR", "JP", "ZZ"}},
}

// refs are the query variables of a SQL endpoint using the code names.
func refs(names []string) map[string]endpoint.VariableRef {
	m := map[string]endpoint.VariableRef{}
	for _, n := range names {
		for _, v := range variables {
			if v.CodeName == n {
				m[v.ID] = endpoint.VariableRef{VariableID: v.ID, CodeName: n}
			}
		}
	}
	return m
}

// shared returns a dialect-free query.
func shared(q string) func(*dialect) string { return func(*dialect) string { return q } }

// values builds runs of one variable.
func values(name string, vs ...any) []run {
	runs := make([]run, len(vs))
	for i, v := range vs {
		runs[i] = run{vars: map[string]any{name: v}}
	}
	return runs
}

// ranges builds runs of the from and to variables.
func ranges(pairs ...[2]string) []run {
	runs := make([]run, len(pairs))
	for i, p := range pairs {
		runs[i] = run{vars: map[string]any{"from": p[0], "to": p[1]}}
	}
	return runs
}

// dateRanges are the date ranges the corpus runs: dates, date-times, on
// and off every bucket's boundaries, in other zones, relative to now.
var dateRanges = [][2]string{
	{"2025-05-01", "2025-05-08"},
	{"2025-04-28", "2025-05-05"}, // Monday to Monday
	{"2025-05-01 00:00:00", "2025-05-05 00:00:00"},
	{"2025-05-01 00:00:01", "2025-05-05 12:30:00"},
	{"2025-04-30T23:59:59", "2025-05-01T00:00:01"},
	{"2025-05-01T02:00:00+02:00", "2025-05-06T00:00:00Z"}, // midnight UTC, written in another zone
	{"2025-05-01T05:30:00+05:30", "2025-05-12T00:00:00-07:00"},
	{"2025-04-01", "2025-06-01"},
	{"2025-05-05 10:00:00", "2025-05-05 10:00:00"}, // empty
	{"-35d", "-1d"},
	{"-1mStart", "mStart"},
	{"2025-05-01 00:00:00", "2025-05-01 01:00:00"},
}

// itemNames are the String values compared with the items' names.
var itemNames = []any{"apple", "Apple", "apple ", "APPLE", "ñandú", "café", "Café", "", "it's", "a%b", "Ünïcode", "pear", "pear  ", "nothing"}

// sqlSpecs are the SQL endpoints.
func sqlSpecs() []*spec {
	var specs []*spec
	add := func(s *spec) {
		s.kind = endpoint.KindSQL
		if s.storage == "" {
			s.storage = asText
		}
		specs = append(specs, s)
	}

	// Text: equality, ranges, LIKE, IN lists, on byte-comparing columns
	// and (listed differences) on MariaDB's default collation.
	add(&spec{name: "text_eq", vars: []string{"text"}, ordered: true, mat: true,
		sql:  shared(`SELECT id, name FROM items WHERE name = {variables.text} ORDER BY id`),
		runs: values("text", itemNames...)})
	add(&spec{name: "text_eq_default_collation", vars: []string{"text"}, ordered: true, mat: true,
		sql:  shared(`SELECT id, name_ci AS name FROM items WHERE name_ci = {variables.text} ORDER BY id`),
		runs: values("text", "apple", "café", "pear", "zeta")})
	add(&spec{name: "text_range", vars: []string{"text", "text2"}, ordered: true, mat: true,
		sql: shared(`SELECT id, name FROM items WHERE name >= {variables.text} AND name < {variables.text2} ORDER BY id`),
		runs: []run{
			{vars: map[string]any{"text": "a", "text2": "b"}},
			{vars: map[string]any{"text": "A", "text2": "a"}},
			{vars: map[string]any{"text": "apple", "text2": "apple!"}},
			{vars: map[string]any{"text": "", "text2": "a"}},
			{vars: map[string]any{"text": "pear", "text2": "pear!"}},
			{vars: map[string]any{"text": "z", "text2": "ü"}},
		}})
	add(&spec{name: "text_like", vars: []string{"text"}, ordered: true,
		sql:  shared(`SELECT id, name FROM items WHERE name LIKE {variables.text} ORDER BY id`),
		runs: values("text", "a%", "%é", "p_ar%", "%an%", "A%")})
	add(&spec{name: "text_in_list", vars: []string{"names"}, ordered: true,
		sql: shared(`SELECT id, name FROM items WHERE name IN ({variables.names}) ORDER BY id`),
		runs: values("names", []string{"apple"}, []string{"apple", "Apple"}, []string{"apple ", "café", "Ünïcode"},
			[]string{"pear  ", "pear"}, []string{"nothing"}, []string{"it's", "zeta", "APPLE"})})
	add(&spec{name: "text_not_in_list", vars: []string{"names"}, ordered: true,
		sql:  shared(`SELECT id FROM items WHERE name NOT IN ({variables.names}) ORDER BY id`),
		runs: values("names", []string{"apple"}, []string{"pear", "Pear", "pear  "})})
	add(&spec{name: "list_group", vars: []string{"grp"}, mat: true,
		sql:  shared(`SELECT grp, count(*) AS n, sum(qty) AS total, min(price) AS lo, max(price) AS hi FROM items WHERE grp = {variables.grp} GROUP BY grp`),
		runs: values("grp", "w", "x", "y", "z", "q")})

	// Numbers, booleans and NULLs.
	add(&spec{name: "num_gt", vars: []string{"num"}, ordered: true, mat: true,
		sql:  shared(`SELECT id, qty FROM items WHERE qty > {variables.num} ORDER BY id`),
		runs: values("num", -10, -2, 0, 2.5, "5", 100, 1e9)})
	// price is floating point: its sum and avg over a range of qty add
	// up an exact type, as the refusal of sum(price) advises
	// (TestFloatColumnSum).
	add(&spec{name: "num_le_grouped", vars: []string{"num"}, mat: true,
		sql: func(d *dialect) string {
			return `SELECT grp, count(*) AS n, ` + exactAgg(d, "sum", "price") + ` AS total, min(price) AS lo, max(price) AS hi, ` +
				exactAgg(d, "avg", "price") + ` AS mean FROM items WHERE qty <= {variables.num} GROUP BY grp`
		},
		runs: values("num", -5, 0, 3, 7.5, 200)})
	add(&spec{name: "price_ge", vars: []string{"num"}, ordered: true, mat: true,
		sql:  shared(`SELECT id, price FROM items WHERE price >= {variables.num} ORDER BY id`),
		runs: values("num", 0, 1.5, 2.26, -1, 100, "0.25")})
	add(&spec{name: "avg_of_integers", vars: []string{"num"}, mat: true,
		sql:  shared(`SELECT grp, avg(qty) AS mean FROM items WHERE qty >= {variables.num} GROUP BY grp`),
		runs: values("num", -100, 3)})
	add(&spec{name: "integer_division", vars: []string{"num"}, ordered: true,
		sql:  shared(`SELECT id, qty / 2 AS half FROM items WHERE qty > {variables.num} ORDER BY id`),
		runs: values("num", 6)})
	add(&spec{name: "text_against_number", vars: []string{"num"}, ordered: true,
		sql:  shared(`SELECT id FROM items WHERE name = {variables.num} ORDER BY id`),
		runs: values("num", 100, 0)})
	add(&spec{name: "flag_eq", vars: []string{"flag"}, ordered: true, mat: true,
		sql:  shared(`SELECT id, flag FROM items WHERE flag = {variables.flag} ORDER BY id`),
		runs: values("flag", true, false, "TRUE")})
	add(&spec{name: "null_aggregates", vars: []string{"num"}, ordered: true, mat: true,
		sql:  shared(`SELECT count(*) AS n, count(qty) AS with_qty, count(grp) AS with_grp, sum(qty) AS total, min(name) AS first FROM items WHERE id > {variables.num}`),
		runs: values("num", 0, 10, 15, 19, 25)})
	add(&spec{name: "null_coalesce", vars: []string{"text"}, ordered: true,
		sql:  shared(`SELECT id FROM items WHERE COALESCE(grp, 'none') = {variables.text} ORDER BY id`),
		runs: values("text", "none", "x", "")})
	add(&spec{name: "null_or", vars: []string{"num"}, ordered: true,
		sql:  shared(`SELECT id, qty FROM items WHERE qty IS NULL OR qty < {variables.num} ORDER BY id`),
		runs: values("num", 0, 5)})
	add(&spec{name: "null_order", vars: []string{"num"}, ordered: true,
		sql:  shared(`SELECT id, grp FROM items WHERE id <= {variables.num} ORDER BY grp, id`),
		runs: values("num", 10)})
	add(&spec{name: "paged", vars: []string{"num"}, ordered: true, mat: true,
		sql: shared(`SELECT id, name FROM items WHERE qty >= {variables.num} ORDER BY id`),
		runs: []run{{vars: map[string]any{"num": 0}, limit: 3}, {vars: map[string]any{"num": 5}, limit: 2},
			{vars: map[string]any{"num": -100}, limit: 50}}})

	// Date variables against timestamps stored as text, timestamp and
	// timestamptz (MySQL: DATETIME and TIMESTAMP) in a non-UTC session.
	for _, col := range []string{"ts_text", "ts", "tstz"} {
		add(&spec{name: "date_range_" + col, vars: []string{"from", "to"}, ordered: true, mat: true,
			sql:  shared(`SELECT id, ` + col + ` AS at FROM items WHERE ` + col + ` >= {variables.from} AND ` + col + ` < {variables.to} ORDER BY id`),
			runs: ranges(dateRanges...)})
		add(&spec{name: "date_grouped_" + col, vars: []string{"from", "to"}, mat: true,
			sql:  shared(`SELECT grp, count(*) AS n, sum(qty) AS total, min(` + col + `) AS first FROM items WHERE ` + col + ` >= {variables.from} AND ` + col + ` < {variables.to} GROUP BY grp`),
			runs: ranges(dateRanges...)})
		add(&spec{name: "date_after_" + col, vars: []string{"at"}, ordered: true, mat: true,
			buckets: map[string]engine.Bucket{"at": engine.Hour},
			sql:     shared(`SELECT count(*) AS n, max(` + col + `) AS last FROM items WHERE ` + col + ` > {variables.at}`),
			runs:    values("at", "2025-05-01", "2025-05-01 00:00:00", "2025-05-05T00:00:00+05:30", "2025-05-31 23:00:00")})
		add(&spec{name: "date_eq_" + col, vars: []string{"at"}, ordered: true, mat: true,
			sql:  shared(`SELECT id FROM items WHERE ` + col + ` = {variables.at} ORDER BY id`),
			runs: values("at", "2025-05-01 00:00:00", "2025-04-30T23:59:59Z", "2025-05-05T05:30:00+05:30", "2025-05-01")})
	}

	// JSON properties read by the library's rule (the items_j view), and
	// inline in the query.
	add(&spec{name: "json_text_eq", vars: []string{"text"}, ordered: true, mat: true,
		sql:  shared(`SELECT id, plan FROM items_j WHERE plan = {variables.text} ORDER BY id`),
		runs: values("text", "pro", "Pro", "pro ", "", "ñandú", "Ünïcode", "free", "FREE", "free ", "null", "it's", "100")})
	add(&spec{name: "json_number_gt", vars: []string{"num"}, ordered: true, mat: true,
		sql:  shared(`SELECT id, n FROM items_j WHERE n > {variables.num} ORDER BY id`),
		runs: values("num", -1, 0, 3.5, 12, 99.5, -100)})
	add(&spec{name: "json_number_as_text", vars: []string{"text"}, ordered: true, mat: true,
		sql:  shared(`SELECT id, n_text, s FROM items_j WHERE s = {variables.text} ORDER BY id`),
		runs: values("text", "12", "7", "100", "08", "x", "3.5", "")})
	add(&spec{name: "json_number_text_of", vars: []string{"text"}, ordered: true, mat: true,
		sql:  shared(`SELECT id, n_text FROM items_j WHERE n_text = {variables.text} ORDER BY id`),
		runs: values("text", "12", "3.5", "-1", "0", "7", "twelve", "12.25", "-0.5", "")})
	add(&spec{name: "json_null", vars: []string{"text"}, ordered: true, mat: true,
		sql:  shared(`SELECT id, z FROM items_j WHERE z = {variables.text} ORDER BY id`),
		runs: values("text", "", "null")})
	add(&spec{name: "json_bool", vars: []string{"text"}, ordered: true, mat: true,
		sql:  shared(`SELECT id, b FROM items_j WHERE b = {variables.text} ORDER BY id`),
		runs: values("text", "true", "false", "")})
	add(&spec{name: "json_unicode", vars: []string{"text"}, ordered: true, mat: true,
		sql:  shared(`SELECT id, u FROM items_j WHERE u = {variables.text} ORDER BY id`),
		runs: values("text", "ñandú", "Café", "café", "ünïcode", "Ünïcode")})
	add(&spec{name: "json_spaces", vars: []string{"text"}, ordered: true, mat: true,
		sql:  shared(`SELECT id, sp FROM items_j WHERE sp = {variables.text} ORDER BY id`),
		runs: values("text", "pro", "pro ", "free", "free  ", "Ünïcode", "Ünïcode  ")})
	add(&spec{name: "json_case", vars: []string{"text"}, ordered: true, mat: true,
		sql:  shared(`SELECT id, c FROM items_j WHERE c = {variables.text} ORDER BY id`),
		runs: values("text", "pro", "Pro", "PRO")})
	add(&spec{name: "json_missing", vars: []string{"text"}, ordered: true, mat: true,
		sql:  shared(`SELECT id FROM items_j WHERE missing = {variables.text} ORDER BY id`),
		runs: values("text", "", "x")})
	add(&spec{name: "json_grouped", vars: []string{"from"}, mat: true,
		sql:  shared(`SELECT plan, count(*) AS n, sum(qty) AS total FROM items_j WHERE ts_text >= {variables.from} GROUP BY plan`),
		runs: values("from", "2025-04-01", "2025-05-01", "2025-05-05 00:00:00", "2025-05-05 12:00:00")})
	add(&spec{name: "json_inline_text", vars: []string{"text"}, ordered: true,
		sql: func(d *dialect) string {
			return `SELECT id FROM items WHERE ` + d.jtext("props", "plan") + ` = {variables.text} ORDER BY id`
		},
		runs: values("text", "pro", "pro ", "", "Pro")})
	add(&spec{name: "json_inline_number", vars: []string{"num"}, ordered: true,
		sql: func(d *dialect) string {
			return `SELECT id, ` + d.jnum("props", "n") + ` AS n FROM items WHERE ` + d.jnum("props", "n") + ` >= {variables.num} ORDER BY id`
		},
		runs: values("num", 0, 12, -1)})
	add(&spec{name: "json_native_null", vars: []string{"num"}, ordered: true,
		sql: func(d *dialect) string {
			return `SELECT id, ` + d.native("props", "z") + ` AS z FROM items WHERE id <= {variables.num} ORDER BY id`
		},
		runs: values("num", 2)})
	add(&spec{name: "json_native_number", vars: []string{"num"}, ordered: true,
		sql: func(d *dialect) string {
			return `SELECT id, ` + d.native("props", "n") + ` AS n FROM items WHERE id <= {variables.num} ORDER BY id`
		},
		runs: values("num", 1)})

	// The demo events, with timestamps stored each way.
	for _, s := range storages {
		add(&spec{name: "events_by_event_" + string(s), storage: s, vars: []string{"from", "to"}, mat: true,
			sql:  shared(`SELECT event, count(*) AS n, min(timestamp) AS first, max(timestamp) AS last FROM events WHERE timestamp >= {variables.from} AND timestamp < {variables.to} GROUP BY event`),
			runs: ranges(dateRanges...)})
		for _, b := range []engine.Bucket{engine.Hour, engine.Week, engine.Month} {
			add(&spec{name: "events_" + string(b) + "_" + string(s), storage: s, vars: []string{"from", "to"}, mat: true,
				buckets: map[string]engine.Bucket{"from": b, "to": b},
				sql:     shared(`SELECT event, count(*) AS n FROM events WHERE timestamp >= {variables.from} AND timestamp < {variables.to} GROUP BY event`),
				runs:    ranges(dateRanges...)})
		}
		// amount is a JSON number, floating point: its sum and avg
		// over a range add up an exact type.
		add(&spec{name: "events_revenue_" + string(s), storage: s, vars: []string{"text", "from", "to"}, mat: true,
			sql: func(d *dialect) string {
				return `SELECT country, count(*) AS n, ` + exactAgg(d, "sum", "amount") + ` AS revenue, ` + exactAgg(d, "avg", "amount") +
					` AS mean FROM events_p WHERE event = 'purchase' AND browser = {variables.text} AND timestamp >= {variables.from} AND timestamp < {variables.to} GROUP BY country`
			},
			runs: []run{
				{vars: map[string]any{"text": "Chrome", "from": "2025-05-01", "to": "2025-05-15"}},
				{vars: map[string]any{"text": "Chrome ", "from": "2025-05-01", "to": "2025-06-01"}},
				{vars: map[string]any{"text": "Firefox", "from": "2025-03-01", "to": "2025-06-01"}},
				{vars: map[string]any{"text": "", "from": "2025-03-01", "to": "2025-06-01"}},
			}})
		add(&spec{name: "events_of_user_" + string(s), storage: s, vars: []string{"user"}, ordered: true, mat: true,
			sql:  shared(`SELECT uuid, event, timestamp FROM events WHERE distinct_id = {variables.user} ORDER BY timestamp, uuid`),
			runs: values("user", "edge-1", "edge-6", "EDGE-1", "user-00007", "nobody")})
	}
	add(&spec{name: "events_browser", vars: []string{"text"}, mat: true,
		sql:  shared(`SELECT browser, count(*) AS n FROM events_p WHERE browser = {variables.text} GROUP BY browser`),
		runs: values("text", "Chrome", "Chrome ", "chrome", "CHROME", "", "Ünïcode", "ünïcode", "12", "null")})
	add(&spec{name: "events_countries", vars: []string{"from"}, mat: true,
		sql:  shared(`SELECT country, count(*) AS n FROM events_p WHERE timestamp >= {variables.from} GROUP BY country`),
		runs: values("from", "2025-03-01", "2025-05-05", "2025-05-20 00:00:00")})
	return specs
}

// Intervals of the trends, with a date range of a sensible number of
// points each.
var trendRanges = []struct{ interval, from, to string }{
	{"hour", "2025-05-04", "2025-05-06"},
	{"day", "2025-05-01", "2025-05-31"},
	{"week", "2025-04-02", "2025-05-31"},
	{"month", "2025-03-01", "2025-05-31"},
}

// breakdowns of the trends: none, one, two.
var breakdowns = []struct {
	name, json string
	props      []string
}{
	{"none", "", nil},
	{"browser", `, "breakdownFilter": {"breakdown": "$browser", "breakdown_type": "event"}`, []string{"$browser"}},
	{"browser_country", `, "breakdownFilter": {"breakdowns": [{"property": "$browser", "type": "event"}, {"property": "country", "type": "event"}]}`, []string{"$browser", "country"}},
}

// breakdownValues are the values a breakdown variable is run with: the
// demo's, and the edge events' where engines part (trailing space, case,
// unset, unicode, a number, the text "null").
var breakdownValues = map[string][]string{
	"$browser": {"Chrome", "Chrome ", "chrome", "", "Ünïcode", "12"},
	"country":  {"US", "us", "FR ", "", "null"},
}

// insightRuns are the runs of an insight with the given breakdown
// properties: all series, then filtered by breakdown values, then (inline
// only: a materialized insight refuses date variables) another date range.
func insightRuns(props []string, from, to string) []run {
	runs := []run{{vars: map[string]any{}}}
	for _, p := range props {
		for _, v := range breakdownValues[p] {
			runs = append(runs, run{vars: map[string]any{p: v}})
		}
	}
	if len(props) == 2 {
		runs = append(runs, run{vars: map[string]any{props[0]: "Chrome ", props[1]: "US"}})
	}
	return append(runs, run{vars: map[string]any{"date_from": from, "date_to": to}, inlineOnly: true})
}

// insightSpecs are the Trends (every interval, math and breakdown),
// Retention and Lifecycle endpoints, on events with timestamps stored each
// way.
func insightSpecs() []*spec {
	var specs []*spec
	for _, s := range storages {
		for _, r := range trendRanges {
			for _, m := range []string{"total", "dau", "sum", "avg", "min", "max"} {
				for _, b := range breakdowns {
					series := `{"kind": "EventsNode", "event": "$pageview", "math": "` + m + `"}`
					if m != "total" && m != "dau" {
						series = `{"kind": "EventsNode", "event": "purchase", "math": "` + m + `", "math_property": "amount"}`
					}
					specs = append(specs, &spec{
						name: fmt.Sprintf("trends_%s_%s_%s_%s", r.interval, m, b.name, s), kind: endpoint.KindTrends, storage: s, mat: true,
						insight: `{"kind": "TrendsQuery", "series": [` + series + `], "interval": "` + r.interval + `",
							"dateRange": {"date_from": "` + r.from + `", "date_to": "` + r.to + `"}` + b.json + `}`,
						optional: b.props,
						runs:     insightRuns(b.props, "2025-05-05", "2025-05-06"),
					})
				}
			}
		}
		for i, f := range []string{
			`{"key": "$browser", "value": "Chrome", "operator": "exact", "type": "event"}`,
			`{"key": "$browser", "value": ["Chrome ", "chrome", "12"], "operator": "exact", "type": "event"}`,
			`{"key": "$browser", "value": "Chrome", "operator": "is_not", "type": "event"}`,
			`{"key": "$browser", "value": "chr", "operator": "icontains", "type": "event"}`,
			`{"key": "$browser", "value": "ÜNÏ", "operator": "icontains", "type": "event"}`,
			`{"key": "$browser", "value": "ROME", "operator": "not_icontains", "type": "event"}`,
			`{"key": "amount", "value": 10, "operator": "gt", "type": "event"}`,
			`{"key": "amount", "value": 100, "operator": "lt", "type": "event"}`,
			`{"key": "$browser", "operator": "is_set", "type": "event"}`,
			`{"key": "$browser", "operator": "is_not_set", "type": "event"}`,
			`{"key": "country", "value": "null", "operator": "exact", "type": "event"}`,
		} {
			op := strings.Split(strings.Split(f, `"operator": "`)[1], `"`)[0]
			specs = append(specs, &spec{
				name: fmt.Sprintf("trends_filter%d_%s_%s", i, op, s), kind: endpoint.KindTrends, storage: s, mat: true,
				insight: `{"kind": "TrendsQuery", "series": [{"kind": "EventsNode", "event": "$pageview"}, {"kind": "EventsNode", "event": "purchase", "math": "sum", "math_property": "amount"}],
					"interval": "day", "dateRange": {"date_from": "2025-04-28", "date_to": "2025-05-31"}, "properties": [` + f + `]` + breakdowns[1].json + `}`,
				optional: breakdowns[1].props,
				runs:     firstRuns(insightRuns(breakdowns[1].props, "2025-05-05", "2025-05-12"), 3),
			})
		}
		for _, p := range []struct{ period, from, to string }{
			{"Day", "2025-05-18", "2025-05-31"},
			{"Week", "2025-04-07", "2025-05-31"},
			{"Month", "2025-03-01", "2025-05-31"},
		} {
			for _, typ := range []string{"retention_first_time", "retention_recurring"} {
				for _, b := range breakdowns[:2] {
					specs = append(specs, &spec{
						name: fmt.Sprintf("retention_%s_%s_%s_%s", strings.ToLower(p.period), strings.TrimPrefix(typ, "retention_"), b.name, s),
						kind: endpoint.KindRetention, storage: s, mat: true,
						insight: `{"kind": "RetentionQuery", "retentionFilter": {"targetEntity": {"id": "signed_up", "type": "events"},
							"returningEntity": {"id": "$pageview", "type": "events"}, "period": "` + p.period + `", "totalIntervals": 5,
							"retentionType": "` + typ + `"}, "dateRange": {"date_from": "` + p.from + `", "date_to": "` + p.to + `"}` + b.json + `}`,
						optional: b.props,
						runs:     firstRuns(insightRuns(b.props, p.from, p.to), 4),
					})
				}
			}
		}
	}
	// Lifecycles: every interval on each storage, and one of every event
	// with a filter. A block of its own, after the others, so that the
	// samples of the other insights stay as they were.
	for _, s := range storages {
		for _, r := range trendRanges {
			specs = append(specs, &spec{
				name: fmt.Sprintf("lifecycle_%s_%s", r.interval, s), kind: endpoint.KindLifecycle, storage: s, mat: true,
				insight: `{"kind": "LifecycleQuery", "series": [{"kind": "EventsNode", "event": "$pageview"}], "interval": "` + r.interval + `",
					"dateRange": {"date_from": "` + r.from + `", "date_to": "` + r.to + `"}}`,
				runs: insightRuns(nil, "2025-05-05", "2025-05-12"),
			})
		}
	}
	specs = append(specs, &spec{
		name: "lifecycle_filtered_" + string(asText), kind: endpoint.KindLifecycle, storage: asText, mat: true,
		insight: `{"kind": "LifecycleQuery", "series": [{"kind": "EventsNode", "event": null}], "interval": "week",
			"dateRange": {"date_from": "2025-03-10", "date_to": "2025-05-28"},
			"properties": [{"key": "$browser", "value": "chr", "operator": "icontains", "type": "event"}]}`,
		runs: insightRuns(nil, "2025-04-01", "2025-05-31"),
	})
	return specs
}

// firstRuns keeps the first n runs and the last, inline-only one.
func firstRuns(runs []run, n int) []run {
	if len(runs) <= n+1 {
		return runs
	}
	return append(runs[:n:n], runs[len(runs)-1])
}

// corpus is the corpus of this run: every spec with -tags long, else the
// sample that sampled keeps.
func corpus() []*spec {
	all := append(append(append(sqlSpecs(), expressionSpecs()...), syntaxSpecs()...), insightSpecs()...)
	if long {
		return all
	}
	var out []*spec
	for _, s := range all {
		if sampled(s) {
			if s.kind != endpoint.KindSQL {
				s.runs = firstRuns(s.runs, 4)
			}
			out = append(out, s)
		}
	}
	return out
}

// sampled reports whether the default run keeps s: every SQL endpoint on
// text timestamps and the demo's on typed ones; the trends of every
// interval with a count and a sum, every math once, every filter; the
// retentions; a few insights on typed timestamps.
func sampled(s *spec) bool {
	n := s.name
	has := func(parts ...string) bool {
		for _, p := range parts {
			if !strings.Contains(n, p) {
				return false
			}
		}
		return true
	}
	typed := s.storage != asText
	switch s.kind {
	case endpoint.KindSQL:
		return !typed || has("events_by_event") || has("events_week") || has("events_revenue") || has("daily_property_distinct")
	case endpoint.KindRetention:
		return !typed || has("_day_first_time_browser") || has("_week_recurring_none")
	case endpoint.KindLifecycle:
		return true
	}
	switch {
	case has("trends_filter"):
		return !typed
	case typed:
		return strings.HasSuffix(n, "_total_browser_"+string(s.storage)) || has("trends_day_sum_none")
	}
	return has("_total_none_") || has("_total_browser_") || has("_sum_none_") || has("_sum_browser_") ||
		has("trends_day_", "_browser_country_") && !has("_total_") && !has("_sum_")
}
