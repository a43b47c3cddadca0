//go:build chdb

package access

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/chdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
)

// init registers chDB, the ClickHouse engine in this process, with the
// forms' engines (forms_engines_test.go) and the function probes
// (functions_engines_test.go).
func init() {
	formEngines["clickhouse"] = func(t *testing.T) *formEngine {
		x := openCHDB(t)
		ctx := context.Background()
		for _, s := range []string{
			`CREATE TABLE events (project_id String, event String, n Int64, ts DateTime, tags Array(Int64), props Map(String, Int64)) ENGINE = Memory`,
			`INSERT INTO events VALUES ('1', 'a', 7, '2025-05-01 10:07:00', [7, 1], {'k': 1}), ('1', 'b', 13, '2025-05-01 10:13:00', [13], {'k': 2}),
			('2', 'x', 1, '2025-05-01 00:00:00', [1], {'k': 3}), ('2', 'y', 2, '2025-05-01 00:00:00', [2], {'k': 4}), ('2', 'z', 3, '2025-05-01 00:00:00', [3], {'k': 5})`,
			// A table no rules list, for TestRecursiveCTEReadsTheTableOnClickHouse.
			`CREATE TABLE secrets (v String) ENGINE = Memory`,
			`INSERT INTO secrets VALUES ('SECRET')`,
		} {
			require.NoError(t, x.Load(ctx, s, nil), "%s", s)
		}
		return &formEngine{engine.ClickHouse, func(q string, args []any) (int, error) {
			res, err := x.Read(ctx, q, args)
			if err != nil {
				return 0, err
			}
			return len(res.Rows), nil
		}}
	}
	probes["clickhouse"] = func(t *testing.T) *engineProbe {
		x := openCHDB(t)
		ctx := context.Background()
		query := func(q string) error {
			// A bound on each call: a function given the wrong arguments
			// must not run for long.
			qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			_, err := x.Read(qctx, q, nil)
			if err != nil && strings.Contains(err.Error(), "reading the answer") {
				// chDB 26.5 can hand a statement the rest of the answer of
				// one that failed before it (after "SELECT rpad()", say):
				// run it again, on a clean answer.
				_, err = x.Read(qctx, q, nil)
			}
			return err
		}
		// ClickHouse's names are case-sensitive; the list holds them in
		// lower case, as the analyzer compares them.
		res, err := x.Read(ctx, "SELECT name FROM system.functions UNION ALL SELECT name FROM system.table_functions", nil)
		require.NoError(t, err)
		spelling := map[string]string{}
		for _, r := range res.Rows {
			spelling[strings.ToLower(r[0].(string))] = r[0].(string)
		}
		respell := func(names []string) []string {
			out := make([]string, len(names))
			for i, n := range names {
				if s, ok := spelling[n]; ok {
					n = s
				}
				out[i] = n
			}
			return out
		}
		return &engineProbe{
			functions: respell(clickhouseFunctions), tableFunctions: respell(clickhouseTableFunctions),
			query: query,
			missing: func(err error) bool {
				return strings.Contains(err.Error(), "UNKNOWN_FUNCTION") || strings.Contains(err.Error(), "UNKNOWN_AGGREGATE_FUNCTION")
			},
			args: []string{""},
			samples: map[string]string{
				"CAST":      "SELECT CAST(1 AS String)",
				"ltrim":     "SELECT ltrim(' a')",
				"rtrim":     "SELECT rtrim('a ')",
				"trim":      "SELECT trim(' a ')",
				"substring": "SELECT substring('abc', 1, 1)",
				"position":  "SELECT position('abc', 'a')",
				"summap":    "SELECT sumMap([1], [1])",
				"minmap":    "SELECT minMap([1], [1])",
				"maxmap":    "SELECT maxMap([1], [1])",
				"columns":   "SELECT COLUMNS('a') FROM (SELECT 1 AS a)",
			},
		}
	}
}

// openCHDB opens a chDB session of its own, closed when t ends.
func openCHDB(t *testing.T) *chdb.Executor {
	x, err := chdb.Open("")
	require.NoError(t, err)
	t.Cleanup(func() { x.Close() })
	return x
}
