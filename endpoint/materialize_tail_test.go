package endpoint_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/stretchr/testify/require"
)

// propertyDistinct is a property-filtered daily distinct count: the kind
// of query the live tail and exact edges serve.
const propertyDistinct = `SELECT date(timestamp) AS day, count(DISTINCT distinct_id) AS users, count(*) AS n
FROM events WHERE json_extract(properties, '$.country') = {variables.country}
AND timestamp >= {variables.from} AND timestamp < {variables.to} GROUP BY day ORDER BY day`

// TestMaterializedLiveTail: with materialization_tail_column set, rows
// that arrive after the refresh are in the very next run, which still reads
// the stored table (endpoint_materialized, at the build instant) and
// equals the inline run; without it, the stored table misses them until
// the next refresh.
func TestMaterializedLiveTail(t *testing.T) {
	e, _ := newMatEnv(t, 5000)
	q := e.query(propertyDistinct, "country", "from", "to")
	ep := e.createMat(t, "tail", q, endpoint.CreateRequest{MaterializationTail: "timestamp"})
	require.Equal(t, "timestamp", ep.MaterializationTailColumn, "materialization_tail_column")
	e.createMat(t, "stale", q, endpoint.CreateRequest{})
	e.create(t, "inline", q)
	e.materialize(t, "tail")
	e.materialize(t, "stale")
	builtAt := e.get(t, "tail").Materialization.LastMaterializedAt

	// 40 purchases in the US an hour after the build, from new users.
	late := e.clock.Now().Add(time.Hour)
	for i := range 40 {
		_, err := e.db.Exec(`INSERT INTO events (uuid, event, distinct_id, timestamp, properties) VALUES (?, 'purchase', ?, ?, '{"country": "US"}')`,
			"late-"+string(rune('a'+i%26))+string(rune('a'+i/26)), "late-user-"+string(rune('a'+i%26)), late.Format(demo.TimeLayout))
		require.NoError(t, err)
	}
	e.clock.t = e.clock.t.Add(2 * time.Hour)
	for i, vars := range []map[string]any{
		runVars("US", "2025-05-25", "2025-06-03"),
		runVars("US", "2025-05-25T06:30:00Z", "2025-06-01T12:30:00Z"), // unaligned ends
		runVars("US", "2025-06-01T13:00:00Z", "2025-06-02"),           // inside the tail only
		runVars("GB", "2025-05-01", "2025-06-03"),
	} {
		got, want, stale := e.mustRun(t, "tail", vars), e.mustRun(t, "inline", vars), e.mustRun(t, "stale", vars)
		if !got.EndpointMaterialized || got.EndpointMaterializedAt == nil || !got.EndpointMaterializedAt.Equal(*builtAt) {
			t.Fatalf("%v: materialized %v at %v, want at %v", vars, got.EndpointMaterialized, got.EndpointMaterializedAt, builtAt)
		}
		require.Equal(t, want.Results, got.Results, "%v:\ntail", vars)
		// Whole days of the stale table miss the late rows (a range within
		// one day is read from the source, tail or not).
		if i == 0 && reflect.DeepEqual(stale.Results, want.Results) {
			t.Fatalf("%v: the stored table without a tail has the late rows: the test shows nothing", vars)
		}
	}

	// Settings are checked: a column name, SQL endpoints only.
	bad := "timestamp; DROP TABLE events"
	_, err := e.svc.Update(context.Background(), "1", "tail", endpoint.UpdateRequest{MaterializationTail: &bad})
	var ee *endpoint.Error
	if !errors.As(err, &ee) || ee.Attr != "materialization_tail_column" || endpoint.StatusOf(err) != 400 {
		t.Fatalf("bad tail column: %v", err)
	}
	off := ""
	ep, err = e.svc.Update(context.Background(), "1", "tail", endpoint.UpdateRequest{MaterializationTail: &off})
	if err != nil || ep.MaterializationTailColumn != "" || ep.Materialization.LastMaterializedAt != nil {
		t.Fatalf("turning the tail off: %v, %+v (the table built with the tail must not serve)", err, ep.Materialization)
	}
}
