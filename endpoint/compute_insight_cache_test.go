package endpoint

import (
	"context"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/require"
)

// noRows answers every query with no rows.
type noRows struct{ queries int }

func (x *noRows) Engine() engine.Engine { return engine.SQLite }
func (x *noRows) Query(context.Context, driver.Statement, driver.Bounds) (*driver.Result, error) {
	x.queries++
	return &driver.Result{}, nil
}
func (x *noRows) Exec(context.Context, []driver.Statement, driver.Write) error { return nil }

// TestInsightDecodedOnce: the decoded insight query is cached with the
// version at save, and runs use that very value instead of decoding again.
func TestInsightDecodedOnce(t *testing.T) {
	ctx := context.Background()
	exec := &noRows{}
	s, err := New(Config{Endpoints: memstore.New(), Variables: variable.NewMemoryStore(), Executor: exec})
	require.NoError(t, err)
	q := Query{Kind: KindTrends, Insight: []byte(`{"kind": "TrendsQuery", "series": [{"kind": "EventsNode", "event": "$pageview"}],
		"breakdownFilter": {"breakdown": "$browser", "breakdown_type": "event"}}`)}
	ep, err := s.Create(ctx, "1", CreateRequest{Name: "t", Query: &q})
	require.NoError(t, err)
	c, _, _, _ := s.cache.get(cacheKey{"1", ep.ID, 1})
	if c == nil || c.insight == nil || len(c.insight.Breakdowns) != 1 || c.insight.Breakdowns[0].Property != "$browser" {
		t.Fatalf("cached after create: %+v", c)
	}
	saved := *c.insight
	for _, vars := range []map[string]any{nil, {"$browser": "Chrome", "date_from": "2025-05-01"}} {
		_, err := s.Run(ctx, "1", "t", RunRequest{Variables: vars})
		require.NoError(t, err)
		again, _, _, _ := s.cache.get(cacheKey{"1", ep.ID, 1})
		if again != c {
			t.Fatal("a run replaced the cached compiled version")
		}
	}
	if exec.queries != 2 || len(c.insight.Properties) != len(saved.Properties) || c.insight.DateRange != saved.DateRange {
		t.Fatalf("queries %d; the cached query was changed by a run: %+v", exec.queries, c.insight)
	}
}
