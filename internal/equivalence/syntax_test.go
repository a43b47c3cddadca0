package equivalence

import (
	"github.com/endpointkit/endpointkit/endpoint"
)

// syntaxSpecs are endpoints written in each engine's own syntax, as its
// users write them, that must materialize and answer as inline (issue 27):
// regular expressions with back-references and \. in their literals,
// PostgreSQL's :: casts, double precision and ILIKE, extract(unit FROM x),
// each engine's JSON property forms, and Date columns (ClickHouse Date,
// PostgreSQL date, MySQL DATE) against Date variables with every
// operator, whose partial buckets bind dates that must take the column's
// type.
func syntaxSpecs() []*spec {
	var specs []*spec
	add := func(s *spec) {
		s.kind, s.mat, s.storage = endpoint.KindSQL, true, asText
		specs = append(specs, s)
	}
	// The prefix of each distinct_id (user-00007: user), by a regular
	// expression whose replacement is a back-reference.
	add(&spec{name: "syntax_regex_backreference", vars: []string{"from", "to"},
		sql: func(d *dialect) string {
			var prefix string
			switch d.name {
			case "postgres":
				prefix = `regexp_replace(distinct_id, '^([a-z]+)[-\.].*$', '\1')`
			case "mysql": // MariaDB's strings read backslash escapes
				prefix = `REGEXP_REPLACE(distinct_id, '^([a-z]+)[-\\.].*$', '\\1')`
			case "clickhouse": // ClickHouse keeps the backslash of \1 and \.
				prefix = `REGEXP_REPLACE(distinct_id, '^([a-z]+)[-\.].*$', '\1')`
			default: // SQLite has no regular expressions; its strings no escapes
				prefix = `substr(distinct_id, 1, instr(replace(distinct_id, '\.', '-'), '-') - 1)`
			}
			return `SELECT ` + prefix + ` AS prefix, count(*) AS n FROM events WHERE timestamp >= {variables.from} AND timestamp < {variables.to} GROUP BY 1`
		},
		runs: ranges(unalignedRanges...)})
	// The largest purchase by country: each engine's JSON property forms,
	// and casts to a double in its syntax (PostgreSQL: :: and double
	// precision), over the demo's users (the crafted edge events hold
	// amounts that are not numbers, which the engines cast differently).
	// max, not sum: a sum of doubles that a read adds up again per bucket
	// is refused (materialize's exactsum.go).
	add(&spec{name: "syntax_json_cast", vars: []string{"from", "to"},
		sql: func(d *dialect) string {
			var country, amount string
			switch d.name {
			case "postgres":
				country = `properties::json->>'country'`
				amount = `max(CAST(json_extract_path_text(CAST(properties AS json), 'amount') AS double precision)) + max((properties::jsonb ->> 'amount')::double precision)`
			case "mysql":
				country = `JSON_UNQUOTE(JSON_EXTRACT(properties, '$.country'))`
				amount = `max(CAST(JSON_EXTRACT(properties, '$.amount') AS DOUBLE)) + max(JSON_EXTRACT(properties, '$.amount') + 0)` // + 0: max of a JSON value compares text
			case "clickhouse":
				country = `JSONExtract(properties, 'country', 'Nullable(String)')`
				amount = `max(JSONExtract(properties, 'amount', 'Float64')) + max(CAST(JSONExtractFloat(properties, 'amount'), 'Float64'))`
			default:
				country = `json_extract(properties, '$.country')`
				amount = `max(CAST(json_extract(properties, '$.amount') AS REAL)) + max(json_extract(properties, '$.amount'))`
			}
			return `SELECT ` + country + ` AS country, count(*) AS n, ` + amount + ` AS top FROM events WHERE event = 'purchase' AND distinct_id LIKE 'user-%' AND timestamp >= {variables.from} AND timestamp < {variables.to} GROUP BY 1`
		},
		runs: ranges(unalignedRanges...)})
	// A country compared with a variable through the engine's JSON form,
	// with a :: cast on PostgreSQL.
	add(&spec{name: "syntax_json_key", vars: []string{"text", "from"},
		sql: func(d *dialect) string {
			var country string
			switch d.name {
			case "postgres":
				country = `(properties::jsonb ->> 'country')::text`
			default:
				country = d.property("properties", "country")
			}
			return `SELECT event, count(*) AS n FROM events WHERE ` + country + ` = {variables.text} AND timestamp >= {variables.from} GROUP BY event`
		},
		runs: []run{
			{vars: map[string]any{"text": "US", "from": "2025-05-01"}},
			{vars: map[string]any{"text": "DE", "from": "2025-05-05 12:30:00"}},
		}})
	// Letter case ignored: ILIKE where the engine has it.
	add(&spec{name: "syntax_ilike", vars: []string{"from", "to"},
		sql: func(d *dialect) string {
			match := `name ILIKE 'a%'`
			switch d.name {
			case "sqlite":
				match = `name LIKE 'a%'` // ASCII letters' case ignored
			case "mysql":
				match = `LOWER(name) LIKE 'a%'`
			}
			return `SELECT grp, count(*) AS n FROM items WHERE ` + match + ` AND ts_text >= {variables.from} AND ts_text < {variables.to} GROUP BY grp`
		},
		runs: ranges(dateRanges[:4]...)})
	// The minute of a timestamp, by extract(minute FROM x).
	add(&spec{name: "syntax_extract", vars: []string{"from", "to"},
		sql: func(d *dialect) string {
			m := `extract(minute FROM ts)`
			switch d.name {
			case "sqlite":
				m = `CAST(strftime('%M', ts) AS INTEGER)`
			case "postgres":
				m = `CAST(extract(minute FROM ts::timestamp) AS integer)`
			}
			return `SELECT ` + m + ` AS m, count(*) AS n FROM items WHERE ts_text >= {variables.from} AND ts_text < {variables.to} GROUP BY 1`
		},
		runs: ranges(dateRanges[:4]...)})
	// A date column against Date variables with every range operator: >
	// and <= are off the day's boundary, so a read computes their partial
	// day from the source, binding the day's start. The days chosen hold
	// no row: there a text column (SQLite) compares as a date does.
	for _, c := range []struct{ name, lo, hi string }{{"gt_le", ">", "<="}, {"ge_lt", ">=", "<"}} {
		add(&spec{name: "syntax_date_column_" + c.name, vars: []string{"from", "to"},
			sql: shared(`SELECT grp, count(*) AS n, sum(qty) AS total FROM items WHERE day ` + c.lo + ` {variables.from} AND day ` + c.hi + ` {variables.to} GROUP BY grp`),
			runs: ranges([2]string{"2025-05-08", "2025-05-15"}, [2]string{"2025-04-27", "2025-05-09"}, [2]string{"2025-05-11", "2025-05-20"},
				[2]string{"2025-04-01", "2025-06-30"})})
	}
	// The same date column compared with = (a key of the stored table,
	// bound with the run's own value): SQLite's text of a midnight
	// compares as a date through date().
	add(&spec{name: "syntax_date_column_eq", vars: []string{"at"},
		sql: func(d *dialect) string {
			day := "day"
			if d.name == "sqlite" {
				day = "date(day)"
			}
			return `SELECT grp, count(*) AS n, sum(qty) AS total FROM items WHERE ` + day + ` = {variables.at} GROUP BY grp`
		},
		runs: values("at", "2025-05-01", "2025-05-05", "2025-05-09")})
	// Forms the sandbox once refused (issue 24 item 5), through the whole
	// run path (scope, paging wrapper, executor): a statement of
	// parenthesised queries (SQLite has no parenthesised arms: there the
	// plain union), a subscript (PostgreSQL, ClickHouse) and tanh or cot
	// (PostgreSQL, MariaDB). Not materializable: inline only.
	specs = append(specs, &spec{name: "syntax_sandbox_forms", kind: endpoint.KindSQL, storage: asText, vars: []string{"num"},
		sql: func(d *dialect) string {
			low := `SELECT id, grp, qty FROM items WHERE qty <= {variables.num}`
			high := `SELECT id, grp, round(tanh(qty * 0) + qty) AS qty FROM items WHERE qty > {variables.num}`
			switch d.name {
			case "sqlite":
				return high + ` UNION ALL ` + low
			case "mysql": // MariaDB has no tanh: cot(pi() / 2) is 0 there
				high = `SELECT id, grp, round(cot(pi() / 2) + qty) AS qty FROM items WHERE qty > {variables.num}`
			case "postgres":
				low = `SELECT id, (ARRAY[grp, 'x'])[1] AS grp, qty FROM items WHERE qty <= {variables.num}`
			case "clickhouse": // tanh is a Float64 there, which the union keeps
				high = `SELECT id, grp, qty FROM items WHERE qty > {variables.num}`
				low = `SELECT id, [grp, 'x'][1] AS grp, qty FROM items WHERE qty <= {variables.num}`
			}
			return `(` + high + `) UNION ALL (` + low + `)`
		},
		runs: values("num", -10, 2, 100)})
	return specs
}
