package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
			require.NotEmpty(t, key, "key not printed:\n%s", s.out)
			if c.name == "environment" {
				assert.NotContains(t, s.out.String(), "env-key", "a key from the environment is not printed")
			}
			answers := runSession(t, s.session(t), c.env)
			require.Equal(t, sessionStatuses, statuses(answers), "%v", answers)
			assert.Equal(t, []any{}, answers[4].body["results"], "no demo events: no rows")

			base := regexp.MustCompile(`server on (http://\S+)`).FindStringSubmatch(s.out.String())[1]
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
	assert.NotEqual(t, newAPIKey(), newAPIKey())
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
	}
	for _, c := range cases {
		err := run(context.Background(), c.args, func(string) string { return "" }, io.Discard, io.Discard)
		require.Error(t, err, "%q", c.args)
		assert.Contains(t, err.Error(), c.want, "%q", c.args)
	}
}
