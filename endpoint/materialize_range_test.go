package endpoint_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRangeCondition: two variables bounding one column
// (timestamp >= {variables.from} AND timestamp < {variables.to}) return
// exactly the events of that range, checked against the generator's events
// filtered in Go, for day bounds, date-time bounds, an empty range and a
// range beyond the data.
func TestRangeCondition(t *testing.T) {
	ctx := context.Background()
	n := 20000
	if testing.Short() {
		n = 3000
	}
	const seed = 7
	db, err := demoDB(n, seed)
	require.NoError(t, err)
	defer db.Close()
	var events []demo.Event
	require.NoError(t, demo.Generate(n, seed, func(e demo.Event) error { events = append(events, e); return nil }))

	svc, err := endpoint.New(endpoint.Config{
		Endpoints: memstore.New(),
		Variables: variable.NewMemoryStore(),
		Executor:  sqlexec.New(db, engine.SQLite),
		MaxLimit:  n,
	})
	require.NoError(t, err)
	from, err := svc.CreateVariable(ctx, "1", variable.Variable{Name: "from", Type: variable.Date})
	require.NoError(t, err)
	to, err := svc.CreateVariable(ctx, "1", variable.Variable{Name: "to", Type: variable.Date})
	require.NoError(t, err)
	refs := map[string]endpoint.VariableRef{from.ID: {CodeName: "from"}, to.ID: {CodeName: "to"}}
	for name, text := range map[string]string{
		"range_count": "SELECT count(*) AS n FROM events WHERE timestamp >= {variables.from} AND timestamp < {variables.to}",
		"range_rows":  "SELECT uuid FROM events WHERE timestamp >= {variables.from} AND timestamp < {variables.to} ORDER BY uuid",
	} {
		_, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: name, Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: text, Variables: refs}})
		require.NoError(t, err)
	}

	day := func(s string) time.Time { t, _ := time.Parse(time.DateOnly, s); return t }
	for _, tc := range []struct {
		from, to         string
		fromTime, toTime time.Time
	}{
		{"2025-05-01", "2025-05-08", day("2025-05-01"), day("2025-05-08")},
		{"2025-03-03", "2025-03-04", day("2025-03-03"), day("2025-03-04")},
		{"2025-05-10T06:30:00Z", "2025-05-10T18:15:00Z",
			time.Date(2025, 5, 10, 6, 30, 0, 0, time.UTC), time.Date(2025, 5, 10, 18, 15, 0, 0, time.UTC)},
		{"2025-04-01", "2025-04-01", day("2025-04-01"), day("2025-04-01")},
		{"2025-05-20", "2030-01-01", day("2025-05-20"), day("2030-01-01")},
		{"2020-01-01", "2025-03-05", day("2020-01-01"), day("2025-03-05")},
	} {
		var want []string
		for _, e := range events {
			if !e.Timestamp.Before(tc.fromTime) && e.Timestamp.Before(tc.toTime) {
				want = append(want, e.UUID)
			}
		}
		slices.Sort(want)
		vars := map[string]any{"from": tc.from, "to": tc.to}

		res, err := svc.Run(ctx, "1", "range_count", endpoint.RunRequest{Variables: vars})
		require.NoError(t, err, "%s..%s", tc.from, tc.to)
		if got := res.Results.([][]any)[0][0]; got != int64(len(want)) {
			t.Errorf("%s..%s: count %v, want %d", tc.from, tc.to, got, len(want))
		}

		limit := n
		res, err = svc.Run(ctx, "1", "range_rows", endpoint.RunRequest{Variables: vars, Limit: &limit})
		require.NoError(t, err, "%s..%s", tc.from, tc.to)
		got := []string{}
		for _, row := range res.Results.([][]any) {
			got = append(got, row[0].(string))
		}
		if assert.True(t, slices.Equal(got, append([]string{}, want...)), "%s..%s: %d rows (hasMore %v), want exactly the %d events of the range", tc.from, tc.to, len(got), res.HasMore, len(want)) {
			assert.False(t, res.HasMore, "%s..%s: %d rows (hasMore %v), want exactly the %d events of the range", tc.from, tc.to, len(got), res.HasMore, len(want))
		}
	}
}
