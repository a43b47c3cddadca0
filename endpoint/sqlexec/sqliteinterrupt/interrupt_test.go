package sqliteinterrupt_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/sqlexec/sqliteinterrupt"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInterruptsAFollowingRow: the interrupt For returns stops a query
// whose work comes after its first row, which the driver itself no longer
// interrupts, and is a no-op once the connection is closed.
func TestInterruptsAFollowingRow(t *testing.T) {
	db := testdb.SQLitePool(t, "file:"+filepath.Join(t.TempDir(), "i.db"), 0)
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	var interrupt func()
	require.NoError(t, conn.Raw(func(dc any) error {
		interrupt, err = sqliteinterrupt.For(dc)
		return err
	}))
	rows, err := conn.QueryContext(ctx, "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r WHERE n = 1 OR n < 0")
	require.NoError(t, err)
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
		require.ErrorContains(t, err, "interrupt", "the second row")
	case <-time.After(5 * time.Second):
		t.Fatal("not interrupted 5 s after the interrupt")
	}
	rows.Close()
	// The connection runs the next query, and closed it ignores the call.
	var one int
	if err := conn.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("the next query: %d, %v", one, err)
	}
	require.NoError(t, conn.Raw(func(dc any) error { return dc.(interface{ Close() error }).Close() }))
	interrupt()
	conn.Close()
}

// TestForRefusesOtherConnections: a connection that is not the driver's is
// refused with ErrNotModernc, never interrupted by guess.
func TestForRefusesOtherConnections(t *testing.T) {
	type conn struct{ db uintptr }
	for _, dc := range []any{nil, 1, &conn{}, (*conn)(nil), "conn"} {
		f, err := sqliteinterrupt.For(dc)
		if assert.ErrorIs(t, err, sqliteinterrupt.ErrNotModernc, "For(%#v): %v, want ErrNotModernc", dc, err) {
			assert.Nil(t, f, "For(%#v): %v, want ErrNotModernc", dc, err)
		}
	}
}
