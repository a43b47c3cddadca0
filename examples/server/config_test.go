package main

import (
	"context"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/limit"
)

// TestKeys: the flag wins over the environment, the environment over a
// generated key, and the session works with each.
func TestKeys(t *testing.T) {
	cases := []struct {
		name string
		args []string
		env  map[string]string
		key  func(out string) string
	}{
		{"flag", []string{"-api-key", "flag-key"}, map[string]string{envAPIKey: "env-key"}, func(string) string { return "flag-key" }},
		{"environment", nil, map[string]string{envAPIKey: "env-key"}, func(string) string { return "env-key" }},
		{"generated", nil, nil, func(out string) string {
			m := regexp.MustCompile(`API key:\s+(ek_[A-Z2-7]{26}) \(generated`).FindStringSubmatch(out)
			if m == nil {
				return ""
			}
			return m[1]
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := start(t, append([]string{"-demo-events", "0", "-project", "42"}, c.args...), c.env)
			key := c.key(s.out.String())
			v := key
			require.NotEqual(t, "", v, "key not printed:\n%s: key is empty", s.out)
			if c.name == "environment" {
				assert.NotContains(t, s.out.String(), "env-key", "a key from the environment is not printed")
			}
			answers := runSession(t, s.session(t), c.env)
			got, want := statuses(answers), sessionStatuses
			require.Equal(t, want, got, "%v: statuses(answers)", answers)
			assert.Equal(t, []any{}, answers[4].body["results"], "no demo events: no rows: answers[4].body[\"results\"]")

			base := s.url()
			for _, k := range []struct {
				key    string
				status int
			}{{key, 200}, {"wrong" + key, 401}} {
				req, err := http.NewRequest("GET", base+"/api/projects/42/endpoints/", nil)
				require.NoError(t, err)
				req.Header.Set("Authorization", "Bearer "+k.key)
				res, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				res.Body.Close()
				assert.Equal(t, k.status, res.StatusCode)
			}
			// The key is for -project only.
			req, err := http.NewRequest("GET", base+"/api/projects/1/endpoints/", nil)
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer "+key)
			res, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			res.Body.Close()
			assert.Equal(t, http.StatusForbidden, res.StatusCode)
		})
	}
	got, want := newAPIKey(), newAPIKey()
	assert.NotEqual(t, want, got, "newAPIKey()")
}

func TestFlagErrors(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-nope"}, "flag provided but not defined"},
		{[]string{"-demo-events", "-1"}, "-demo-events must be 0 or more"},
		{[]string{"-demo-events", "many"}, "invalid value"},
		{[]string{"-project", ""}, "-project must not be empty"},
		{[]string{"-api-key", "two words"}, "-api-key"},
		{[]string{"extra"}, "unexpected arguments"},
		{[]string{"-addr", busy.Addr().String(), "-demo-events", "0"}, "address already in use"},
		{[]string{"-db", filepath.Join(t.TempDir(), "no", "such", "dir.db")}, "open"},
		{[]string{"-run-timeout", "-1s"}, "-run-timeout must be 0 or more"},
		{[]string{"-refresh-timeout", "-1s"}, "-refresh-timeout must be 0 or more"},
		{[]string{"-max-refreshes", "0"}, "-max-refreshes must be 1 or more"},
		{[]string{"-store", "x.db"}, "-store needs -db"},
		{[]string{"-clickhouse-cluster", "events"}, "-clickhouse-cluster needs -driver clickhouse, not sqlite"},
		{[]string{"-driver", "clickhouse", "-dsn", "clickhouse://127.0.0.1:1/db", "-clickhouse-cluster", "it's"}, "invalid ClickHouse cluster name"},
	}
	for _, c := range cases {
		err := run(context.Background(), c.args, func(string) string { return "" }, io.Discard, io.Discard)
		require.Error(t, err, "%q: got no error, want one", c.args)
		s, sub := err.Error(), c.want
		assert.Contains(t, s, sub, "%q", c.args)
	}
}

// TestLimitFlags: the run limits have the library's defaults, take other
// values, and 0 turns a limit off.
func TestLimitFlags(t *testing.T) {
	getenv := func(string) string { return "" }
	c, err := parseFlags(nil, getenv, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, endpoint.DefaultRunTimeout, c.runTimeout)
	assert.Equal(t, endpoint.DefaultRefreshTimeout, c.refreshTimeout)
	assert.Equal(t, endpoint.DefaultMaxRefreshes, c.maxRefreshes)
	c2, err := parseFlags([]string{"-run-timeout", "0", "-refresh-timeout", "90s", "-max-refreshes", "4"}, getenv, io.Discard)
	require.NoError(t, err)
	got, want := c2.runTimeout, time.Duration(-1)
	assert.Equal(t, want, got, "0 is no limit, which the Service reads as negative: c2.runTimeout")
	if got, want := c2.refreshTimeout, 90*time.Second; got != want {
		t.Errorf("c2.refreshTimeout = %v, want %v", got, want)
	}
	assert.Equal(t, 4, c2.maxRefreshes)
	assert.Equal(t, limit.Config{
		ProjectConcurrency: limit.DefaultProjectConcurrency,
		ProjectPerMinute:   limit.DefaultProjectPerMinute,
		ProjectPerHour:     limit.DefaultProjectPerHour,
		GlobalConcurrency:  limit.DefaultGlobalConcurrency,
	}, c.limits)

	c, err = parseFlags([]string{"-project-concurrency", "5", "-project-runs-per-minute", "0", "-project-runs-per-hour", "100", "-global-concurrency", "9"}, getenv, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, limit.Config{ProjectConcurrency: 5, ProjectPerMinute: limit.Unlimited, ProjectPerHour: 100, GlobalConcurrency: 9}, c.limits)

	for _, f := range []string{"-project-concurrency", "-project-runs-per-minute", "-project-runs-per-hour", "-global-concurrency"} {
		_, err := parseFlags([]string{f, "-1"}, getenv, io.Discard)
		require.Error(t, err, "%v: got no error, want one", f)
		s, sub := err.Error(), f+" must be 0 or more"
		assert.Contains(t, s, sub)
	}
}

// TestLimitsOverHTTP: the server answers a run past -project-runs-per-minute
// with 429 and Retry-After, naming the limit, and every answer carries
// X-Request-Id.
func TestLimitsOverHTTP(t *testing.T) {
	s := start(t, []string{"-api-key", "k", "-demo-events", "0", "-project-runs-per-minute", "2"}, nil)
	base := s.url()
	create := curl(t, []string{"-X", "POST", base + "/api/projects/1/endpoints/", "-H", "Authorization: Bearer k",
		"-H", "Content-Type: application/json", "-d", `{"name": "one", "query": {"kind": "HogQLQuery", "query": "SELECT 1 AS one"}}`})
	got, want := create.status, http.StatusCreated
	require.Equal(t, want, got, "%v: create.status", create.raw)
	var last *http.Response
	var body []byte
	for range 3 {
		req, err := http.NewRequest("POST", base+"/api/projects/1/endpoints/one/run", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer k")
		last, err = http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, err = io.ReadAll(last.Body)
		require.NoError(t, err)
		last.Body.Close()
		assert.NotEqual(t, "", last.Header.Get("X-Request-Id"), "last.Header.Get(\"X-Request-Id\") is empty")
	}
	// Two runs pass; with both in the same aligned minute the third is
	// refused, and if the minute turned between them the sliding estimate
	// still counts the first.
	if got, want := last.StatusCode, http.StatusTooManyRequests; got != want {
		t.Fatalf("%s: last.StatusCode = %v, want %v", body, got, want)
	}
	assert.NotEqual(t, "", last.Header.Get("Retry-After"), "last.Header.Get(\"Retry-After\") is empty")
	assert.Contains(t, string(body), "project_runs_per_minute")
}

// TestBudgetFlags: -budgets picks where budgets are counted, -redis alone
// means Redis, and a choice that cannot work is refused naming the flag.
func TestBudgetFlags(t *testing.T) {
	getenv := func(string) string { return "" }
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, budgetsMemory},
		{[]string{"-budgets", "store"}, budgetsStore},
		{[]string{"-redis", "redis://127.0.0.1:6379/0"}, budgetsRedis},
		{[]string{"-budgets", "redis", "-redis", "redis://127.0.0.1:6379/0", "-budgets-fail-open"}, budgetsRedis},
	} {
		cfg, err := parseFlags(c.args, getenv, io.Discard)
		require.NoError(t, err, "%q", c.args)
		require.Equal(t, c.want, cfg.budgets, "%q", c.args)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-budgets", "disk"}, `-budgets must be memory, store or redis, got "disk"`},
		{[]string{"-budgets", "redis"}, "-budgets redis needs -redis"},
		{[]string{"-budgets", "store", "-redis", "redis://x"}, "-redis is for -budgets redis, not store"},
	} {
		_, err := parseFlags(c.args, getenv, io.Discard)
		require.ErrorContains(t, err, c.want, "%q", c.args)
	}
}
