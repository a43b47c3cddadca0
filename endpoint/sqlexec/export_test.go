package sqlexec

import (
	"context"
	"database/sql"
	"github.com/stretchr/testify/require"
	"testing"
)

// KeptOf returns a function telling how many statements the connection
// of pool, a pool of one connection that keeps statements, keeps now,
// even once the pool has closed it.
func KeptOf(t *testing.T, pool *sql.DB) func() int {
	t.Helper()
	c, err := pool.Conn(context.Background())
	require.NoError(t, err)
	defer c.Close()
	var kc *keptConn
	require.NoError(t, c.Raw(func(dc any) error { kc = dc.(*keptConn); return nil }))
	return kc.stmts.Len
}
