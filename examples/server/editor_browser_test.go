package main

// Browser tests of the editor page: a real headless Chromium, driven by
// chromedp, against the example server started in the test. They skip
// when no Chromium is installed (scripts/engines up chromium installs
// Debian's). Screenshots go to test-artifacts/editor at the repository's
// root (ENDPOINTKIT_TEST_ARTIFACTS overrides it); -update-screenshot also
// writes docs/editor.png, the README's picture of the page.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/placeholder"
)

var updateScreenshot = flag.Bool("update-screenshot", false, "write docs/editor.png from TestEditorInBrowser")

// browserEvents is the size of the demo data the browser tests serve.
const browserEvents = 3000

// envChromium names a Chrome or Chromium binary to use instead of the one
// found on PATH.
const envChromium = "ENDPOINTKIT_CHROMIUM"

// findChromium returns the browser to drive, or skips the test saying how
// to install one.
func findChromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv(envChromium); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skipf("no Chromium to run the editor's browser tests: install Debian's with `scripts/engines up chromium` (or set %s to a Chrome binary)", envChromium)
	return ""
}

// artifactsDir is where the tests write screenshots.
func artifactsDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("ENDPOINTKIT_TEST_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join("..", "..", "test-artifacts")
	}
	dir = filepath.Join(dir, "editor")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return dir
}

// page is the example server and a browser pointed at it.
type page struct {
	t       *testing.T
	base    string
	key     string
	browser context.Context
	shots   string
	// pageErrors collects script exceptions and console errors of every
	// tab (a CSP refusal among them); failed HTTP answers, which the
	// tests cause on purpose, are not counted.
	mu         sync.Mutex
	pageErrors []string
}

// signInShot takes the sign-in page's screenshot once in the package's
// run: the browser tests run in parallel, each on a page of its own.
var signInShot sync.Once

func newPage(t *testing.T) *page {
	t.Helper()
	chromium := findChromium(t)
	const key = "browser-test-key"
	s := start(t, []string{"-api-key", key, "-demo-events", strconv.Itoa(browserEvents), "-demo-end", "2025-06-01"}, nil)
	base := s.url()
	if s, sub := s.out.String(), "Editor: open "+base+"/ in a browser"; !strings.Contains(s, sub) {
		t.Fatalf("%q does not contain %q", s, sub)
	}

	return &page{t: t, base: base, key: key, browser: sharedBrowser(t, chromium), shots: artifactsDir(t)}
}

// browser is the package's one Chromium, started by the first browser
// test that asks for it and stopped by TestMain after the tests ran: each
// test drives tabs of its own (each with its own sessionStorage) against
// a server of its own, whose port makes it an origin of its own, so the
// tests share nothing but the process. Starting a Chromium per test cost
// 2.5 to 4.5 s of CPU each in CI.
var browser struct {
	mu   sync.Mutex
	ctx  context.Context
	err  error
	stop func()
}

// sharedBrowser returns the package's Chromium, starting it on first use.
func sharedBrowser(t *testing.T, chromium string) context.Context {
	t.Helper()
	browser.mu.Lock()
	defer browser.mu.Unlock()
	if browser.ctx == nil && browser.err == nil {
		browser.ctx, browser.err = startBrowser(t, chromium)
	}
	require.NoError(t, browser.err, "starting %s", chromium)
	return browser.ctx
}

// startBrowser starts chromium headless, with a profile directory of its
// own that stopBrowser removes.
func startBrowser(t *testing.T, chromium string) (context.Context, error) {
	profile, err := os.MkdirTemp("", "endpointkit-chromium-")
	if err != nil {
		return nil, err
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	browser.stop = func() {
		cancelBrowser()
		cancelAlloc()
		_ = os.RemoveAll(profile)
	}
	began := time.Now()
	if err := chromedp.Do(bctx); err != nil {
		return nil, err
	}
	t.Logf("%s started in %v", chromium, time.Since(began).Round(time.Millisecond))
	return bctx, nil
}

// stopBrowser stops the package's Chromium, if a test started it.
func stopBrowser() {
	browser.mu.Lock()
	defer browser.mu.Unlock()
	if browser.stop != nil {
		browser.stop()
	}
}

// tab opens a new tab (with its own sessionStorage) on the editor and
// signs in with the keyboard; it is closed when the test ends.
func (p *page) tab(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(p.browser)
	t.Cleanup(cancel)
	err := chromedp.Listen(ctx, func(ev any) {
		var msg string
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			msg = "exception: " + e.ExceptionDetails.Text
			if e.ExceptionDetails.Exception != nil {
				msg += " " + e.ExceptionDetails.Exception.Description
			}
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError {
				msg = "console.error"
				for _, a := range e.Args {
					msg += " " + a.Description + string(a.Value)
				}
			}
		case *cdplog.EventEntryAdded:
			if e.Entry.Level == cdplog.EntryLevelError && e.Entry.Source != cdplog.EntrySourceNetwork {
				msg = string(e.Entry.Source) + ": " + e.Entry.Text
			}
		}
		if msg != "" {
			p.mu.Lock()
			p.pageErrors = append(p.pageErrors, msg)
			p.mu.Unlock()
		}
	})
	require.NoError(t, err)
	// A guard against a page that hangs, not a measure of speed: a tab's
	// longest life (edit, save, materialize, delete) took over 60 s in CI
	// under the race detector beside the other packages' tests.
	tctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(cancelTimeout)
	p.do(t, tctx,
		chromedp.Navigate(p.base+"/"),
		shown("#api-key"),
	)
	// Before the key is given, the page shows nothing but the sign-in.
	assert.Equal(t, []string{"none", "none"}, value(t, p, tctx, chromedp.Evaluate[[]string](
		`["app", "session"].map(id => getComputedStyle(document.getElementById(id)).display)`)))
	signInShot.Do(func() { p.screenshot(t, tctx, "sign-in") })
	p.do(t, tctx,
		chromedp.SendKeys(chromedp.ID("api-key"), p.key+kb.Enter),
		shown("#sql"),
		until(`document.activeElement.id === "sql"`),
	)
	return tctx
}

// do runs actions, failing t with a screenshot of the tab when they fail.
func (p *page) do(t *testing.T, ctx context.Context, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, actions...); err != nil {
		p.screenshot(t, ctx, "failed-"+safeName(t.Name()))
		t.Fatalf("browser: %v", err)
	}
}

// value runs a and returns its value, failing t as do does.
func value[T any](t *testing.T, p *page, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		p.screenshot(t, ctx, "failed-"+safeName(t.Name()))
		t.Fatalf("browser: %v", err)
	}
	return v
}

// screenshot writes the whole page of ctx's tab to the artifacts folder.
func (p *page) screenshot(t *testing.T, ctx context.Context, name string) []byte {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	png, err := chromedp.Run(sctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Logf("screenshot %s: %v", name, err)
		return nil
	}
	path := filepath.Join(p.shots, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Logf("screenshot %s: %v", name, err)
	}
	t.Logf("screenshot: %s", path)
	return png
}

func (p *page) checkNoPageErrors(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	v := p.pageErrors
	assert.True(t, (len(v) == 0), "the page logged errors: p.pageErrors = %v, want it empty", v)
}

func safeName(s string) string { return regexp.MustCompile(`[^A-Za-z0-9_-]+`).ReplaceAllString(s, "_") }

// pollEvery is how the waits poll the page: every 20 ms, not chromedp's
// default of every animation frame, which asks the tab for a frame, its
// style and layout, 60 times a second for as long as a wait lasts: with
// the package's tabs open at once, Chromium drawing them was most of the
// package's CPU.
var pollEvery = chromedp.WithPollingInterval(20 * time.Millisecond)

// until waits until the JavaScript expression is true.
func until(expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](expr, pollEvery, chromedp.WithPollingTimeout(15*time.Second))
}

// settled waits until the tab has drawn two frames: the resize handlers
// and resize observers of a changed viewport (the curl box's fitting,
// CodeMirror's measuring) have run and the layout is the new width's. It
// replaces fixed sleeps of 150 to 200 ms after each change of viewport.
func settled() chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](`new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => done())))`, chromedp.EvalAwaitPromise)
}

// shownWait bounds how long shown and notShown wait: a button press the
// page lost then fails the step that waited for its effect, naming what
// was waited for, instead of hanging until the tab's deadline (chromedp's
// WaitVisible waits as long as its context lives).
const shownWait = time.Minute

// shown waits until the element of the CSS selector sel is displayed.
func shown(sel string) chromedp.Action[chromedp.Void] {
	return waitFor(sel+" shown", isShown(sel))
}

// notShown waits until the element of sel is absent or not displayed.
func notShown(sel string) chromedp.Action[chromedp.Void] {
	return waitFor(sel+" hidden", "!"+isShown(sel))
}

// isShown is the JavaScript expression that tells whether the element of
// sel is displayed.
func isShown(sel string) string {
	return `(() => { const e = document.querySelector(` + strconv.Quote(sel) + `); return !!e && e.getClientRects().length > 0; })()`
}

// waitFor polls expr for at most shownWait, failing with what.
func waitFor(what, expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		if _, err := chromedp.Poll[chromedp.Void](expr, pollEvery, chromedp.WithPollingTimeout(shownWait))(ctx, t); err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		return nil
	})
}

// ctrlEnter presses Ctrl+Enter in the focused element.
func ctrlEnter() chromedp.Action[chromedp.Void] {
	return chromedp.KeyEvent(kb.Enter, chromedp.KeyModifiers(kb.ModifierCtrl))
}

// press focuses the element of the CSS selector sel and presses Enter
// there, as a keyboard user activates a button. The element is found and
// focused in one step of the page's own script, polled until it is there:
// a list the page re-renders between a lookup and a focus by node id
// (DOM.focus) failed that focus with "Could not find node with given id".
// The element notes the key's arrival; when the key reached another
// element (the page drew the list anew between the focus and the key: the
// Variables tab redraws 120 ms after the query's last edit, which a loaded
// machine's typing had not yet reached), the press is made again on the
// element as it is now. A key that reached the element is never repeated.
func press(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		focus := `(() => { const el = document.querySelector(` + strconv.Quote(sel) + `); if (!el) return false; el.focus();
			window.__pressReached = false; el.addEventListener("keydown", () => { window.__pressReached = true; }, {once: true});
			return document.activeElement === el; })()`
		for attempt := 1; ; attempt++ {
			if _, err := chromedp.Poll[chromedp.Void](focus, pollEvery, chromedp.WithPollingTimeout(15*time.Second))(ctx, t); err != nil {
				return fmt.Errorf("focus %s: %w", sel, err)
			}
			if _, err := chromedp.KeyEvent(kb.Enter)(ctx, t); err != nil {
				return err
			}
			reached, err := chromedp.Evaluate[bool](`window.__pressReached === true`)(ctx, t)
			if err != nil || reached {
				return err
			}
			if attempt == 3 {
				return fmt.Errorf("press %s: Enter never reached it (the page drew it anew each time)", sel)
			}
		}
	})
}

// tableRows reads the body rows of the table in sel as text.
func tableRows(sel string) chromedp.Action[[][]string] {
	return chromedp.Evaluate[[][]string](`Array.from(document.querySelectorAll(` + strconv.Quote(sel+" table tbody tr") + `)).map(r => Array.from(r.cells).map(c => c.textContent))`)
}

// waitText waits until the text of the element of sel contains want.
func waitText(sel, want string) chromedp.Action[chromedp.Void] {
	return until(`(document.querySelector(` + strconv.Quote(sel) + `) || {}).textContent?.includes(` + strconv.Quote(want) + `)`)
}

// sqlText reads the query in the code editor.
func sqlText() chromedp.Action[string] {
	return chromedp.Evaluate[string](`window.endpointkitEditor.text()`)
}

// setSQL replaces the query in the code editor as a user does who selects
// it all and pastes v: a paste event holding v as text, which the editor
// takes as the browser gives it.
func setSQL(v string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](`(() => { const v = window.endpointkitEditor.code().view; v.focus();
		v.dispatch({selection: {anchor: 0, head: v.state.doc.length}});
		const data = new DataTransfer();
		data.setData("text/plain", ` + strconv.Quote(v) + `);
		v.contentDOM.dispatchEvent(new ClipboardEvent("paste", {clipboardData: data, bubbles: true, cancelable: true})); })()`)
}

// focusSQL puts the focus in the code editor, as a click there does (the
// protocol's DOM.focus refuses the editor's host, which delegates its
// focus to the text in its shadow root).
func focusSQL() chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](`document.getElementById("sql").focus()`)
}

// typeSQL types text where the code editor's cursor is, key by key.
func typeSQL(text string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(focusSQL(), chromedp.KeyEvent(text))
}

// activeID is the id of the focused element.
func activeID() chromedp.Action[string] {
	return chromedp.Evaluate[string](`document.activeElement.id`)
}

// dailyPurchases is the flow's query: purchases per day of the last week
// of the demo data, the event being a variable.
const dailyPurchases = "SELECT substr(timestamp, 1, 10) AS day, count(*) AS events FROM events WHERE event = {variables.event_name} AND timestamp >= '2025-05-25' GROUP BY day ORDER BY day"

// wantDailyPurchases computes dailyPurchases's rows from the generator,
// independently of the server.
func wantDailyPurchases(t *testing.T) [][]string {
	t.Helper()
	counts := map[string]int{}
	from := time.Date(2025, 5, 25, 0, 0, 0, 0, time.UTC)
	require.NoError(t, demo.Generate(browserEvents, demoSeed, func(e demo.Event) error {
		if e.Event == "purchase" && !e.Timestamp.Before(from) {
			counts[e.Timestamp.Format(time.DateOnly)]++
		}
		return nil
	}))
	var rows [][]string
	for day, n := range counts {
		rows = append(rows, []string{day, strconv.Itoa(n)})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i][0] < rows[j][0] })
	v := rows
	require.NotEmpty(t, v, "rows is empty")
	return rows
}

// TestEditorInBrowser drives the editor page in headless Chromium: the flow
// of the spec's section 4.4 with the keyboard only, the refusals shown
// where they arose, a Trends chart, labels, and the page's placeholder
// scanner against package placeholder.
func TestEditorInBrowser(t *testing.T) {
	t.Parallel() // servers of its own, tabs of the package's Chromium: the browser tests overlap
	onPages(t, map[string][]browserCase{
		"keyboard": {{"flow", (*page).testFlow}, {"placeholder scanner", (*page).testScanner}},
		"refusals and charts": {
			{"undefined variable", (*page).testUndefined},
			{"bad value", (*page).testBadValue},
			{"trends chart", (*page).testTrends},
		},
	})
}

// browserCase is one subtest of a browser test: a behaviour checked in a
// tab of its own on the page's server.
type browserCase struct {
	name string
	run  func(p *page, t *testing.T)
}

// onPages runs each group of cases as a parallel subtest with a server
// (a page) of its own, the cases of a group one after the other on it,
// then checks that no tab of the group's page logged an error. The groups
// overlap as the browser tests do: a group's cases mostly wait for
// Chromium and the server, and one page per test made the longest test
// the package's time (TestEditorCodeAndRuns, 20 of the package's 32 s
// alone, 40 s in the README's run). A group's cases share its server's
// state as the cases of one page did; no two groups share any.
func onPages(t *testing.T, groups map[string][]browserCase) {
	t.Helper()
	for _, name := range slices.Sorted(maps.Keys(groups)) {
		cases := groups[name]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := newPage(t)
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) { c.run(p, t) })
			}
			p.checkNoPageErrors(t)
		})
	}
}

// testFlow is section 4.4: write the query, add the variable, enter a test
// value, run and see the rows, save, run the saved endpoint and see the
// same rows; from the keyboard.
func (p *page) testFlow(t *testing.T) {
	ctx := p.tab(t)
	want := wantDailyPurchases(t)
	placeholderRow := `#placeholders tr[data-placeholder="event_name"]`
	p.do(t, ctx,
		// 1. Write the query.
		typeSQL(dailyPurchases),
		// 2. Open the Variables tab: the placeholder has no variable yet.
		chromedp.Focus(chromedp.ID("tab-results")),
		chromedp.KeyEvent(kb.ArrowRight),
		shown("#panel-variables"),
		shown(placeholderRow),
		waitText(placeholderRow, "No variable"),
		waitText("#missing-count", "1"),
	)
	assert.Equal(t, "missing", value(t, p, ctx, chromedp.AttributeValue(chromedp.CSS(placeholderRow), "class")).Value)
	// The List settings show for a List only.
	assert.Equal(t, []string{"none", "none"}, value(t, p, ctx, chromedp.Evaluate[[]string](
		`Array.from(document.querySelectorAll("#variable-form .list-only")).map(e => getComputedStyle(e).display)`)))
	// Add the variable: the code name comes from the placeholder; a name,
	// the type (String, as proposed) and a default.
	p.do(t, ctx, press(placeholderRow+" button.add-for"), until(`document.activeElement.id === "var-name"`))
	assert.Equal(t, "event_name", value(t, p, ctx, chromedp.Value(chromedp.ID("var-code"))))
	assert.Equal(t, "Event name", value(t, p, ctx, chromedp.Value(chromedp.ID("var-name"))))
	p.do(t, ctx,
		chromedp.SendKeys(chromedp.ID("var-default"), "$pageview"+kb.Enter),
		// 3. The variable is created and its test value input has the
		// focus: enter a test value and run with Ctrl+Enter.
		shown("#test-event_name"),
		until(`document.activeElement.id === "test-event_name"`),
		chromedp.KeyEvent("purchase"),
		ctrlEnter(),
		shown("#results table"),
		waitText("#status", " ms"),
	)
	rows := value(t, p, ctx, tableRows("#results"))
	if got, want := rows, want; !reflect.DeepEqual(got, want) {
		t.Errorf("the editor's rows are the purchases per day: rows = %+v, want %+v", got, want)
	}
	s, sub := value(t, p, ctx, chromedp.Text(chromedp.ID("status"))), fmt.Sprintf("%d rows", len(want))
	assert.Contains(t, s, sub)
	verdict := value(t, p, ctx, chromedp.Text(chromedp.ID("verdict")))
	assert.Contains(t, verdict, "Materializable: yes")
	if s, sub := verdict, "event_name: key"; !strings.Contains(s, sub) {
		t.Errorf("the verdict says how each variable is stored: %q does not contain %q", s, sub)
	}

	// 4. Save as an endpoint: name, description, confirm.
	p.do(t, ctx,
		press("#open-save"),
		until(`document.activeElement.id === "save-name"`),
		chromedp.KeyEvent("daily_purchases"),
		chromedp.SendKeys(chromedp.ID("save-description"), "Purchases per day, last week of May"),
		press("#save-confirm"),
		shown("#saved"),
	)
	assert.Equal(t, "Saved endpoint 'daily_purchases', version 1.", value(t, p, ctx, chromedp.Text(chromedp.ID("saved-message"))))
	curlText := value(t, p, ctx, chromedp.Value(chromedp.ID("saved-curl")))
	if s, sub := curlText, p.base+"/api/projects/1/endpoints/daily_purchases/run"; !strings.Contains(s, sub) {
		t.Errorf("%q does not contain %q", s, sub)
	}
	assert.Contains(t, curlText, `{"variables":{"event_name":"purchase"}}`)
	assert.NotContains(t, curlText, p.key, "the key is never shown")
	// The curl command, pasted into a shell with the key in the
	// environment, runs the endpoint and answers the same rows.
	cmds, err := shellCommands(curlText, func(k string) string { return map[string]string{"ENDPOINTKIT_API_KEY": p.key}[k] })
	require.NoError(t, err)
	require.Len(t, cmds, 1)
	require.Equal(t, "curl", cmds[0][0])
	ans := curl(t, cmds[0][1:])
	if got, want := ans.status, http.StatusOK; got != want {
		t.Fatalf("%v: ans.status = %v, want %v", ans.raw, got, want)
	}
	if got, want := stringRows(ans.body["results"]), want; !reflect.DeepEqual(got, want) {
		t.Errorf("stringRows(ans.body[\"results\"]) = %+v, want %+v", got, want)
	}

	// The saved endpoint is listed with its version; run it from its form.
	endpointRow := `#endpoints tr[data-endpoint="daily_purchases"]`
	runInput := `#run-fields input[data-variable="event_name"]`
	p.do(t, ctx, shown(endpointRow))
	listed := value(t, p, ctx, chromedp.Text(chromedp.CSS(endpointRow)))
	assert.Contains(t, listed, "daily_purchases")
	assert.Contains(t, listed, "v1 (1 version)")
	p.do(t, ctx,
		press(endpointRow+" button[data-run]"),
		shown(runInput),
		until(`document.activeElement.id === "run-version"`),
		chromedp.SendKeys(chromedp.CSS(runInput), "purchase"+kb.Enter),
		shown("#run-endpoint-results table"),
	)
	if got, want := value(t, p, ctx, tableRows("#run-endpoint-results")), rows; !reflect.DeepEqual(got, want) {
		t.Errorf("the saved endpoint answers the rows the editor showed: value(t, p, ctx, tableRows(\"#run-endpoint-results\")) = %+v, want %+v", got, want)
	}
	assert.Contains(t, value(t, p, ctx, chromedp.Text(chromedp.ID("run-endpoint-status"))), "from version 1")

	// Every control the page holds now, its script's included, has a label.
	unlabelled := value(t, p, ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("input, select, textarea"))
		.filter(e => e.labels.length === 0 && !e.getAttribute("aria-label")).map(e => e.id || e.outerHTML)`))
	v := unlabelled
	assert.True(t, (len(v) == 0), "unlabelled = %v, want it empty", v)
	// The key is in the tab's sessionStorage only.
	if got, want := value(t, p, ctx, chromedp.Evaluate[string](`sessionStorage.getItem("endpointkit.apiKey")`)), p.key; got != want {
		t.Errorf("got = %q, want %q", got, want)
	}
	assert.Equal(t, "{}", value(t, p, ctx, chromedp.Evaluate[string](`JSON.stringify(localStorage)`)))

	p.screenshot(t, ctx, "flow")
	if *updateScreenshot {
		p.do(t, ctx, chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
		shot := value(t, p, ctx, chromedp.CaptureScreenshot())
		require.NoError(t, os.WriteFile(filepath.Join("..", "..", "docs", "editor.png"), shot, 0o644))
	}
}

// stringRows turns a decoded "results" array into rows of text, as the
// page shows them.
func stringRows(v any) [][]string {
	var out [][]string
	for _, r := range v.([]any) {
		var row []string
		for _, c := range r.([]any) {
			row = append(row, fmt.Sprint(c))
		}
		out = append(out, row)
	}
	return out
}

// testUndefined: a placeholder without a variable is marked in the
// Variables tab, and a run answers the spec's error where it is run.
func (p *page) testUndefined(t *testing.T) {
	ctx := p.tab(t)
	// Tab leads from the SQL box to its buttons, then to the output tabs
	// (the save form and the saved panel are closed).
	var order []string
	for range 3 {
		p.do(t, ctx, chromedp.KeyEvent(kb.Tab))
		order = append(order, value(t, p, ctx, activeID()))
	}
	assert.Equal(t, []string{"run", "open-save", "tab-results"}, order)
	p.do(t, ctx,
		typeSQL("SELECT count(*) AS n FROM events WHERE event = {variables.no_such_thing}"),
		ctrlEnter(),
		shown("#run-error"),
		waitText("#missing-count", "1"),
	)
	assert.Equal(t, "Query references undefined variable(s): no_such_thing", value(t, p, ctx, chromedp.Text(chromedp.ID("run-error"))))
	p.screenshot(t, ctx, "undefined-variable")
}

// testBadValue: a value the variable's type refuses is shown in the
// results and beside its input, naming the variable.
func (p *page) testBadValue(t *testing.T) {
	createVariable(t, p.base, p.key, `{"name": "Min count", "type": "Number"}`)
	ctx := p.tab(t)
	p.do(t, ctx,
		typeSQL("SELECT event, count(*) AS n FROM events GROUP BY event HAVING count(*) >= {variables.min_count}"),
		chromedp.Focus(chromedp.ID("tab-results")),
		chromedp.KeyEvent(kb.ArrowRight),
		shown("#test-min_count"),
		chromedp.SendKeys(chromedp.ID("test-min_count"), "lots"),
		ctrlEnter(),
		shown("#run-error"),
	)
	wantDetail := `Invalid value for variable 'min_count': expected Number, got "lots": not a number`
	got, want := value(t, p, ctx, chromedp.Text(chromedp.ID("run-error"))), wantDetail+" Go to min_count"
	assert.Equal(t, want, got, "value(t, p, ctx, chromedp.Text(chromedp.ID(\"run-error\")))")
	p.do(t, ctx, press("#go-to-variable"), shown("#test-min_count-error"))
	if got, want := value(t, p, ctx, chromedp.Text(chromedp.ID("test-min_count-error"))), wantDetail; got != want {
		t.Errorf("got = %q, want %q", got, want)
	}
	assert.Equal(t, "true", value(t, p, ctx, chromedp.AttributeValue(chromedp.ID("test-min_count"), "aria-invalid")).Value)
	if got, want := value(t, p, ctx, activeID()), "test-min_count"; got != want {
		t.Errorf("the button leads to the input at fault: value(t, p, ctx, activeID()) = %q, want %q", got, want)
	}
	p.screenshot(t, ctx, "bad-value")
}

// createVariable creates a variable through the API.
func createVariable(t *testing.T, base, key, body string) {
	t.Helper()
	req, err := http.NewRequest("POST", base+"/api/projects/1/insight_variables/", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	got, want := res.StatusCode, http.StatusCreated
	require.Equal(t, want, got, "%v: res.StatusCode", string(b))
}

// testTrends: a TrendsQuery's series are drawn as lines in an inline SVG,
// one per series, one point per interval, with the totals the generator
// gives; a RetentionQuery's cohorts are drawn as a table.
func (p *page) testTrends(t *testing.T) {
	ctx := p.tab(t)
	// Pageviews per browser over May 2025, counted from the generator.
	want := map[string]int{}
	from, to := time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	require.NoError(t, demo.Generate(browserEvents, demoSeed, func(e demo.Event) error {
		if e.Event == "$pageview" && !e.Timestamp.Before(from) && e.Timestamp.Before(to) {
			want[e.Properties.Browser]++
		}
		return nil
	}))
	p.do(t, ctx,
		chromedp.Focus(chromedp.ID("kind")),
		chromedp.KeyEvent("T"), // a select takes the option its typed letter starts
	)
	require.Equal(t, "TrendsQuery", value(t, p, ctx, chromedp.Value(chromedp.ID("kind"))))
	p.do(t, ctx,
		waitText("#sql-label", "TrendsQuery JSON"),
		focusSQL(),
		ctrlEnter(),
		shown("#chart svg polyline"),
	)
	points := value(t, p, ctx, chromedp.Evaluate[[]int](`Array.from(document.querySelectorAll("#chart svg polyline")).map(l => l.getAttribute("points").trim().split(/\s+/).length)`))
	labels := value(t, p, ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#chart svg polyline")).map(l => l.dataset.label)`))
	aria := value(t, p, ctx, chromedp.AttributeValue(chromedp.CSS("#chart svg"), "aria-label")).Value
	series := value(t, p, ctx, tableRows("#results"))
	if got := len(labels); got != len(want) {
		t.Fatalf("one line per browser: len(labels) = %d, want %d: %v", got, len(want), labels)
	}
	for i := range points {
		got, want := points[i], 31
		assert.Equal(t, want, got, "one point per day of May for %s: points[i]", labels[i])
	}
	got := map[string]int{}
	for _, r := range series {
		n, err := strconv.Atoi(strings.ReplaceAll(r[1], ",", ""))
		require.NoError(t, err, "%v", r)
		got[r[0]] = n
	}
	assert.Equal(t, want, got, "the series totals are the generator's pageviews per browser")
	if got, want := slices.Sorted(slices.Values(labels)), slices.Sorted(mapKeys(want)); !reflect.DeepEqual(got, want) {
		t.Errorf("slices.Sorted(slices.Values(labels)) = %+v, want %+v", got, want)
	}
	s, sub := aria, fmt.Sprintf("Line chart of %d series over 31 intervals", len(want))
	assert.Contains(t, s, sub)
	p.screenshot(t, ctx, "trends-chart")

	// A RetentionQuery is drawn as its table of cohorts: the sample's seven
	// periods, a size and six returns each.
	p.do(t, ctx,
		chromedp.Focus(chromedp.ID("kind")),
		chromedp.KeyEvent("R"),
		waitText("#sql-label", "RetentionQuery JSON"),
		focusSQL(),
		ctrlEnter(),
		waitText("#status", "cohorts"),
	)
	head := value(t, p, ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#results th")).map(th => th.textContent)`))
	assert.Equal(t, []string{"Cohort", "Date", "Size", "Period 1", "Period 2", "Period 3", "Period 4", "Period 5", "Period 6"}, head)
	cohorts := value(t, p, ctx, tableRows("#results"))
	v := cohorts
	require.NotEmpty(t, v, "cohorts is empty")
	assert.Equal(t, "Day 0", cohorts[0][0])
	assert.Equal(t, 0, value(t, p, ctx, chromedp.Evaluate[int](`document.querySelectorAll("#chart svg").length`)), "no chart for retention")
}

func mapKeys(m map[string]int) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// testScanner: the page's placeholder scanner, which marks placeholders
// as the user types, reads SQL as package placeholder does.
func (p *page) testScanner(t *testing.T) {
	ctx := p.tab(t)
	corpus := []string{
		"SELECT 1",
		"SELECT * FROM t WHERE a = {variables.a} AND b IN {variables.b} AND c = {variables.a}",
		"SELECT '{variables.in_string}', \"{variables.in_ident}\", `{variables.in_backticks}` FROM t WHERE x = { variables . spaced }",
		"SELECT 'it''s {variables.no}' -- {variables.comment}\n, {variables.after_comment} /* {variables.block} */",
		"SELECT 'back\\'slash {variables.no}' , {variables.yes}",
		"SELECT {variables} , {variablesx.y}, {\"json\": 1}, {name:String}, x{variables.glued}y",
		"SELECT $price{variables.dollar}, é{variables.unicode}",
		"SELECT {variables.}",
		"SELECT {variables.1a}",
		"SELECT {variables.a b}",
		"SELECT {variables.a",
		"SELECT 'open",
		"SELECT \"open",
		"SELECT /* open",
		"SELECT a - b -{variables.minus}- c / {variables.slash}",
		"SELECT {\n\tvariables\n.\nmulti_line\n}",
		"SELECT {variables.__endpointkit_tenant}",
		"",
	}
	// And strings made of the pieces the reading turns on, at random (the
	// seed is fixed, so a failure repeats).
	pieces := []string{"{", "}", "variables", ".", "a", "b_1", " ", "\n", "'", "\"", "`", "''", "\\", "--", "/*", "*/", "-", "/", "$", "é", "IN", "(", ")", ";", "1", "{variables.", "{variables.x}", "{ variables . y }", "{variables.x"}
	rng := rand.New(rand.NewPCG(4, 4))
	for range 3000 {
		var b strings.Builder
		for range 1 + rng.IntN(14) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		corpus = append(corpus, b.String())
	}
	type scanned struct {
		Names []string `json:"names"`
		Error *struct {
			Line   int `json:"line"`
			Column int `json:"column"`
		} `json:"error"`
	}
	js, err := json.Marshal(corpus)
	require.NoError(t, err)
	got := value(t, p, ctx, chromedp.Evaluate[[]scanned](`(`+string(js)+`).map(s => window.endpointkitEditor.scanPlaceholders(s))`))
	require.Len(t, got, len(corpus))
	refused, found := 0, 0
	for i, sql := range corpus {
		phs, err := placeholder.Scan(sql)
		if err != nil {
			var se *placeholder.SyntaxError
			require.ErrorAs(t, err, &se)
			refused++
			if got[i].Error == nil {
				t.Errorf("%q: Go refuses it (%v), the page does not", sql, err)
			} else {
				got, want := ([2]int{got[i].Error.Line, got[i].Error.Column}), ([2]int{se.Line, se.Column})
				assert.Equal(t, want, got, "%q: where: ([2]int{got[i].Error.Line, got[i].Error.Column})", sql)
			}
			continue
		}
		v := got[i].Error
		assert.Nil(t, v, "%q: got[i].Error", sql)
		var names []string
		for _, ph := range phs {
			if !slices.Contains(names, ph.Name) {
				names = append(names, ph.Name)
			}
		}
		got, want := nilIfEmpty(got[i].Names), names
		assert.Equal(t, want, got, "%q: nilIfEmpty(got[i].Names)", sql)
		if len(names) > 0 {
			found++
		}
	}
	// The random strings reach both answers often, or they test little.
	a, b := refused, 300
	assert.True(t, (a > b), "strings refused: refused = %v, want > %v", a, b)
	if a, b := found, 100; !(a > b) {
		t.Errorf("strings with placeholders: found = %v, want > %v", a, b)
	}
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}
