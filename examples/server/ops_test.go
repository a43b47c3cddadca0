package main

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// opsCall sends a request to the server's API with the key k.
func opsCall(t *testing.T, method, url, body string) (int, map[string]any, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer k")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return res.StatusCode, m, string(raw)
}

// TestServerOperations: the server refreshes an endpoint made materialized
// at once (its scheduler runs), caches answers, logs runs, and serves
// Prometheus metrics of all of it at /metrics.
func TestServerOperations(t *testing.T) {
	s := start(t, []string{"-api-key", "k", "-demo-events", "2000"}, nil)
	require.Equal(t, sessionStatuses, statuses(runSession(t, s.session(t), nil)))
	base := regexp.MustCompile(`server on (http://\S+)`).FindStringSubmatch(s.out.String())[1]
	assert.Contains(t, s.out.String(), "metrics:     "+base+"/metrics")
	api := base + "/api/projects/1/endpoints/daily_events"

	patch := `{"is_materialized": true, "data_freshness_seconds": 3600, "query": {"kind": "HogQLQuery", ` +
		`"query": "SELECT date(timestamp) AS day, count(*) AS events FROM events WHERE event = {variables.event} AND timestamp >= {variables.from} AND timestamp < {variables.to} GROUP BY day ORDER BY day", ` +
		`"variables": {"` + sessionEventID + `": {"variableId": "` + sessionEventID + `", "code_name": "event"}, "` + sessionFromID + `": {"variableId": "` + sessionFromID + `", "code_name": "from"}, "` + sessionToID + `": {"variableId": "` + sessionToID + `", "code_name": "to"}}}}`
	status, _, raw := opsCall(t, "PATCH", api+"/", patch)
	require.Equal(t, http.StatusOK, status, raw)
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, body, raw := opsCall(t, "GET", api+"/materialization_status/", "")
		require.Equal(t, http.StatusOK, status, raw)
		if body["status"] == "completed" {
			break
		}
		require.True(t, time.Now().Before(deadline), "not ready within 30 s: %s", raw)
		time.Sleep(20 * time.Millisecond)
	}
	run := `{"variables": {"event": "purchase", "from": "2025-05-01", "to": "2025-05-08"}}`
	_, first, raw := opsCall(t, "POST", api+"/run", run)
	require.Equal(t, true, first["endpoint_materialized"], raw)
	_, second, _ := opsCall(t, "POST", api+"/run", run)
	assert.Equal(t, true, second["is_cached"])

	status, logs, raw := opsCall(t, "GET", api+"/logs/?limit=2", "")
	require.Equal(t, http.StatusOK, status, raw)
	entries := logs["results"].([]any)
	require.Len(t, entries, 2)
	assert.Equal(t, second["execution_id"], entries[0].(map[string]any)["execution_id"])

	res, err := http.Get(base + "/metrics")
	require.NoError(t, err)
	defer res.Body.Close()
	text, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
	for _, want := range []string{
		`endpointkit_runs_total{cached="false",endpoint="daily_events",materialized="true",project="1",status="200"} 1`,
		`endpointkit_runs_total{cached="true",endpoint="daily_events",materialized="true",project="1",status="200"} 1`,
		`endpointkit_run_errors_total{code="required_variable_missing",endpoint="daily_events",project="1"} 1`,
		`endpointkit_cache_hits_total{endpoint="daily_events",project="1"} 1`,
		`endpointkit_refreshes_total{endpoint="daily_events",project="1",result="ok",trigger="saved"} 1`,
		`endpointkit_run_duration_seconds_bucket{cached="true",endpoint="daily_events",project="1",le=`,
		`endpointkit_refresh_duration_seconds_count{endpoint="daily_events",project="1"} 1`,
		`go_goroutines `,
	} {
		assert.Contains(t, string(text), want)
	}
}
