package placeholder

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/require"
)

// benchScanSQL is a 20-line query with 6 placeholders, among literals,
// quoted identifiers and comments that the scanner must skip.
const benchScanSQL = `-- Daily purchases per country, for the dashboard
SELECT
    date(timestamp) AS day,
    json_extract(properties, '$.country') AS "country",
    count(*) AS purchases,
    sum(json_extract(properties, '$.amount')) AS revenue
FROM events
WHERE event = {variables.event}
  AND timestamp >= {variables.since}
  AND timestamp < { variables.until }
  /* the plan filter is optional in the UI: '{variables.ignored}' */
  AND json_extract(properties, '$.plan') IN {variables.plans}
  AND json_extract(properties, '$.country') <> 'it''s {not a placeholder}'
  AND json_extract(properties, '$.amount') >= {variables.min_amount}
  AND distinct_id NOT IN (SELECT distinct_id FROM "blocked users")
  AND json_extract(properties, '$.browser') = {variables.browser}
GROUP BY 1, 2
HAVING count(*) > 0
ORDER BY 1, 2
LIMIT 1000`

func BenchmarkScan(b *testing.B) {
	phs, err := Scan(benchScanSQL)
	require.NoError(b, err, "want 6 placeholders")
	require.Len(b, phs, 6, "want 6 placeholders")
	b.SetBytes(int64(len(benchScanSQL)))
	b.ReportAllocs()
	for b.Loop() {
		_, err := Scan(benchScanSQL)
		require.NoError(b, err)
	}
}

// benchRenderSQL is a 3-variable template; the event is used twice.
const benchRenderSQL = `SELECT json_extract(properties, '$.country') AS country, count(*) AS n
FROM events
WHERE event = {variables.event}
  AND json_extract(properties, '$.amount') >= {variables.min_amount}
  AND json_extract(properties, '$.plan') = {variables.plan}
  AND {variables.event} <> ''
GROUP BY 1
ORDER BY n DESC`

var benchValues = map[string]any{"event": "purchase", "min_amount": int64(20), "plan": "pro"}

func BenchmarkRender(b *testing.B) {
	tpl, err := Compile(benchRenderSQL)
	require.NoError(b, err)
	dated := map[string]any{"event": "purchase", "min_amount": int64(20),
		"plan": variable.Timestamp{Time: time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC), DateOnly: true}}
	for _, c := range []struct {
		name   string
		d      engine.Engine
		values map[string]any
	}{
		{"sqlite", engine.SQLite, benchValues},
		{"postgresql", engine.PostgreSQL, benchValues},
		{"clickhouse", engine.ClickHouse, benchValues},
		// A Date value is formatted as text on engine.SQLite: one more string
		// and one more boxed argument per render.
		{"sqlite-date", engine.SQLite, dated},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _, err := tpl.Render(c.d, c.values)
				require.NoError(b, err)
			}
		})
	}
}

// BenchmarkRenderBaseline is the floor Render is measured against: the
// same text segments and markers concatenated with a strings.Builder of
// the right size, with no lookup, check or argument.
func BenchmarkRenderBaseline(b *testing.B) {
	tpl, err := Compile(benchRenderSQL)
	require.NoError(b, err)
	segments := make([]string, 0, len(tpl.parts)+1)
	for _, p := range tpl.parts {
		segments = append(segments, p.text)
	}
	segments = append(segments, tpl.tail)
	for _, c := range []struct {
		name    string
		markers []string
	}{
		{"sqlite", []string{"?", "?", "?", "?"}},
		{"postgresql", []string{"$1", "$2", "$3", "$1"}},
	} {
		size := 0
		for i, s := range segments {
			size += len(s)
			if i < len(c.markers) {
				size += len(c.markers[i])
			}
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var sb strings.Builder
				sb.Grow(size)
				for i, s := range segments {
					sb.WriteString(s)
					if i < len(c.markers) {
						sb.WriteString(c.markers[i])
					}
				}
				require.Equal(b, size, sb.Len())
			}
		})
	}
}

// BenchmarkScan2K scans the 2 KB query that sql/sqltoken's
// BenchmarkTokens2K reads, to compare the scanners on the same text.
func BenchmarkScan2K(b *testing.B) {
	data, err := os.ReadFile("../sql/sqltoken/testdata/bench2k.sql")
	require.NoError(b, err)
	src := string(data)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		_, err := Scan(src)
		require.NoError(b, err)
	}
}
