package demo_test

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
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
		require.False(t, e.Timestamp.Before(start), "%v: e.Timestamp.Before(start) is true", e.Timestamp)
		require.True(t, e.Timestamp.Before(demo.End), "%v: e.Timestamp.Before(demo.End) is false", e.Timestamp)
		got, want := e.Properties.Amount != nil, e.Event == "purchase"
		require.Equal(t, want, got, "e.Properties.Amount")
	}
	a, b := len(users), demo.Users(500)
	require.True(t, (a <= b), "len(users) = %v, want <= %v", a, b)
	var other []demo.Event
	require.NoError(t, demo.Generate(500, 8, func(e demo.Event) error { other = append(other, e); return nil }))
	require.NotEqual(t, first, other)
}

func TestLoad(t *testing.T) {
	db := testdb.SQLite(t)
	ctx := context.Background()
	require.NoError(t, demo.Load(ctx, db, 1000, 1))
	var n, purchases int
	var minTS, maxTS string
	require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*), min(timestamp), max(timestamp) FROM events`).Scan(&n, &minTS, &maxTS))
	require.Equal(t, 1000, n)
	a, b := minTS, demo.End.AddDate(0, 0, -demo.Days).Format(demo.TimeLayout)
	require.True(t, (a >= b), "minTS = %v, want >= %v", a, b)
	if a, b := maxTS, demo.End.Format(demo.TimeLayout); !(a < b) {
		t.Fatalf("maxTS = %v, want < %v", a, b)
	}
	require.NoError(t, db.QueryRowContext(ctx,
		`SELECT count(*) FROM events WHERE event = 'purchase' AND json_extract(properties, '$.amount') > 0`).Scan(&purchases))
	if a, b := purchases, 0; !(a > b) {
		t.Fatalf("purchases = %v, want > %v", a, b)
	}
	var browser string
	require.NoError(t, db.QueryRowContext(ctx, `SELECT json_extract(properties, '$."$browser"') FROM events LIMIT 1`).Scan(&browser))
	s, sub := demo.Browsers, browser
	require.True(t, slices.Contains(s, sub), "%v does not contain %v", s, sub)
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
	db := testdb.SQLite(t)
	ctx := context.Background()
	for _, stmt := range demo.SchemaFor(engine.SQLite) {
		_, err := db.ExecContext(ctx, stmt)
		require.NoError(t, err, "%v", stmt)
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

// TestGenerateInTimeOrder: the events come in time order (those of one
// second in the order of their uuids), and Load appends them so: the
// table's rows lie in time order, as an events table's do, so that a read
// of a few hours through a time index finds its rows together.
func TestGenerateInTimeOrder(t *testing.T) {
	var events []demo.Event
	require.NoError(t, demo.Generate(3000, 7, func(e demo.Event) error { events = append(events, e); return nil }))
	require.Len(t, events, 3000)
	uuids := map[string]bool{}
	for i, e := range events {
		uuids[e.UUID] = true
		if i == 0 {
			continue
		}
		prev := events[i-1]
		require.False(t, e.Timestamp.Before(prev.Timestamp), "event %d (%s) at %v comes after one at %v", i, e.UUID, e.Timestamp, prev.Timestamp)
		if e.Timestamp.Equal(prev.Timestamp) {
			require.Less(t, prev.UUID, e.UUID, "events %d and %d of the same second", i-1, i)
		}
	}
	require.Len(t, uuids, 3000, "every uuid once")

	db := testdb.SQLite(t)
	ctx := context.Background()
	require.NoError(t, demo.Load(ctx, db, 3000, 7))
	rows, err := db.QueryContext(ctx, `SELECT uuid FROM events ORDER BY rowid`)
	require.NoError(t, err)
	var stored []string
	for _, row := range testdb.Rows(t, rows) {
		stored = append(stored, row[0].(string))
	}
	want := make([]string, len(events))
	for i, e := range events {
		want[i] = e.UUID
	}
	require.Equal(t, want, stored, "the rows in the order they were appended")
}
