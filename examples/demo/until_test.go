package demo_test

import (
	"context"
	"database/sql"
	"reflect"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
)

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
