package sqlexec_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/endpointtest"
	"github.com/stretchr/testify/require"
)

// TestInterruptThroughTheService: through the Service and its HTTP API (on
// endpointtest's pool, whose one database the store, the run log and the
// guarded runs share), a run whose work comes after its first row ends at
// RunTimeout with a 504, each time; the store takes writes after each (a
// new endpoint), and the next run answers.
func TestInterruptThroughTheService(t *testing.T) {
	env := endpointtest.New(t, endpointtest.WithConfig(func(c *endpoint.Config) { c.RunTimeout = 50 * time.Millisecond }))
	create := func(name, query string) {
		t.Helper()
		body := fmt.Sprintf(`{"name": %q, "query": {"kind": "HogQLQuery", "query": %q}}`, name, query)
		status, answer := env.Do(t, "POST", "/endpoints/", body)
		require.Equal(t, 201, status, "create %s %s", name, answer)
	}
	create("endless", afterFirstRow)
	for i := range 4 {
		start := time.Now()
		status, answer := env.Do(t, "POST", "/endpoints/endless/run", `{}`)
		if status != 504 || time.Since(start) > 3*time.Second {
			t.Fatalf("run %d: %d %s after %v, want a 504 at about 50ms", i, status, answer, time.Since(start))
		}
		name := fmt.Sprintf("cheap%d", i)
		create(name, "SELECT 1 AS one")
		if status, answer := env.Do(t, "POST", "/endpoints/"+name+"/run", `{}`); status != 200 || !strings.Contains(answer, `"one"`) {
			t.Fatalf("the run after run %d: %d %s", i, status, answer)
		}
	}
}
