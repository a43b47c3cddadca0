package main

import (
	"encoding/json"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/internal/exampleserver"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/stretchr/testify/require"
)

// serverBinary builds the server once per test binary.
var serverBinary = exampleserver.Binary

// fleetCall sends a JSON request with credential cred and returns the status
// and decoded body.
func fleetCall(t *testing.T, method, url, cred, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+cred)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

// testFleet starts two server processes on one store with args and shows
// that together they allow a stored key's, an embed token's and a
// project's budget once: each budget's runs alternate between the two,
// and the run past the budget is refused by whichever gets it.
func testFleet(t *testing.T, args ...string) {
	const (
		apiKey     = "fleet-key"
		projectMax = 7 // runs of the project per minute
	)
	// A project of its own, so that a shared Redis keeps no count of an
	// earlier run of the test.
	project := "fleet" + strconv.FormatInt(time.Now().UnixNano(), 36)
	args = append(args, "-api-key", apiKey, "-project", project, "-demo-events", "50", "-embed-secret", "0123456789abcdef-fleet",
		"-project-runs-per-minute", "7", "-project-runs-per-hour", "0", "-project-concurrency", "0", "-cache-bytes", "0")
	a := exampleserver.Start(t, args...)
	b := exampleserver.Start(t, args...)
	servers := []string{a, b}
	api := "/api/projects/" + project + "/"

	status, body := fleetCall(t, "POST", a+api+"endpoints/", apiKey,
		`{"name": "fleet", "query": {"kind": "HogQLQuery", "query": "SELECT count(*) AS n FROM events"}}`)
	require.Equal(t, http.StatusCreated, status, "creating the endpoint: %v", body)
	run := api + "endpoints/fleet/run"
	runs := 0 // the project's runs admitted so far

	// A stored key of 2 runs per minute: 2 runs, one on each server, then
	// refused on both.
	status, body = fleetCall(t, "POST", a+api+"keys/", apiKey, `{"name": "fleet", "scopes": ["endpoint:read"], "runs_per_minute": 2}`)
	require.Equal(t, http.StatusCreated, status, "creating a key: %v", body)
	key := body["key"].(string)
	for i, srv := range servers {
		status, body = fleetCall(t, "POST", srv+run, key, `{}`)
		require.Equal(t, http.StatusOK, status, "the key's run %d: %v", i+1, body)
		runs++
	}
	for _, srv := range servers {
		status, body = fleetCall(t, "POST", srv+run, key, `{}`)
		require.Equal(t, http.StatusTooManyRequests, status, "a third run of a key of 2 runs per minute, on %s: %v", srv, body)
		require.Contains(t, body["detail"], "this API key may start 2 runs")
	}

	// An embed token of rpm 2, the same.
	status, body = fleetCall(t, "POST", b+api+"embed_tokens/", apiKey, `{"endpoints": ["fleet"], "rpm": 2}`)
	require.Equal(t, http.StatusCreated, status, "minting a token: %v", body)
	token := body["token"].(string)
	for i, srv := range servers {
		status, body = fleetCall(t, "POST", srv+run, token, `{}`)
		require.Equal(t, http.StatusOK, status, "the token's run %d: %v", i+1, body)
		runs++
	}
	for _, srv := range servers {
		status, body = fleetCall(t, "POST", srv+run, token, `{}`)
		require.Equal(t, http.StatusTooManyRequests, status, "a third run of a token of rpm 2, on %s: %v", srv, body)
		require.Contains(t, body["detail"], "this embed token may start 2 runs")
	}

	// The project: runs of the unlimited key up to projectMax in all.
	for i := 0; runs < projectMax; i++ {
		status, body = fleetCall(t, "POST", servers[i%2]+run, apiKey, `{}`)
		require.Equal(t, http.StatusOK, status, "the project's run %d of %d: %v", runs+1, projectMax, body)
		runs++
	}
	for _, srv := range servers {
		status, body = fleetCall(t, "POST", srv+run, apiKey, `{}`)
		require.Equal(t, http.StatusTooManyRequests, status, "run %d of a project of %d per minute, on %s: %v", projectMax+1, projectMax, srv, body)
		require.Contains(t, body["detail"], "may start 7 runs per minute (project_runs_per_minute)")
	}
}

// TestFleetOnPostgres: two server processes on one PostgreSQL store,
// counting budgets in it (-budgets store), allow each budget once.
func TestFleetOnPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the server binary twice")
	}
	dsn := testdb.PostgresDSN(t)
	testFleet(t, "-driver", "postgres", "-dsn", dsn, "-budgets", "store")
}

// TestFleetOnRedis: two server processes on one store, counting budgets
// in Redis (-redis), allow each budget once.
func TestFleetOnRedis(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the server binary twice")
	}
	url := os.Getenv("ENDPOINTKIT_TEST_REDIS")
	if url == "" {
		t.Skip("set ENDPOINTKIT_TEST_REDIS to a redis:// URL (scripts/engines up redis) to test budgets in Redis")
	}
	dsn := testdb.PostgresDSN(t)
	testFleet(t, "-driver", "postgres", "-dsn", dsn, "-redis", url)
}
