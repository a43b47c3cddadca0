package main

import (
	"encoding/json"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/internal/exampleserver"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/stretchr/testify/require"
)

// serverBinary is the server's executable: this test binary (TestMain).
func serverBinary() (string, error) { return exampleserver.Binary() }

// callJSON is call with the answer decoded as a JSON object (nil when it
// is not one).
func callJSON(t *testing.T, method, url, cred, body string) (int, map[string]any) {
	t.Helper()
	status, raw := call(t, method, url, cred, body)
	var out map[string]any
	_ = json.Unmarshal([]byte(raw), &out)
	return status, out
}

// spendTwiceAcross runs run with cred, whose budget is 2 runs a minute,
// once on each of the two servers (200), then once more on each: both
// refuse it (429) with refusal in the detail. It returns the runs admitted.
func spendTwiceAcross(t *testing.T, servers []string, run, cred, refusal string) int {
	t.Helper()
	for i, srv := range servers {
		status, body := callJSON(t, "POST", srv+run, cred, `{}`)
		require.Equal(t, http.StatusOK, status, "run %d of a budget of 2: %v", i+1, body)
	}
	for _, srv := range servers {
		status, body := callJSON(t, "POST", srv+run, cred, `{}`)
		require.Equal(t, http.StatusTooManyRequests, status, "a third run of a budget of 2, on %s: %v", srv, body)
		require.Contains(t, body["detail"], refusal)
	}
	return len(servers)
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

	status, body := callJSON(t, "POST", a+api+"endpoints/", apiKey,
		`{"name": "fleet", "query": {"kind": "HogQLQuery", "query": "SELECT count(*) AS n FROM events"}}`)
	require.Equal(t, http.StatusCreated, status, "creating the endpoint: %v", body)
	run := api + "endpoints/fleet/run"
	runs := 0 // the project's runs admitted so far

	// A stored key of 2 runs per minute: 2 runs, one on each server, then
	// refused on both.
	status, body = callJSON(t, "POST", a+api+"keys/", apiKey, `{"name": "fleet", "scopes": ["endpoint:read"], "runs_per_minute": 2}`)
	require.Equal(t, http.StatusCreated, status, "creating a key: %v", body)
	runs += spendTwiceAcross(t, servers, run, body["key"].(string), "this API key may start 2 runs")

	// An embed token of rpm 2, the same.
	status, body = callJSON(t, "POST", b+api+"embed_tokens/", apiKey, `{"endpoints": ["fleet"], "rpm": 2}`)
	require.Equal(t, http.StatusCreated, status, "minting a token: %v", body)
	runs += spendTwiceAcross(t, servers, run, body["token"].(string), "this embed token may start 2 runs")

	// The project: runs of the unlimited key up to projectMax in all.
	for i := 0; runs < projectMax; i++ {
		status, body = callJSON(t, "POST", servers[i%2]+run, apiKey, `{}`)
		require.Equal(t, http.StatusOK, status, "the project's run %d of %d: %v", runs+1, projectMax, body)
		runs++
	}
	for _, srv := range servers {
		status, body = callJSON(t, "POST", srv+run, apiKey, `{}`)
		require.Equal(t, http.StatusTooManyRequests, status, "run %d of a project of %d per minute, on %s: %v", projectMax+1, projectMax, srv, body)
		require.Contains(t, body["detail"], "may start 7 runs per minute (project_runs_per_minute)")
	}
}

// TestFleetOnPostgres: two server processes on one PostgreSQL store,
// counting budgets in it (-budgets store), allow each budget once.
func TestFleetOnPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the server as a process twice")
	}
	dsn := testdb.PostgresDSN(t)
	testFleet(t, "-driver", "postgres", "-dsn", dsn, "-budgets", "store")
}

// TestFleetOnRedis: two server processes on one store, counting budgets
// in Redis (-redis), allow each budget once.
func TestFleetOnRedis(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the server as a process twice")
	}
	url := os.Getenv("ENDPOINTKIT_TEST_REDIS")
	if url == "" {
		t.Skip("set ENDPOINTKIT_TEST_REDIS to a redis:// URL (scripts/engines up redis) to test budgets in Redis")
	}
	dsn := testdb.PostgresDSN(t)
	testFleet(t, "-driver", "postgres", "-dsn", dsn, "-redis", url)
}
