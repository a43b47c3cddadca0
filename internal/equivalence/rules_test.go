package equivalence

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The rules-by-state matrix on every engine: a request is accepted or
// refused by the rules of the endpoint's state (inline or materialized),
// the same whether an answer is cached or not and whatever the refresh
// mode, and with the same words on every engine.

// ruleRequest is one request of the matrix.
type ruleRequest struct {
	name  string
	vars  map[string]any
	limit int
}

// ruleSpec is an endpoint of the matrix and the requests made of it.
type ruleSpec struct {
	spec
	requests []ruleRequest
}

func ruleSpecs() []ruleSpec {
	byEvent := spec{name: "rules_sql", kind: endpoint.KindSQL, storage: asText, vars: []string{"from", "to"},
		sql: shared(`SELECT event, count(*) AS n FROM events WHERE timestamp >= {variables.from} AND timestamp < {variables.to} GROUP BY event`)}
	trends := spec{name: "rules_trends", kind: endpoint.KindTrends, storage: asText,
		insight: `{"kind": "TrendsQuery", "series": [{"kind": "EventsNode", "event": "$pageview"}], "interval": "day",
			"dateRange": {"date_from": "2025-05-01", "date_to": "2025-05-10"}, "breakdownFilter": {"breakdown": "$browser", "breakdown_type": "event"}}`}
	retention := spec{name: "rules_retention", kind: endpoint.KindRetention, storage: asText,
		insight: `{"kind": "RetentionQuery", "retentionFilter": {"targetEntity": {"id": "signed_up", "type": "events"},
			"returningEntity": {"id": "$pageview", "type": "events"}, "period": "Day", "totalIntervals": 5},
			"dateRange": {"date_from": "2025-05-18", "date_to": "2025-05-31"}, "breakdownFilter": {"breakdown": "$browser", "breakdown_type": "event"}}`}
	return []ruleSpec{
		{byEvent, []ruleRequest{
			{name: "valid", vars: map[string]any{"from": "2025-05-01", "to": "2025-05-08"}},
			{name: "missing", vars: map[string]any{"from": "2025-05-01"}},
			{name: "unknown", vars: map[string]any{"from": "2025-05-01", "to": "2025-05-08", "nope": 1}},
			{name: "wrong type", vars: map[string]any{"from": "2025-05-01", "to": true}},
			{name: "limit", vars: map[string]any{"from": "2025-05-01", "to": "2025-05-08"}, limit: 2},
		}},
		{trends, []ruleRequest{
			{name: "none", vars: map[string]any{}},
			{name: "breakdown", vars: map[string]any{"$browser": "Chrome"}},
			{name: "dates", vars: map[string]any{"date_from": "2025-05-03"}},
			{name: "breakdown and dates", vars: map[string]any{"$browser": "Chrome", "date_to": "2025-05-08"}},
			{name: "unknown", vars: map[string]any{"$browser": "Chrome", "nope": "x"}},
			{name: "wrong type", vars: map[string]any{"$browser": "Chrome", "date_from": "someday"}},
			{name: "limit", vars: map[string]any{"$browser": "Chrome"}, limit: 3},
		}},
		{retention, []ruleRequest{
			{name: "none", vars: map[string]any{}},
			{name: "breakdown", vars: map[string]any{"$browser": "Chrome"}},
			{name: "dates", vars: map[string]any{"$browser": "Chrome", "date_from": "2025-05-20"}},
		}},
	}
}

// ruleVerdict is what the rules decided of a request: 200, or the status,
// code and detail of the refusal.
func ruleVerdict(err error) string {
	if err == nil {
		return "200"
	}
	var e *endpoint.Error
	if errors.As(err, &e) {
		return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Detail)
	}
	return "error: " + err.Error()
}

// TestRulesOnEveryEngine is the rules-by-state matrix on every engine that
// is up: for SQL, Trends and Retention endpoints, inline, materialized and
// inline again, each request gets the same verdict from the cache (before
// and after force filled it), with force, authenticated by a stored API
// key, through the endpoint's MCP tool and, materialized, with direct;
// and every engine gives SQLite's verdicts. A SQL endpoint's request
// answered in CSV or NDJSON over HTTP gets the verdict of the Go API.
func TestRulesOnEveryEngine(t *testing.T) {
	t.Parallel() // beside the other matrices: see engineParallel
	var (
		mu   sync.Mutex
		seen = map[string]map[string]string{} // engine -> case -> verdict
	)
	t.Run("engines", func(t *testing.T) {
		eachTarget(t, func(t *testing.T, _ int, tg target) {
			got := rulesOn(t, tg)
			mu.Lock()
			seen[tg.name()] = got
			mu.Unlock()
		})
	})
	ref := seen["sqlite"]
	require.NotEmpty(t, ref, "SQLite did not run")
	// The rules themselves, where the states part.
	for id, want := range map[string]string{
		"rules_trends inline, dates":              "200",
		"rules_trends materialized, dates":        "400 unknown_variable: Unknown variable(s): date_from",
		"rules_trends materialized, none":         "400 required_variable_missing: Required variable(s) '$browser' not provided",
		"rules_trends inline again, none":         "200",
		"rules_trends inline, limit":              "400 invalid_input: limit and offset apply to SQL endpoints only; an insight endpoint returns its whole result.",
		"rules_retention materialized, dates":     "400 unknown_variable: Unknown variable(s): date_from",
		"rules_sql materialized, missing":         "400 required_variable_missing: Required variable(s) 'to' not provided",
		"rules_sql inline, valid":                 "200",
		"rules_trends materialized, breakdown":    "200",
		"rules_retention inline again, breakdown": "200",
	} {
		assert.Equal(t, want, ref[id], "%s", id)
	}
	for name, got := range seen {
		for id, want := range ref {
			assert.Equal(t, want, got[id], "%s %s", name, id)
		}
	}
}

// rulesOn runs the matrix on one engine and returns each case's verdict.
func rulesOn(t *testing.T, tg target) map[string]string {
	ctx := context.Background()
	svcs, _ := tg.servicesOf(t, []storage{asText}, fixture{demoEvents: demoEvents, cache: true})
	svc := svcs[asText]
	out := map[string]string{}
	for _, rs := range ruleSpecs() {
		q := &endpoint.Query{Kind: rs.kind}
		if rs.kind == endpoint.KindSQL {
			q.SQL, q.Variables = rs.sql(tg.d), refs(rs.vars)
		} else {
			q.Insight = []byte(rs.insight)
		}
		if _, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: rs.name, Query: q}); err != nil {
			t.Fatalf("%s: %s", rs.name, describe(err))
		}
		for _, state := range []string{"inline", "materialized", "inline again"} {
			if state != "inline" {
				on := state == "materialized"
				if _, err := svc.Update(ctx, "1", rs.name, endpoint.UpdateRequest{IsMaterialized: &on}); err != nil {
					t.Fatalf("%s %s: %s", rs.name, state, describe(err))
				}
				if on {
					if err := svc.Materialize(ctx, "1", rs.name); err != nil {
						t.Fatalf("%s: materialize: %s", rs.name, describe(err))
					}
				}
			}
			for _, r := range rs.requests {
				run := func(refresh string) string {
					req := endpoint.RunRequest{Variables: r.vars, Refresh: refresh}
					if r.limit > 0 {
						req.Limit = &r.limit
					}
					_, err := svc.Run(ctx, "1", rs.name, req)
					return ruleVerdict(err)
				}
				id := fmt.Sprintf("%s %s, %s", rs.name, state, r.name)
				before := run(endpoint.RefreshCache)
				forced := run(endpoint.RefreshForce)
				after := run(endpoint.RefreshCache)
				// A run authenticated by a stored key obeys the same rules.
				keyed, err := keyedRequest(ctx, rs.name, endpoint.RunRequest{Variables: r.vars})
				require.NoError(t, err, "%s: stored key", id)
				if r.limit > 0 {
					keyed.Limit = &r.limit
				}
				_, kerr := svc.Run(ctx, "1", rs.name, keyed)
				// The endpoint's MCP tool (package endpoint/mcp) gives the
				// same verdict, in the same words.
				_, mcpErr := mcpRun(ctx, svc, rs.name, r.vars, r.limit, endpoint.RefreshCache)
				ways := []string{before, after, ruleVerdict(kerr), ruleVerdict(mcpErr)}
				if state == "materialized" {
					ways = append(ways, run(endpoint.RefreshDirect))
				}
				if i := slices.IndexFunc(ways, func(v string) bool { return v != forced }); i >= 0 {
					t.Errorf("%s %s: %q where force answers %q", tg.name(), id, ways[i], forced)
				}
				if rs.kind == endpoint.KindSQL {
					// Formats: the same verdict over HTTP, in CSV and NDJSON.
					for _, f := range []string{httpapi.FormatCSV, httpapi.FormatNDJSON} {
						body := map[string]any{"variables": r.vars, "refresh": endpoint.RefreshForce, "format": f}
						if r.limit > 0 {
							body["limit"] = r.limit
						}
						if v := httpVerdict(post(svc, "endpoints/"+rs.name+"/run", body)); v != forced {
							t.Errorf("%s %s: %s answers %q where the Go API answers %q", tg.name(), id, f, v, forced)
						}
					}
					// Streamed (the twin without a result cache writes the
					// rows as the engine reads them): the same verdict over
					// HTTP in CSV, NDJSON and Parquet, and from
					// Service.RunRows.
					twin := twinOf(svc)
					for _, f := range []string{httpapi.FormatCSV, httpapi.FormatNDJSON, httpapi.FormatParquet} {
						body := map[string]any{"variables": r.vars, "refresh": endpoint.RefreshForce, "format": f}
						if r.limit > 0 {
							body["limit"] = r.limit
						}
						if v := httpVerdict(post(twin, "endpoints/"+rs.name+"/run", body)); v != forced {
							t.Errorf("%s %s: streamed %s answers %q where the Go API answers %q", tg.name(), id, f, v, forced)
						}
					}
					req := endpoint.RunRequest{Variables: r.vars, Refresh: endpoint.RefreshForce}
					if r.limit > 0 {
						req.Limit = &r.limit
					}
					rw := &discardRows{}
					if _, err := twin.RunRows(ctx, "1", rs.name, req, rw); ruleVerdict(err) != forced {
						t.Errorf("%s %s: RunRows answers %q where Run answers %q", tg.name(), id, ruleVerdict(err), forced)
					} else if err == nil && !rw.began {
						t.Errorf("%s %s: RunRows did not stream the rows", tg.name(), id)
					}
				}
				out[id] = forced
			}
		}
	}
	return out
}

// discardRows is a RowWriter that keeps nothing but whether it began.
type discardRows struct{ began bool }

func (d *discardRows) Begin(*endpoint.RunResult) error { d.began = true; return nil }
func (d *discardRows) Row([]any) error                 { return nil }
