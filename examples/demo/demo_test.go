package demo_test

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"slices"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/sql/engine"
)

func TestGenerateIsDeterministicAndInRange(t *testing.T) {
	var first, second []demo.Event
	if err := (demo.Generate(500, 7, func(e demo.Event) error { first = append(first, e); return nil })); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if err := (demo.Generate(500, 7, func(e demo.Event) error { second = append(second, e); return nil })); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got, want := second, first; !reflect.DeepEqual(got, want) {
		t.Fatalf("second = %+v, want %+v", got, want)
	}
	users := map[string]bool{}
	start := demo.End.AddDate(0, 0, -demo.Days)
	for _, e := range first {
		users[e.DistinctID] = true
		if e.Timestamp.Before(start) {
			t.Fatalf("%v: e.Timestamp.Before(start) is true", e.Timestamp)
		}
		if !e.Timestamp.Before(demo.End) {
			t.Fatalf("%v: e.Timestamp.Before(demo.End) is false", e.Timestamp)
		}
		if got, want := e.Properties.Amount != nil, e.Event == "purchase"; got != want {
			t.Fatalf("e.Properties.Amount != nil = %v, want %v", got, want)
		}
	}
	if a, b := len(users), demo.Users(500); !(a <= b) {
		t.Fatalf("len(users) = %v, want <= %v", a, b)
	}
	var other []demo.Event
	if err := (demo.Generate(500, 8, func(e demo.Event) error { other = append(other, e); return nil })); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got, want := other, first; reflect.DeepEqual(got, want) {
		t.Fatalf("other = %+v, want anything else", got)
	}
}

func TestLoad(t *testing.T) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	db.SetMaxOpenConns(1)
	defer db.Close()
	ctx := context.Background()
	if err := demo.Load(ctx, db, 1000, 1); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	var n, purchases int
	var minTS, maxTS string
	if err := db.QueryRowContext(ctx, `SELECT count(*), min(timestamp), max(timestamp) FROM events`).Scan(&n, &minTS, &maxTS); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got, want := n, 1000; got != want {
		t.Fatalf("n = %v, want %v", got, want)
	}
	if a, b := minTS, demo.End.AddDate(0, 0, -demo.Days).Format(demo.TimeLayout); !(a >= b) {
		t.Fatalf("minTS = %v, want >= %v", a, b)
	}
	if a, b := maxTS, demo.End.Format(demo.TimeLayout); !(a < b) {
		t.Fatalf("maxTS = %v, want < %v", a, b)
	}
	if err := db.QueryRowContext(ctx,
		`SELECT count(*) FROM events WHERE event = 'purchase' AND json_extract(properties, '$.amount') > 0`).Scan(&purchases); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if a, b := purchases, 0; !(a > b) {
		t.Fatalf("purchases = %v, want > %v", a, b)
	}
	var browser string
	if err := db.QueryRowContext(ctx, `SELECT json_extract(properties, '$."$browser"') FROM events LIMIT 1`).Scan(&browser); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if s, sub := demo.Browsers, browser; !slices.Contains(s, sub) {
		t.Fatalf("%v does not contain %v", s, sub)
	}
}

func BenchmarkLoad100k(b *testing.B) {
	for b.Loop() {
		db, err := sql.Open("sqlite", ":memory:")
		if err != nil {
			b.Fatalf("unexpected error: %v", err)
		}
		db.SetMaxOpenConns(1)
		if err := demo.Load(context.Background(), db, 100000, 1); err != nil {
			b.Fatalf("unexpected error: %v", err)
		}
		db.Close()
	}
}

// TestInsertProjects loads two projects through the engine-neutral schema
// and insert: each project has its own rows, the same events under the
// same seed, and the same uuids without colliding.
func TestInsertProjects(t *testing.T) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	db.SetMaxOpenConns(1)
	defer db.Close()
	ctx := context.Background()
	for _, stmt := range demo.SchemaFor(engine.SQLite) {
		_, err := db.ExecContext(ctx, stmt)
		if err != nil {
			t.Fatalf("%v: unexpected error: %v", stmt, err)
		}
	}
	if err := demo.Insert(ctx, db, engine.SQLite, "1", 400, 1); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if err := demo.Insert(ctx, db, engine.SQLite, "2", 250, 2); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	rows, err := db.QueryContext(ctx, `SELECT project_id, count(*), count(DISTINCT uuid) FROM events GROUP BY project_id ORDER BY project_id`)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var p string
		var n, distinct int
		if err := rows.Scan(&p, &n, &distinct); err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if got, want := distinct, n; got != want {
			t.Fatalf("distinct = %v, want %v", got, want)
		}
		got = append(got, fmt.Sprintf("%s:%d", p, n))
	}
	if got, want := got, ([]string{"1:400", "2:250"}); !reflect.DeepEqual(got, want) {
		t.Fatalf("got = %+v, want %+v", got, want)
	}
}
