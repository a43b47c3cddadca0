package sqliteinterrupt_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/sqlexec/sqliteinterrupt"
	_ "modernc.org/sqlite"
)

// TestInterruptsAFollowingRow: the interrupt For returns stops a query
// whose work comes after its first row, which the driver itself no longer
// interrupts, and is a no-op once the connection is closed.
func TestInterruptsAFollowingRow(t *testing.T) {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "i.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var interrupt func()
	if err := conn.Raw(func(dc any) error {
		interrupt, err = sqliteinterrupt.For(dc)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.QueryContext(ctx, "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r WHERE n = 1 OR n < 0")
	if err != nil {
		t.Fatal(err)
	}
	if !rows.Next() {
		t.Fatalf("no first row: %v", rows.Err())
	}
	timer := time.AfterFunc(100*time.Millisecond, interrupt)
	defer timer.Stop()
	done := make(chan error, 1)
	go func() {
		for rows.Next() {
		}
		done <- rows.Err()
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "interrupt") {
			t.Fatalf("the second row: %v, want an interrupt", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("not interrupted 5 s after the interrupt")
	}
	rows.Close()
	// The connection runs the next query, and closed it ignores the call.
	var one int
	if err := conn.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("the next query: %d, %v", one, err)
	}
	if err := conn.Raw(func(dc any) error { return dc.(interface{ Close() error }).Close() }); err != nil {
		t.Fatal(err)
	}
	interrupt()
	conn.Close()
}

// TestForRefusesOtherConnections: a connection that is not the driver's is
// refused with ErrNotModernc, never interrupted by guess.
func TestForRefusesOtherConnections(t *testing.T) {
	type conn struct{ db uintptr }
	for _, dc := range []any{nil, 1, &conn{}, (*conn)(nil), "conn"} {
		if f, err := sqliteinterrupt.For(dc); !errors.Is(err, sqliteinterrupt.ErrNotModernc) || f != nil {
			t.Errorf("For(%#v): %v, want ErrNotModernc", dc, err)
		}
	}
}
