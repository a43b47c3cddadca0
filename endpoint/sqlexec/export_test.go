package sqlexec

import (
	"context"
	"database/sql"
	"testing"
)

// KeptOf returns a function telling how many statements the connection
// of pool, a pool of one connection that keeps statements, keeps now,
// even once the pool has closed it.
func KeptOf(t *testing.T, pool *sql.DB) func() int {
	t.Helper()
	c, err := pool.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var kc *keptConn
	if err := c.Raw(func(dc any) error { kc = dc.(*keptConn); return nil }); err != nil {
		t.Fatal(err)
	}
	return kc.stmts.Len
}
