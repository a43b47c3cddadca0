package sqlstore

import (
	"context"
	"errors"
	"testing"
)

func TestClose(t *testing.T) {
	s := openMemory(t)
	ctx := context.Background()
	if err := s.Variables().Create(ctx, "p", variableFixture("a")); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	_, err := s.Variables().Get(ctx, "p", variableFixture("a").ID)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("a second Close is harmless: unexpected error: %v", err)
	}
	_, err = s.Variables().Get(ctx, "p", variableFixture("a").ID)
	if err := err; !errors.Is(err, ErrClosed) {
		t.Errorf("error %v is not %v", err, ErrClosed)
	}
	_, err = s.Endpoints().List(ctx, "p")
	if err := err; !errors.Is(err, ErrClosed) {
		t.Errorf("error %v is not %v", err, ErrClosed)
	}
	if err := s.Variables().Create(ctx, "p", variableFixture("b")); !errors.Is(err, ErrClosed) {
		t.Errorf("error %v is not %v", err, ErrClosed)
	}
	// The database itself stays open: it belongs to the caller.
	if err := s.db.Ping(); err != nil {
		t.Errorf("unexpected error: %v", err)
	}
}

func TestPreparedStatementsAreReused(t *testing.T) {
	s := openMemory(t)
	ctx := context.Background()
	e, v := endpointFixture("p", "a")
	if err := s.Endpoints().Create(ctx, e, v); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	for i := 0; i < 3; i++ {
		_, err := s.Endpoints().Get(ctx, "p", "a")
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
	}
	s.prep.mu.Lock()
	defer s.prep.mu.Unlock()
	if got := len(s.prep.stmts); got != 1 {
		t.Errorf("one statement for three reads: len(s.prep.stmts) = %d, want %d: %v", got, 1, s.prep.stmts)
	}
	if _, ok := s.prep.stmts[s.q.epGet]; !ok {
		t.Errorf("no key %v in %v", s.q.epGet, s.prep.stmts)
	}
}
