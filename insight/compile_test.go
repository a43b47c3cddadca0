package insight

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

var dialects = []engine.Engine{engine.SQLite, engine.PostgreSQL, engine.MySQL, engine.ClickHouse}

// goldenCases are compiled for every dialect and compared with
// testdata/<case>.<dialect>.sql.
var goldenCases = map[string]string{
	"trends_total_daily": `{"kind":"TrendsQuery","series":[{"kind":"EventsNode","event":"$pageview"}],
		"dateRange":{"date_from":"2025-05-01","date_to":"2025-05-31"}}`,
	"trends_every_math_weekly": `{"kind":"TrendsQuery","interval":"week","series":[
		{"kind":"EventsNode","event":"$pageview","math":"total"},{"kind":"EventsNode","event":"$pageview","math":"dau"},
		{"kind":"EventsNode","event":"purchase","math":"sum","math_property":"amount"},{"kind":"EventsNode","event":"purchase","math":"avg","math_property":"amount"},
		{"kind":"EventsNode","event":"purchase","math":"min","math_property":"amount"},{"kind":"EventsNode","math":"max","math_property":"amount"}],
		"dateRange":{"date_from":"-4w"}}`,
	"trends_every_operator_hourly": `{"kind":"TrendsQuery","interval":"hour","series":[{"kind":"EventsNode","event":"$pageview"}],
		"dateRange":{"date_from":"2025-05-30","date_to":"2025-05-31"},
		"properties":[
			{"key":"$browser","value":"Chrome","operator":"exact","type":"event"},
			{"key":"country","value":["US","GB"],"operator":"exact","type":"event"},
			{"key":"plan","value":"free","operator":"is_not","type":"event"},
			{"key":"$current_url","value":"pricing","operator":"icontains","type":"event"},
			{"key":"$current_url","value":"blog","operator":"not_icontains","type":"event"},
			{"key":"amount","value":10,"operator":"gt","type":"event"},
			{"key":"amount","value":"500","operator":"lt","type":"event"},
			{"key":"$os","operator":"is_set","type":"event"},
			{"key":"utm_source","operator":"is_not_set","type":"event"}]}`,
	"trends_two_breakdowns_monthly": `{"kind":"TrendsQuery","interval":"month","series":[{"kind":"EventsNode","event":"purchase","math":"sum","math_property":"amount"}],
		"dateRange":{"date_from":"2025-03-01","date_to":"2025-05-31"},
		"breakdownFilter":{"breakdowns":[{"property":"$browser","type":"event"},{"property":"country","type":"event"}]}}`,
	"retention_first_time_weekly": `{"kind":"RetentionQuery","retentionFilter":{"targetEntity":{"id":"signed_up","type":"events"},"returningEntity":{"id":"$pageview","type":"events"},
		"period":"Week","totalIntervals":6,"retentionType":"retention_first_time"},"dateRange":{"date_from":"2025-04-01","date_to":"2025-05-31"},
		"properties":[{"key":"plan","value":"enterprise","type":"event"}],"breakdownFilter":{"breakdown":"$browser"}}`,
	"lifecycle_weekly": `{"kind":"LifecycleQuery","series":[{"kind":"EventsNode","event":"$pageview"}],"interval":"week",
		"dateRange":{"date_from":"2025-04-01","date_to":"2025-05-31"},"properties":[{"key":"plan","value":"enterprise","type":"event"}]}`,
	"retention_recurring_daily": `{"kind":"RetentionQuery","retentionFilter":{"targetEntity":{"id":"$pageview","type":"events"},"returningEntity":{"id":"purchase","type":"events"},
		"period":"Day","totalIntervals":7,"retentionType":"retention_recurring"},"dateRange":{"date_from":"2025-05-01","date_to":"2025-05-14"}}`,
}

// compileNow is the now of every golden case.
var compileNow = time.Date(2025, 6, 1, 10, 0, 0, 0, time.UTC)

// goldenText prints a statement and its arguments.
func goldenText(stmts ...Statement) string {
	var b strings.Builder
	for i, s := range stmts {
		if i > 0 {
			b.WriteString(";\n\n")
		}
		b.WriteString(s.SQL)
		b.WriteString("\n-- args:")
		for _, a := range s.Args {
			fmt.Fprintf(&b, " %#v", a)
		}
	}
	b.WriteString("\n")
	return b.String()
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create %s", path)
	require.Equal(t, string(want), got, "golden file %s (go test -update rewrites it)", path)
}

// requireNoValueInSQL checks that no bound text appears in the SQL itself.
func requireNoValueInSQL(t *testing.T, s Statement) {
	t.Helper()
	for _, a := range s.Args {
		text, ok := a.(string)
		if !ok || len(text) < 3 || strings.HasPrefix(text, "20") {
			continue // numbers, and dates that SQL text might share by chance
		}
		require.NotContains(t, s.SQL, text)
	}
}

func TestCompileGolden(t *testing.T) {
	for name, text := range goldenCases {
		q := mustDecode(t, text)
		for _, d := range dialects {
			t.Run(name+"/"+d.Name(), func(t *testing.T) {
				c, err := Compile(q, d, compileNow)
				require.NoError(t, err)
				s := Statement{SQL: c.SQL, Args: c.Args}
				requireNoValueInSQL(t, s)
				checkGolden(t, name+"."+d.Name()+".sql", goldenText(s))
			})
		}
	}
}

func TestMaterializeGolden(t *testing.T) {
	q := mustDecode(t, goldenCases["trends_two_breakdowns_monthly"])
	for _, d := range dialects {
		t.Run(d.Name(), func(t *testing.T) {
			stmts, err := Materialize(q, d, "insight_endpoint_7_v2", compileNow)
			require.NoError(t, err)
			read, err := ReadMaterialized(q, d, "insight_endpoint_7_v2", map[string]any{"$browser": "Chrome", "country": ""}, compileNow)
			require.NoError(t, err)
			if ddl := Index(q, d, "insight_endpoint_7_v2"); ddl != "" {
				stmts = append(stmts, Statement{SQL: ddl})
			}
			stmts = append(stmts, Statement{SQL: read.SQL, Args: read.Args})
			for _, s := range stmts {
				requireNoValueInSQL(t, s)
			}
			checkGolden(t, "materialized."+d.Name()+".sql", goldenText(stmts...))
		})
	}
}
