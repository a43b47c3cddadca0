package sqlstore

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClose(t *testing.T) {
	s := openMemory(t)
	ctx := context.Background()
	require.NoError(t, s.Variables().Create(ctx, "p", variableFixture("a")))
	_, err := s.Variables().Get(ctx, "p", variableFixture("a").ID)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "a second Close is harmless")
	_, err = s.Variables().Get(ctx, "p", variableFixture("a").ID)
	assert.ErrorIs(t, err, ErrClosed)
	_, err = s.Endpoints().List(ctx, "p")
	assert.ErrorIs(t, err, ErrClosed)
	assert.ErrorIs(t, s.Variables().Create(ctx, "p", variableFixture("b")), ErrClosed)
	// The database itself stays open: it belongs to the caller.
	assert.NoError(t, s.db.Ping())
}

func TestPreparedStatementsAreReused(t *testing.T) {
	s := openMemory(t)
	ctx := context.Background()
	e, v := endpointFixture("p", "a")
	require.NoError(t, s.Endpoints().Create(ctx, e, v))
	for i := 0; i < 3; i++ {
		_, err := s.Endpoints().Get(ctx, "p", "a")
		require.NoError(t, err)
	}
	s.prep.mu.Lock()
	defer s.prep.mu.Unlock()
	got := len(s.prep.stmts)
	assert.Equal(t, 1, got, "one statement for three reads: len(s.prep.stmts) = %d, want %d: %v", got, 1, s.prep.stmts)
	_, ok := s.prep.stmts[s.q.epGet]
	assert.True(t, ok, "no key %v in %v", s.q.epGet, s.prep.stmts)
}
