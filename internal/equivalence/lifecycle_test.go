package equivalence

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/insight"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lifecycleEvent is an event of the fixture as the lifecycle oracle reads
// it.
type lifecycleEvent struct {
	event, actor string
	ts           time.Time
	props        map[string]any
}

// fixtureEvents are the events of project "1" that load writes: the demo
// events and the edge events.
func fixtureEvents(t *testing.T) []lifecycleEvent {
	t.Helper()
	var out []lifecycleEvent
	add := func(event, actor string, ts time.Time, props []byte) {
		m := map[string]any{}
		require.NoError(t, json.Unmarshal(props, &m))
		out = append(out, lifecycleEvent{event, actor, ts, m})
	}
	require.NoError(t, demo.Generate(demoEvents, 42, func(e demo.Event) error {
		props, err := json.Marshal(e.Properties)
		add(e.Event, e.DistinctID, e.Timestamp, props)
		return err
	}))
	for _, e := range edgeEvents {
		add(e.event, e.who, at(e.at), []byte(e.props))
	}
	return out
}

// lifecycleOracle computes a lifecycle by PostHog's definitions, in plain
// Go: intervals from the one holding from to the one holding the last
// second of the day to; status ->
// users per interval, dormant negative. browser, when not "", keeps the
// events whose $browser is exactly that text.
func lifecycleOracle(events []lifecycleEvent, iv engine.Bucket, event, browser string, from, to time.Time) map[insight.Status][]float64 {
	bucket := func(t time.Time) time.Time {
		switch iv {
		case engine.Hour:
			return t.Truncate(time.Hour)
		case engine.Week:
			d := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
			for d.Weekday() != time.Monday {
				d = d.AddDate(0, 0, -1)
			}
			return d
		case engine.Month:
			return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
		}
		return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	}
	var buckets []time.Time
	last := bucket(to.AddDate(0, 0, 1).Add(-time.Second))
	for b := bucket(from); !b.After(last); {
		buckets = append(buckets, b)
		n := b
		for bucket(n).Equal(b) {
			n = n.Add(time.Hour)
		}
		b = n
	}
	first := map[string]time.Time{}
	active := map[string]map[time.Time]bool{}
	for _, e := range events {
		if f, ok := first[e.actor]; !ok || e.ts.Before(f) {
			first[e.actor] = e.ts
		}
		if event != "" && e.event != event {
			continue
		}
		if b, _ := e.props["$browser"].(string); browser != "" && b != browser {
			continue
		}
		if active[e.actor] == nil {
			active[e.actor] = map[time.Time]bool{}
		}
		active[e.actor][bucket(e.ts)] = true
	}
	out := map[insight.Status][]float64{}
	for _, st := range insight.Statuses() {
		out[st] = make([]float64, len(buckets))
	}
	for actor, periods := range active {
		for i, b := range buckets {
			before := periods[bucket(b.Add(-time.Second))]
			switch {
			case periods[b] && bucket(first[actor]).Equal(b):
				out[insight.New][i]++
			case periods[b] && before:
				out[insight.Returning][i]++
			case periods[b]:
				out[insight.Resurrecting][i]++
			case before:
				out[insight.Dormant][i]--
			}
		}
	}
	return out
}

// lifecycleOf reads the statuses of a lifecycle run.
func lifecycleOf(t *testing.T, res *endpoint.RunResult) map[insight.Status][]float64 {
	t.Helper()
	r, ok := res.Results.(*insight.Result)
	if !ok || r.Kind != insight.Lifecycle || len(r.Lifecycle) != 4 {
		t.Fatalf("not a lifecycle result: %#v", res.Results)
	}
	out := map[insight.Status][]float64{}
	for _, s := range r.Lifecycle {
		out[s.Status] = s.Data
	}
	return out
}

// TestLifecycleOracle: on every engine that is up, and each way timestamps
// are stored, a lifecycle endpoint answers what the oracle computes from
// the fixture's events: inline over its saved range, inline over the range
// of date_from and date_to, and materialized (reading the stored table).
func TestLifecycleOracle(t *testing.T) {
	t.Parallel() // beside the other matrices: see engineParallel
	events := fixtureEvents(t)
	cases := []struct {
		iv             engine.Bucket
		event, browser string
		from, to       string // the saved range
		runFrom, runTo string // date_from and date_to of a run
	}{
		{engine.Day, "$pageview", "", "2025-04-20", "2025-05-31", "2025-05-03", "2025-05-13"},
		{engine.Week, "purchase", "Chrome", "2025-03-05", "2025-05-21", "2025-04-01", "2025-05-31"},
		{engine.Month, "", "", "2025-03-01", "2025-05-31", "2025-04-15", "2025-05-01"},
		{engine.Hour, "$pageview", "", "2025-05-04", "2025-05-06", "2025-05-05", "2025-05-05"},
		// The most intervals a lifecycle takes: interval numbers past 255
		// (ClickHouse's UInt8), the longest statement.
		{engine.Hour, "signed_up", "", "2025-01-27", "2025-05-31", "2025-05-20", "2025-05-31"}, // MaxLifecycleIntervals
	}
	eachTarget(t, func(t *testing.T, _ int, tg target) {
		ctx := context.Background()
		for s, svc := range tg.services(t, []storage{asText, asTimestamp}, demoEvents) {
			for i, c := range cases {
				name := fmt.Sprintf("lifecycle_%d_%s", i, s)
				event, filter := "null", ""
				if c.event != "" {
					event = fmt.Sprintf("%q", c.event)
				}
				if c.browser != "" {
					filter = fmt.Sprintf(`,"properties":[{"key":"$browser","value":%q,"operator":"exact","type":"event"}]`, c.browser)
				}
				q := &endpoint.Query{Kind: endpoint.KindLifecycle, Insight: []byte(fmt.Sprintf(
					`{"kind":"LifecycleQuery","series":[{"kind":"EventsNode","event":%s}],"interval":%q,"dateRange":{"date_from":%q,"date_to":%q}%s}`,
					event, c.iv, c.from, c.to, filter))}
				_, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: name, Query: q})
				require.NoError(t, err, "%s", name)
				check := func(way string, vars map[string]any, from, to string, materialized bool) {
					t.Helper()
					res, err := svc.Run(ctx, "1", name, endpoint.RunRequest{Variables: vars})
					if err != nil {
						t.Fatalf("%s %s: %v (%v)", name, way, err, errors.Unwrap(err)) // the cause: what the engine said
					}
					require.Equal(t, materialized, res.EndpointMaterialized, "%s %s: endpoint_materialized (%s)", name, way, res.InlineReason)
					want := lifecycleOracle(events, c.iv, c.event, c.browser, at(from+" 00:00:00"), at(to+" 00:00:00"))
					got := lifecycleOf(t, res)
					users := 0.0
					for _, st := range insight.Statuses() {
						assert.Equal(t, fmt.Sprint(got[st]), fmt.Sprint(want[st]), "%s %s: %s\n got %v\nwant %v", name, way, st, got[st], want[st])
						for _, v := range want[st] {
							users += v * v
						}
					}
					assert.NotEqual(t, float64(0), users, "%s %s: the oracle finds no users", name, way)
				}
				check("inline", nil, c.from, c.to, false)
				check("inline dates", map[string]any{"date_from": c.runFrom, "date_to": c.runTo}, c.runFrom, c.runTo, false)
				yes := true
				if _, err := svc.Update(ctx, "1", name, endpoint.UpdateRequest{IsMaterialized: &yes}); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				require.NoError(t, svc.Materialize(ctx, "1", name), "%s: materialize", name)
				check("materialized", nil, c.from, c.to, true)
				if _, err := svc.Run(ctx, "1", name, endpoint.RunRequest{Variables: map[string]any{"date_from": c.runFrom}}); err == nil {
					t.Errorf("%s: a materialized lifecycle took date_from", name)
				}
			}
		}
	})
}
