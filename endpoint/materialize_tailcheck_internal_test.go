package endpoint

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/sql/engine"
)

// saveChecks is an Observer that keeps the SaveCheckEvents it is told of.
type saveChecks struct {
	SlogObserver
	mu     sync.Mutex
	events []SaveCheckEvent
}

func (o *saveChecks) ObserveSaveCheck(_ context.Context, ev SaveCheckEvent) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.events = append(o.events, ev)
}

// TestTailColumnUncheckedCounted: a query the syntax tree cannot read is
// saved with its live tail's column unchecked, and that fallback is told
// to the Observer as a SaveCheckEvent (endpoint/metrics counts it in
// endpointkit_unchecked_saves_total), not only logged; a query it reads
// is judged, and tells nothing.
func TestTailColumnUncheckedCounted(t *testing.T) {
	ctx := context.Background()
	obs := &saveChecks{}
	s := &Service{cfg: Config{Executor: edgeStub{e: engine.SQLite}}, observer: obs}
	next := &driver.Endpoint{ProjectID: "1", Name: "weekly"}

	unreadable := &compiled{query: driver.Query{SQL: "SELECT count(* FROM events WHERE timestamp >= {variables.from}"}}
	assert.Equal(t, "", s.tailColumnUnread(ctx, next, unreadable, "timestamp"), "an unreadable query is not judged")
	require.Len(t, obs.events, 1, "the unchecked tail column is told to the observer")
	assert.Equal(t, "1", obs.events[0].Project)
	assert.Equal(t, "weekly", obs.events[0].Endpoint)
	assert.ErrorContains(t, obs.events[0].Err, `the live tail's column "timestamp" could not be checked`)

	derived := &compiled{query: driver.Query{SQL: "SELECT day, count(*) AS n FROM (SELECT distinct_id, min(timestamp) AS day FROM events GROUP BY distinct_id) f WHERE day >= {variables.from} GROUP BY day"}}
	assert.Equal(t, "'timestamp' is not a column of the query's FROM, which gives f (distinct_id, day); the live tail's column is the column holding each row's time among the columns of the query's outermost FROM",
		s.tailColumnUnread(ctx, next, derived, "timestamp"))
	assert.Equal(t, "the query's FROM has no table or alias named 'x' (it reads f (distinct_id, day))", s.tailColumnUnread(ctx, next, derived, "x.day"))
	assert.Equal(t, "", s.tailColumnUnread(ctx, next, derived, "f.day"))
	assert.Len(t, obs.events, 1, "a query the tree reads tells nothing")
}
