package main

// Browser test of what the editor shows while an endpoint materializes
// (issue 40, item 2): the refresh's phase, rows, bytes and elapsed time
// while it runs, read from GET .../materialization_status, then the rows
// it stored and the warning when materializing saves little.

import (
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// statusScript makes the page's first two answers of GET
// .../materialization_status those of a refresh under way (status
// running, progress building with 1,234 rows and 56,789 bytes written
// after 1.5 s), as a refresh long enough to watch answers, and passes the
// rest from the server unchanged; it records each text the progress line
// shows in window.seenProgress. A refresh of the demo's 3,000 events ends
// before the page's first poll, so its real progress cannot be caught.
const statusScript = `(() => {
  window.seenProgress = [];
  new MutationObserver(() => {
    const box = document.getElementById("materialize-progress");
    if (box && box.textContent !== window.seenProgress[window.seenProgress.length - 1]) { window.seenProgress.push(box.textContent); }
  }).observe(document.body, {childList: true, characterData: true, subtree: true});
  const real = window.fetch;
  let faked = 0;
  window.fetch = (url, init) => real(url, init).then(res => {
    if (!String(url).endsWith("/materialization_status") || faked >= 2) { return res; }
    faked++;
    return res.json().then(st => {
      st.status = "running";
      st.progress = {phase: "building", trigger: "saved", rows_written: 1234, bytes_written: 56789, elapsed_ms: 1500, started_at: "2025-06-01T00:00:00Z"};
      return new Response(JSON.stringify(st), {status: 200, headers: {"Content-Type": "application/json"}});
    });
  });
  return true;
})()`

// TestEditorMaterializeProgress materializes an endpoint from the list
// and checks what the page shows meanwhile and after.
func TestEditorMaterializeProgress(t *testing.T) {
	t.Parallel() // a server of its own, tabs of the package's Chromium: the browser tests overlap
	p := newPage(t)
	// One row per event: the stored table holds as many rows as the
	// source, so materializing it saves little.
	code, body := p.call(t, http.MethodPost, "/endpoints/", map[string]any{"name": "per_event",
		"query": map[string]any{"kind": "HogQLQuery", "query": "SELECT uuid, count(*) AS n FROM events GROUP BY uuid"}})
	require.Equal(t, http.StatusCreated, code, "%v", body)

	ctx := p.tab(t)
	row := `#endpoints tr[data-endpoint="per_event"]`
	p.do(t, ctx, shown(row))
	require.True(t, value(t, p, ctx, chromedp.Evaluate[bool](statusScript)))
	p.do(t, ctx, press(row+" button[data-materialize]"), shown("#confirm"),
		press("#confirm-yes"), waitText("#endpoint-status", "is materialized"),
		until(`document.getElementById("materialize-progress").dataset.state === "completed"`))

	seen := value(t, p, ctx, chromedp.Evaluate[[]string](`window.seenProgress`))
	assert.Contains(t, seen, "Materializing 'per_event': building · 1,234 rows · 56.8 kB · 1.5 s elapsed",
		"the progress line shows the phase, rows, bytes and elapsed time while the refresh runs")

	code, st := p.call(t, http.MethodGet, "/endpoints/per_event/materialization_status", nil)
	require.Equal(t, http.StatusOK, code, "%v", st)
	require.Equal(t, "completed", st["status"])
	require.Equal(t, 3000.0, st["rows"])
	warning, _ := st["savings_warning"].(string)
	require.NotEmpty(t, warning, "the server warns that one row per event saves little: %v", st)

	text := value(t, p, ctx, chromedp.Text(chromedp.ID("materialize-progress")))
	assert.Contains(t, text, "Materialized 'per_event': 3,000 rows stored")
	assert.Contains(t, text, "built in ")
	assert.Contains(t, text, "from 3,000 source rows")
	assert.True(t, value(t, p, ctx, chromedp.Evaluate[bool](`!document.getElementById("savings-warning").hidden`)), "the savings warning is shown")
	assert.Equal(t, "Little to save: "+warning, value(t, p, ctx, chromedp.Text(chromedp.ID("savings-warning"))))
	p.shootBoth(t, ctx, "materialize-result")
	p.checkNoPageErrors(t)
}
