package materialize

import (
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/require"
)

// A Date column compared with a Date variable off its bucket's boundary
// (<= and > against day buckets): the source branch of the partial day
// binds the day's start, which must be a date, as the run's own value is.
// ClickHouse reads a String parameter against a Date column as a date and
// refuses '2013-07-31 00:00:00' (Code 53), so every such run fell back
// inline (issue 27, item 4).
func TestReadBindsDayBoundsAsDates(t *testing.T) {
	date := func(s string) variable.Timestamp {
		tm, err := time.Parse(time.DateOnly, s)
		require.NoError(t, err)
		return variable.Timestamp{Time: tm, DateOnly: true}
	}
	for _, d := range []engine.Engine{engine.ClickHouse, engine.PostgreSQL, engine.MySQL, engine.SQLite} {
		for _, ops := range [][2]string{{">", "<="}, {">=", "<="}, {">", "<"}} {
			t.Run(d.Name()+" "+ops[0]+" "+ops[1], func(t *testing.T) {
				plan := mustPlan(t, "SELECT CounterID, count() AS n FROM hits WHERE EventDate "+ops[0]+" {variables.from} AND EventDate "+ops[1]+
					" {variables.to} GROUP BY CounterID", Options{Engine: d, Types: map[string]variable.Type{"from": variable.Date, "to": variable.Date}})
				q, args, err := plan.Read("stored", map[string]any{"from": date("2013-07-01"), "to": date("2013-07-31")})
				require.NoError(t, err)
				// Every argument of the source branches, which compare
				// EventDate, is a date.
				_, source, ok := strings.Cut(q, "UNION ALL")
				require.True(t, ok, "%v: ok is false", q)
				n := strings.Count(source, "?") + strings.Count(source, "{p") + strings.Count(source, "$")
				require.Greater(t, n, 0)
				for _, a := range args[len(args)-n:] {
					s, ok := a.(string)
					require.True(t, ok, "a bound compared with EventDate: %#v, want a date of %d bytes\n%s", a, len("2013-07-31"), q)
					require.Len(t, s, len("2013-07-31"), "a bound compared with EventDate: %#v, want a date of %d bytes\n%s", a, len("2013-07-31"), q)
				}
			})
		}
	}
}
