package access

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/internal/testdb"
)

// engineProbe calls the allowed functions of one engine on it.
type engineProbe struct {
	functions, tableFunctions []string
	// query runs one statement and returns its error.
	query func(q string) error
	// missing reports whether an error says the engine has no such
	// function (rather than: not with these arguments, or not here).
	missing func(error) bool
	// args are the argument lists a function is tried with, in turn,
	// until one call finds it.
	args []string
	// samples are statements for the names whose call the engine's
	// grammar reads in a form of its own (CAST(x AS t), window functions);
	// each must run.
	samples map[string]string
}

// probes holds an engine per name; chDB adds ClickHouse when built with
// -tags chdb.
var probes = map[string]func(t *testing.T) *engineProbe{
	"sqlite": func(t *testing.T) *engineProbe {
		db := testdb.SQLite(t)
		return &engineProbe{
			functions: sqliteFunctions, tableFunctions: sqliteTableFunctions,
			query: exec(db),
			missing: func(err error) bool {
				return strings.Contains(err.Error(), "no such function") || strings.Contains(err.Error(), "no such table")
			},
			args:    []string{""},
			samples: map[string]string{"cast": "SELECT CAST(1 AS TEXT)"},
		}
	},
	"postgresql": func(t *testing.T) *engineProbe {
		db := testdb.Postgres(t)
		return &engineProbe{
			functions: postgresFunctions, tableFunctions: postgresTableFunctions,
			query: exec(db),
			missing: func(err error) bool {
				var pe *pgconn.PgError
				return errors.As(err, &pe) && pe.Code == "42883" // undefined_function: no such name, or not for these arguments
			},
			args: []string{"", "NULL", "NULL, NULL", "NULL, NULL, NULL", "NULL, NULL, NULL, NULL", "NULL, NULL, NULL, NULL, NULL",
				"NULL, NULL, NULL, NULL, NULL, NULL", "NULL, NULL, NULL, NULL, NULL, NULL, NULL"},
			samples: map[string]string{
				"any":      "SELECT 1 = ANY(ARRAY[1])",
				"array":    "SELECT ARRAY(SELECT 1)",
				"cast":     "SELECT CAST(1 AS text)",
				"coalesce": "SELECT coalesce(NULL, 1)",
				"extract":  "SELECT extract(year FROM now())",
				"greatest": "SELECT greatest(1, 2)",
				"grouping": "SELECT grouping(x) FROM (SELECT 1 AS x) t GROUP BY ROLLUP (x)",
				"least":    "SELECT least(1, 2)",
				"nullif":   "SELECT nullif(1, 2)",
				"position": "SELECT position('a' IN 'abc')",
				"trim":     "SELECT trim(' a ')",
			},
		}
	},
	"mysql": func(t *testing.T) *engineProbe {
		db := testdb.MySQL(t)
		return &engineProbe{
			functions: mysqlFunctions,
			query:     exec(db),
			missing: func(err error) bool {
				var me *mysql.MySQLError
				if errors.As(err, &me) && me.Number == 1064 {
					return true // a syntax error: try the next argument list, or a sample
				}
				return errors.As(err, &me) && (me.Number == 1305 || me.Number == 1630) // FUNCTION x does not exist
			},
			args: []string{"", "NULL", "NULL, NULL", "NULL, NULL, NULL", "NULL, NULL, NULL, NULL"},
			samples: map[string]string{
				"cast":            "SELECT CAST(1 AS CHAR)",
				"cume_dist":       "SELECT cume_dist() OVER (ORDER BY 1)",
				"dense_rank":      "SELECT dense_rank() OVER (ORDER BY 1)",
				"first_value":     "SELECT first_value(1) OVER ()",
				"lag":             "SELECT lag(1) OVER (ORDER BY 1)",
				"lead":            "SELECT lead(1) OVER (ORDER BY 1)",
				"nth_value":       "SELECT nth_value(1, 1) OVER ()",
				"ntile":           "SELECT ntile(1) OVER ()",
				"percent_rank":    "SELECT percent_rank() OVER (ORDER BY 1)",
				"rank":            "SELECT rank() OVER (ORDER BY 1)",
				"row_number":      "SELECT row_number() OVER ()",
				"median":          "SELECT median(1) OVER ()",
				"percentile_cont": "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY 1) OVER ()",
				"percentile_disc": "SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY 1) OVER ()",
				"date_add":        "SELECT date_add('2025-01-01', INTERVAL 1 DAY)",
				"date_sub":        "SELECT date_sub('2025-01-01', INTERVAL 1 DAY)",
				"timestampadd":    "SELECT timestampadd(DAY, 1, '2025-01-01')",
				"timestampdiff":   "SELECT timestampdiff(DAY, '2025-01-01', '2025-01-02')",
				"extract":         "SELECT extract(YEAR FROM '2025-01-01')",
				"position":        "SELECT position('a' IN 'abc')",
			},
		}
	},
}

func exec(db *sql.DB) func(string) error {
	return func(q string) error {
		rows, err := db.QueryContext(context.Background(), q)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
		}
		return rows.Err()
	}
}

// exists reports whether the engine has the function (or table function)
// named name, calling it with each argument list in turn; the last error
// says why not.
func (p *engineProbe) exists(name string, table bool) (bool, error) {
	if q, ok := p.samples[name]; ok && !table {
		err := p.query(q)
		return err == nil, err
	}
	var last error
	for _, args := range p.args {
		q := "SELECT " + name + "(" + args + ")"
		if table {
			q = "SELECT * FROM " + name + "(" + args + ")"
		}
		err := p.query(q)
		if err == nil || !p.missing(err) {
			return true, nil
		}
		last = err
	}
	return false, last
}

// TestFunctionsExistOnTheirEngine calls every function and table function
// of each engine's allowlist on that engine, where it is up: nothing is
// listed that the engine lacks (the SQLite build has no generate_series,
// so it is on no list).
func TestFunctionsExistOnTheirEngine(t *testing.T) {
	for name, open := range probes {
		t.Run(name, func(t *testing.T) {
			p := open(t)
			require.GreaterOrEqual(t, len(p.functions), 50, "only")
			for _, list := range []struct {
				names []string
				table bool
			}{{p.functions, false}, {p.tableFunctions, true}} {
				for _, f := range list.names {
					ok, err := p.exists(f, list.table)
					assert.True(t, ok, "%s (table function: %v) is listed for %s but missing there: %v", f, list.table, name, err)
				}
			}
		})
	}
}

// TestGenerateSeriesNotBuiltin: generate_series is refused unless the
// rules allow it (SQLite's build lacks it: every use answered 502).
func TestGenerateSeriesNotBuiltin(t *testing.T) {
	const q = `SELECT value FROM generate_series(1, 3)`
	err := Check(q, &Rules{AnyTable: true})
	var e *Error
	require.ErrorAs(t, err, &e, "Check(%q)", q)
	require.Equal(t, ReasonTableFunction, e.Reason, "Check(%q)", q)
	require.Equal(t, "generate_series", e.Function, "Check(%q)", q)
	require.NoError(t, Check(q, &Rules{AnyTable: true, TableFunctions: []string{"generate_series"}}), "Check with TableFunctions generate_series")
}
