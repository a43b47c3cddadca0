package demo_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"

	"github.com/endpointkit/endpointkit/endpoint/engine"
	"github.com/endpointkit/endpointkit/examples/demo"
)

func TestGenerateIsDeterministicAndInRange(t *testing.T) {
	var first, second []demo.Event
	require.NoError(t, demo.Generate(500, 7, func(e demo.Event) error { first = append(first, e); return nil }))
	require.NoError(t, demo.Generate(500, 7, func(e demo.Event) error { second = append(second, e); return nil }))
	require.Equal(t, first, second)
	users := map[string]bool{}
	start := demo.End.AddDate(0, 0, -demo.Days)
	for _, e := range first {
		users[e.DistinctID] = true
		require.False(t, e.Timestamp.Before(start), e.Timestamp)
		require.True(t, e.Timestamp.Before(demo.End), e.Timestamp)
		require.Equal(t, e.Event == "purchase", e.Properties.Amount != nil)
	}
	require.LessOrEqual(t, len(users), demo.Users(500))
	var other []demo.Event
	require.NoError(t, demo.Generate(500, 8, func(e demo.Event) error { other = append(other, e); return nil }))
	require.NotEqual(t, first, other)
}

func TestLoad(t *testing.T) {
	db, err := sql.Open("sqlite", ":memory:")
	require.NoError(t, err)
	db.SetMaxOpenConns(1)
	defer db.Close()
	ctx := context.Background()
	require.NoError(t, demo.Load(ctx, db, 1000, 1))
	var n, purchases int
	var minTS, maxTS string
	require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*), min(timestamp), max(timestamp) FROM events`).Scan(&n, &minTS, &maxTS))
	require.Equal(t, 1000, n)
	require.GreaterOrEqual(t, minTS, demo.End.AddDate(0, 0, -demo.Days).Format(demo.TimeLayout))
	require.Less(t, maxTS, demo.End.Format(demo.TimeLayout))
	require.NoError(t, db.QueryRowContext(ctx,
		`SELECT count(*) FROM events WHERE event = 'purchase' AND json_extract(properties, '$.amount') > 0`).Scan(&purchases))
	require.Greater(t, purchases, 0)
	var browser string
	require.NoError(t, db.QueryRowContext(ctx, `SELECT json_extract(properties, '$."$browser"') FROM events LIMIT 1`).Scan(&browser))
	require.Contains(t, demo.Browsers, browser)
}

func BenchmarkLoad100k(b *testing.B) {
	for b.Loop() {
		db, err := sql.Open("sqlite", ":memory:")
		require.NoError(b, err)
		db.SetMaxOpenConns(1)
		require.NoError(b, demo.Load(context.Background(), db, 100000, 1))
		db.Close()
	}
}

// TestInsertProjects loads two projects through the engine-neutral schema
// and insert: each project has its own rows, the same events under the
// same seed, and the same uuids without colliding.
func TestInsertProjects(t *testing.T) {
	db, err := sql.Open("sqlite", ":memory:")
	require.NoError(t, err)
	db.SetMaxOpenConns(1)
	defer db.Close()
	ctx := context.Background()
	for _, stmt := range demo.SchemaFor(engine.SQLite) {
		_, err := db.ExecContext(ctx, stmt)
		require.NoError(t, err, stmt)
	}
	require.NoError(t, demo.Insert(ctx, db, engine.SQLite, "1", 400, 1))
	require.NoError(t, demo.Insert(ctx, db, engine.SQLite, "2", 250, 2))
	rows, err := db.QueryContext(ctx, `SELECT project_id, count(*), count(DISTINCT uuid) FROM events GROUP BY project_id ORDER BY project_id`)
	require.NoError(t, err)
	defer rows.Close()
	var got []string
	for rows.Next() {
		var p string
		var n, distinct int
		require.NoError(t, rows.Scan(&p, &n, &distinct))
		require.Equal(t, n, distinct)
		got = append(got, fmt.Sprintf("%s:%d", p, n))
	}
	require.Equal(t, []string{"1:400", "2:250"}, got)
}
