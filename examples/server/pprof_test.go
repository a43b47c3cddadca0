package main

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPprofAddrFlag checks that Go's profiles are off unless -pprof-addr
// names an address, and that the flag is read.
func TestPprofAddrFlag(t *testing.T) {
	getenv := func(string) string { return "" }
	cfg, err := parseFlags([]string{"-api-key", "k_0123456789abcdef"}, getenv, io.Discard)
	require.NoError(t, err)
	assert.Empty(t, cfg.pprofAddr, "profiles are not served by default")
	cfg, err = parseFlags([]string{"-api-key", "k_0123456789abcdef", "-pprof-addr", "127.0.0.1:0"}, getenv, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:0", cfg.pprofAddr)
}

// TestServePprof checks that -pprof-addr's listener serves the profiles'
// index and a heap profile, that stop shuts it down, and that an address
// it cannot listen on is an error naming the flag.
func TestServePprof(t *testing.T) {
	addr, stop, err := servePprof(context.Background(), "127.0.0.1:0")
	require.NoError(t, err)
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/heap?debug=1", "/debug/pprof/cmdline"} {
		resp, err := http.Get("http://" + addr + path)
		require.NoError(t, err, path)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err, path)
		assert.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", path, body)
		assert.NotEmpty(t, body, path)
	}
	stop()
	_, err = http.Get("http://" + addr + "/debug/pprof/")
	assert.Error(t, err, "the listener is closed after stop")

	_, _, err = servePprof(context.Background(), "256.0.0.1:0")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "-pprof-addr")
}
