package demo_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint/engine"
	"github.com/endpointkit/endpointkit/examples/demo"
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
	require.Equal(t, events, collect(end), "the hour of the end does not matter")
	var last time.Time
	for _, e := range events {
		require.False(t, e.Timestamp.Before(end.AddDate(0, 0, -demo.Days)), e.Timestamp)
		require.True(t, e.Timestamp.Before(end), e.Timestamp)
		if e.Timestamp.After(last) {
			last = e.Timestamp
		}
	}
	require.Equal(t, end.AddDate(0, 0, -1), demo.Day(last), "the last events are of the day before the end")
	var week int
	for _, e := range events {
		if !e.Timestamp.Before(end.AddDate(0, 0, -7)) {
			week++
		}
	}
	require.Greater(t, week, 0, "the last 7 days hold events")
	var old []demo.Event
	require.NoError(t, demo.Generate(400, 3, func(e demo.Event) error { old = append(old, e); return nil }))
	shift := end.Sub(demo.End)
	for i := range old {
		old[i].Timestamp = old[i].Timestamp.Add(shift)
	}
	require.Equal(t, old, events, "another end shifts the same events")

	db, err := sql.Open("sqlite", ":memory:")
	require.NoError(t, err)
	defer db.Close()
	db.SetMaxOpenConns(1)
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
	require.Equal(t, last.Format(demo.TimeLayout), maxTS)
}

type execer struct{ tx *sql.Tx }

func (x execer) Load(ctx context.Context, q string, args []any) error {
	_, err := x.tx.ExecContext(ctx, q, args...)
	return err
}
