package main

import (
	"encoding/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"io"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
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
	got, want := statuses(runSession(t, s.session(t), nil)), sessionStatuses
	require.Equal(t, want, got, "statuses(runSession(t, s.session(t), nil))")
	base := s.url()
	if s, sub := s.out.String(), "metrics:     "+base+"/metrics"; !strings.Contains(s, sub) {
		t.Errorf("%q does not contain %q", s, sub)
	}
	metricsKey := regexp.MustCompile(`metrics:.* key (em_\S+) \(generated`).FindStringSubmatch(s.out.String())
	require.NotNil(t, metricsKey, "no metrics key printed:\n%s: metricsKey is nil", s.out)
	api := base + "/api/projects/1/endpoints/daily_events"

	patch := `{"is_materialized": true, "data_freshness_seconds": 3600, "query": {"kind": "HogQLQuery", ` +
		`"query": "SELECT date(timestamp) AS day, count(*) AS events FROM events WHERE event = {variables.event} AND timestamp >= {variables.from} AND timestamp < {variables.to} GROUP BY day ORDER BY day", ` +
		`"variables": {"` + sessionEventID + `": {"variableId": "` + sessionEventID + `", "code_name": "event"}, "` + sessionFromID + `": {"variableId": "` + sessionFromID + `", "code_name": "from"}, "` + sessionToID + `": {"variableId": "` + sessionToID + `", "code_name": "to"}}}}`
	status, _, raw := opsCall(t, "PATCH", api+"/", patch)
	if got, want := status, http.StatusOK; got != want {
		t.Fatalf("%v: status = %v, want %v", raw, got, want)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, body, raw := opsCall(t, "GET", api+"/materialization_status/", "")
		got, want := status, http.StatusOK
		require.Equal(t, want, got, "%v: status", raw)
		if body["status"] == "completed" {
			break
		}
		require.True(t, (time.Now().Before(deadline)), "not ready within 30 s: %s: time.Now().Before(deadline) is false", raw)
		time.Sleep(20 * time.Millisecond)
	}
	run := `{"variables": {"event": "purchase", "from": "-7d", "to": "dStart"}}`
	_, first, raw := opsCall(t, "POST", api+"/run", run)
	require.Equal(t, true, first["endpoint_materialized"], "%v: first[\"endpoint_materialized\"]", raw)
	_, second, _ := opsCall(t, "POST", api+"/run", run)
	assert.Equal(t, true, second["is_cached"])

	status, logs, raw := opsCall(t, "GET", api+"/logs/?limit=2", "")
	if got, want := status, http.StatusOK; got != want {
		t.Fatalf("%v: status = %v, want %v", raw, got, want)
	}
	entries := logs["results"].([]any)
	require.Len(t, entries, 2)
	assert.Equal(t, second["execution_id"], entries[0].(map[string]any)["execution_id"])

	req, err := http.NewRequest("GET", base+"/metrics", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+metricsKey[1])
	res, err := http.DefaultClient.Do(req)
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

// TestMetricsNeedTheirOwnKeyOrAddress: /metrics names every project's
// endpoints, so on the API's address it answers its own key only (not an
// API key, not nothing); with -metrics-addr it is served there and not on
// the API's address. The cap on endpoint names is a flag.
func TestMetricsNeedTheirOwnKeyOrAddress(t *testing.T) {
	get := func(url, key string) (int, string) {
		req, err := http.NewRequest("GET", url, nil)
		require.NoError(t, err)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return res.StatusCode, string(b)
	}
	s := start(t, []string{"-api-key", "k", "-demo-events", "0", "-metrics-key", "mk"}, nil)
	got, want := statuses(runSession(t, s.session(t), nil)), sessionStatuses
	require.Equal(t, want, got, "statuses(runSession(t, s.session(t), nil))")
	base := s.url()
	assert.NotContains(t, s.out.String(), "mk", "a given metrics key is not printed")
	for _, tc := range []struct {
		key    string
		status int
	}{{"", 401}, {"k", 401}, {"wrong", 401}, {"mk", 200}} {
		status, body := get(base+"/metrics", tc.key)
		got, want := status, tc.status
		assert.Equal(t, want, got, "key %q: %s: status", tc.key, body)
		if got, want := strings.Contains(body, `endpoint="daily_events"`), tc.status == 200; got != want {
			t.Errorf("key %q shows endpoint names: strings.Contains(body, `endpoint=\"daily_events\"`) = %v, want %v", tc.key, got, want)
		}
	}

	s = start(t, []string{"-api-key", "k", "-demo-events", "0", "-metrics-addr", "127.0.0.1:0", "-metrics-max-endpoints", "1"}, nil)
	if got, want := statuses(runSession(t, s.session(t), nil)), sessionStatuses; !reflect.DeepEqual(got, want) {
		t.Fatalf("statuses(runSession(t, s.session(t), nil)) = %+v, want %+v", got, want)
	}
	base = s.url()
	m := regexp.MustCompile(`metrics:\s+(http://\S+/metrics) \(Prometheus, on -metrics-addr`).FindStringSubmatch(s.out.String())
	require.NotNil(t, m, "%s: m is nil", s.out)
	if got, want := m[1], base+"/metrics"; got == want {
		t.Fatalf("m[1] = %q, want anything else", got)
	}
	status, body := get(base+"/metrics", "k")
	if got, want := status, 200; got == want {
		t.Errorf("no metrics on the API's address: %s: status = %v, want anything else", body, got)
	}
	assert.NotContains(t, body, "endpointkit_runs_total")
	status, body = get(m[1], "")
	if got, want := status, 200; got != want {
		t.Fatalf("%v: status = %v, want %v", body, got, want)
	}
	assert.Contains(t, body, `endpoint="daily_events"`)
	// The session ran one endpoint; a second one goes to the other bucket.
	create := `{"name": "second", "query": {"kind": "HogQLQuery", "query": "SELECT 1 AS one"}}`
	status, body = call(t, "POST", base+"/api/projects/1/endpoints/", "k", create)
	if got, want := status, 201; got != want {
		t.Fatalf("%v: status = %v, want %v", body, got, want)
	}
	status, body = call(t, "POST", base+"/api/projects/1/endpoints/second/run", "k", `{}`)
	if got, want := status, 200; got != want {
		t.Fatalf("%v: status = %v, want %v", body, got, want)
	}
	_, body = get(m[1], "")
	assert.Contains(t, body, `endpointkit_runs_total{cached="false",endpoint="_other",materialized="false",project="1",status="200"} 1`)
	assert.NotContains(t, body, `endpoint="second"`)

	for _, bad := range [][]string{{"-metrics-max-endpoints", "-1"}, {"-metrics-key", "a b"}} {
		_, err := parseFlags(bad, func(string) string { return "" }, io.Discard)
		assert.Error(t, err, "%v: got no error, want one", bad)
	}
	c, err := parseFlags(nil, func(k string) string { return map[string]string{envMetricsKey: "from-env"}[k] }, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "from-env", c.metricsKey)
}
