package main

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/engine"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/variable"
)

// TestRefreshLoop: the loop materializes a pending endpoint without being
// asked, and returns once its context is done.
func TestRefreshLoop(t *testing.T) {
	db, err := sql.Open("sqlite", ":memory:")
	require.NoError(t, err)
	db.SetMaxOpenConns(1)
	defer db.Close()
	ctx := context.Background()
	require.NoError(t, demo.Load(ctx, db, 500, 1))
	svc, err := endpoint.New(endpoint.Config{
		Endpoints: endpoint.NewMemoryStore(),
		Variables: variable.NewMemoryStore(),
		Executor:  sqlexec.New(db, engine.SQLite),
	})
	require.NoError(t, err)
	v, err := svc.CreateVariable(ctx, "1", variable.Variable{Name: "Event", Type: variable.String})
	require.NoError(t, err)
	_, err = svc.Create(ctx, "1", endpoint.CreateRequest{
		Name:           "by_event",
		IsMaterialized: true,
		Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT count(*) AS n FROM events WHERE event = {variables.event}",
			Variables: map[string]endpoint.VariableRef{v.ID: {VariableID: v.ID, CodeName: "event"}}},
	})
	require.NoError(t, err)

	lctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	log := &syncBuffer{}
	go func() { defer close(done); refreshLoop(lctx, svc, 10*time.Millisecond, log) }()
	require.Eventually(t, func() bool {
		e, err := svc.Get(ctx, "1", "by_event")
		return err == nil && e.Materialization.Status == endpoint.StatusCompleted
	}, 10*time.Second, 5*time.Millisecond)
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the loop did not stop")
	}
	require.Contains(t, log.String(), "materialized 1 endpoint(s)")
	res, err := svc.Run(ctx, "1", "by_event", endpoint.RunRequest{Variables: map[string]any{"event": "purchase"}})
	require.NoError(t, err)
	require.True(t, res.EndpointMaterialized)
}
