package demo_test

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

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

// TestLoadUntil: LoadUntil loads the events of GenerateUntil, ending at
// the given day, and a day later they are Load's shifted by one day.
func TestLoadUntil(t *testing.T) {
	ctx := context.Background()
	end := demo.End.Add(24 * time.Hour)
	db := testdb.SQLite(t)
	require.NoError(t, demo.LoadUntil(ctx, db, 1000, 1, end.Add(5*time.Hour)))
	var gen []string
	require.NoError(t, demo.GenerateUntil(1000, 1, end, func(e demo.Event) error {
		gen = append(gen, e.Timestamp.Format(demo.TimeLayout))
		return nil
	}))
	got := testdb.Strings(t, db, `SELECT timestamp FROM events ORDER BY timestamp, uuid`)
	slices.Sort(gen)
	require.Equal(t, gen, got)
	require.Less(t, got[len(got)-1], end.Format(demo.TimeLayout))
	require.Greater(t, got[len(got)-1], demo.End.Format(demo.TimeLayout), "the events did not move a day later")
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

// The events end at the day given, whatever its hour, the same for the
// same seed and day, and those of another day are the same events shifted
// by whole days: relative dates (-7d) answer on a server started today.
func TestGenerateUntilEndsAtTheDay(t *testing.T) {
	end := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	collect := func(at time.Time) []demo.Event {
		var out []demo.Event
		require.NoError(t, demo.GenerateUntil(400, 3, at, func(e demo.Event) error { out = append(out, e); return nil }))
		return out
	}
	events := collect(end.Add(15*time.Hour + 4*time.Minute))
	got, want := collect(end), events
	require.Equal(t, want, got, "the hour of the end does not matter: collect(end)")
	var last time.Time
	for _, e := range events {
		require.False(t, e.Timestamp.Before(end.AddDate(0, 0, -demo.Days)), "%v: e.Timestamp.Before(end.AddDate(0, 0, -demo.Days)) is true", e.Timestamp)
		require.True(t, e.Timestamp.Before(end), "%v: e.Timestamp.Before(end) is false", e.Timestamp)
		if e.Timestamp.After(last) {
			last = e.Timestamp
		}
	}
	if got, want := demo.Day(last), end.AddDate(0, 0, -1); !reflect.DeepEqual(got, want) {
		t.Fatalf("the last events are of the day before the end: demo.Day(last) = %+v, want %+v", got, want)
	}
	var week int
	for _, e := range events {
		if !e.Timestamp.Before(end.AddDate(0, 0, -7)) {
			week++
		}
	}
	a, b := week, 0
	require.True(t, (a > b), "the last 7 days hold events: week = %v, want > %v", a, b)
	var old []demo.Event
	require.NoError(t, demo.Generate(400, 3, func(e demo.Event) error { old = append(old, e); return nil }))
	shift := end.Sub(demo.End)
	for i := range old {
		old[i].Timestamp = old[i].Timestamp.Add(shift)
	}
	if got, want := events, old; !reflect.DeepEqual(got, want) {
		t.Fatalf("another end shifts the same events: events = %+v, want %+v", got, want)
	}

	db := testdb.SQLite(t)
	ctx := context.Background()
	for _, s := range demo.SchemaFor(engine.SQLite) {
		_, err := db.ExecContext(ctx, s)
		require.NoError(t, err)
	}
	tx, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	require.NoError(t, demo.InsertUntil(ctx, execer{tx}, engine.SQLite, "1", 400, 3, end))
	require.NoError(t, tx.Commit())
	var maxTS string
	require.NoError(t, db.QueryRow("SELECT max(timestamp) FROM events").Scan(&maxTS))
	if got, want := maxTS, last.Format(demo.TimeLayout); got != want {
		t.Fatalf("maxTS = %q, want %q", got, want)
	}
}

type execer struct{ tx *sql.Tx }

func (x execer) Load(ctx context.Context, q string, args []any) error {
	_, err := x.tx.ExecContext(ctx, q, args...)
	return err
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
