package exampleserver

import (
	"net/http"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStartServes: the server Start runs answers on the URL it returns,
// and refuses a request without its key.
func TestStartServes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the server binary")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs the go command: not in PATH")
	}
	base := Start(t, "-api-key", "start-key", "-demo-events", "10", "-db", filepath.Join(t.TempDir(), "events.db"))
	require.Regexp(t, `^http://127\.0\.0\.1:\d+$`, base)
	resp, err := http.Get(base + "/api/projects/1/endpoints/")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
}
