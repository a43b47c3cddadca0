package demo_test

import (
	"context"
	"database/sql"
	"reflect"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/sql/engine"
)

// The events end at the day given, whatever its hour, the same for the
// same seed and day, and those of another day are the same events shifted
// by whole days: relative dates (-7d) answer on a server started today.
func TestGenerateUntilEndsAtTheDay(t *testing.T) {
	end := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	collect := func(at time.Time) []demo.Event {
		var out []demo.Event
		if err := (demo.GenerateUntil(400, 3, at, func(e demo.Event) error { out = append(out, e); return nil })); err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return out
	}
	events := collect(end.Add(15*time.Hour + 4*time.Minute))
	if got, want := collect(end), events; !reflect.DeepEqual(got, want) {
		t.Fatalf("the hour of the end does not matter: collect(end) = %+v, want %+v", got, want)
	}
	var last time.Time
	for _, e := range events {
		if e.Timestamp.Before(end.AddDate(0, 0, -demo.Days)) {
			t.Fatalf("%v: e.Timestamp.Before(end.AddDate(0, 0, -demo.Days)) is true", e.Timestamp)
		}
		if !e.Timestamp.Before(end) {
			t.Fatalf("%v: e.Timestamp.Before(end) is false", e.Timestamp)
		}
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
	if a, b := week, 0; !(a > b) {
		t.Fatalf("the last 7 days hold events: week = %v, want > %v", a, b)
	}
	var old []demo.Event
	if err := (demo.Generate(400, 3, func(e demo.Event) error { old = append(old, e); return nil })); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	shift := end.Sub(demo.End)
	for i := range old {
		old[i].Timestamp = old[i].Timestamp.Add(shift)
	}
	if got, want := events, old; !reflect.DeepEqual(got, want) {
		t.Fatalf("another end shifts the same events: events = %+v, want %+v", got, want)
	}

	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	for _, s := range demo.SchemaFor(engine.SQLite) {
		_, err := db.ExecContext(ctx, s)
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if err := (demo.InsertUntil(ctx, execer{tx}, engine.SQLite, "1", 400, 3, end)); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	var maxTS string
	if err := db.QueryRow("SELECT max(timestamp) FROM events").Scan(&maxTS); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got, want := maxTS, last.Format(demo.TimeLayout); got != want {
		t.Fatalf("maxTS = %q, want %q", got, want)
	}
}

type execer struct{ tx *sql.Tx }

func (x execer) Load(ctx context.Context, q string, args []any) error {
	_, err := x.tx.ExecContext(ctx, q, args...)
	return err
}
