package main

// Browser tests of the editor page's code editor and of what a run shows
// (issue 40, item 1): CodeMirror with the engine's SQL highlighted, tables,
// columns and {variables.…} completed, the save-time check's error
// underlined at its line and column; results cleared when the kind
// changes; the run form under its endpoint; a run saying whether the
// stored table answered; date pickers; numbers formatted by column type;
// the empty Results panel's hint; no wrapped row buttons at 1280 px. Each
// behaviour is shot at 1280 and 420 px.

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEditorCodeAndRuns drives the code editor and the run views in
// headless Chromium.
func TestEditorCodeAndRuns(t *testing.T) {
	t.Parallel() // servers of its own, tabs of the package's Chromium: the browser tests overlap
	onPages(t, map[string][]browserCase{
		"code": {
			{"highlighting", (*page).testHighlighting},
			{"completion", (*page).testCompletion},
			{"error marked", (*page).testErrorMarked},
			{"empty results", (*page).testEmptyResults},
			{"results clear on kind", (*page).testResultsClearOnKind},
		},
		"runs": {
			{"numbers", (*page).testNumbers},
			{"date pickers", (*page).testDatePickers},
			{"run form beside", (*page).testRunFormBeside},
			{"stored or inline", (*page).testStoredOrInline},
			{"no wrap", (*page).testNoWrap},
		},
	})
}

// inEditor evaluates expr with root bound to the code editor's shadow
// root (null when the page has no code editor).
func inEditor[T any](expr string) chromedp.Action[T] {
	return chromedp.Evaluate[T](`(() => { const root = document.getElementById("sql").shadowRoot; return ` + expr + `; })()`)
}

// shootBoth writes a screenshot of the page at 1280 and at 420 px, then goes
// back to 1280.
func (p *page) shootBoth(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	for _, w := range []int64{1280, 420} {
		p.do(t, ctx, chromedp.EmulateViewport(w, 900), settled())
		p.screenshot(t, ctx, name+"-"+strconv.FormatInt(w, 10))
	}
	p.do(t, ctx, chromedp.EmulateViewport(1280, 900))
}

// acceptKey presses a key that types nothing (Enter as CodeMirror's
// accept, Ctrl+Space as its ask): a key down without text, and up; the
// key events of chromedp.KeyEvent carry a text the editor would insert
// too. It waits first for the completion list to take keys (CodeMirror
// ignores them for 75 ms after the list changes).
func acceptKey(key, code string, vk int64, modifiers int64) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		time.Sleep(150 * time.Millisecond)
		for _, typ := range []input.DispatchKeyEventType{input.DispatchKeyEventTypeRawKeyDown, input.DispatchKeyEventTypeKeyUp} {
			if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, input.DispatchKeyEventParams{Type: typ, Key: key, Code: code, WindowsVirtualKeyCode: vk, NativeVirtualKeyCode: vk, Modifiers: modifiers}); err != nil {
				return err
			}
		}
		return nil
	})
}

func enterKey() chromedp.Action[chromedp.Void]  { return acceptKey("Enter", "Enter", 13, 0) }
func ctrlSpace() chromedp.Action[chromedp.Void] { return acceptKey(" ", "Space", 32, 2) }

// completions waits for the completion list and reads its labels.
func completions(t *testing.T, p *page, ctx context.Context) []string {
	t.Helper()
	p.do(t, ctx, until(`!!document.getElementById("sql").shadowRoot?.querySelector(".cm-tooltip-autocomplete li")`))
	return value(t, p, ctx, inEditor[[]string](`Array.from(root.querySelectorAll(".cm-tooltip-autocomplete li .cm-completionLabel")).map(e => e.textContent)`))
}

// completionsWith is completions once the list offers label: the editor
// completes as it is typed into, so a list read at once may still be the
// one of a word typed before (CI read "WHE", "WHERE", ... just after
// "{" was typed). A label never offered fails the wait.
func completionsWith(t *testing.T, p *page, ctx context.Context, label string) []string {
	t.Helper()
	p.do(t, ctx, until(`Array.from(document.getElementById("sql").shadowRoot?.querySelectorAll(".cm-tooltip-autocomplete li .cm-completionLabel") ?? []).some(e => e.textContent === `+strconv.Quote(label)+`)`))
	return completions(t, p, ctx)
}

// testHighlighting: the query is in a code editor that highlights the
// SQL of the server's engine (SQLite here): keywords, strings and
// numbers in colours of their own.
func (p *page) testHighlighting(t *testing.T) {
	ctx := p.tab(t)
	require.True(t, value(t, p, ctx, chromedp.Evaluate[bool](`!!document.getElementById("sql").shadowRoot?.querySelector(".cm-editor")`)),
		"the query is written in a code editor")
	p.do(t, ctx, setSQL("SELECT event, count(*) AS n\nFROM events\nWHERE event = 'purchase' AND 1 < 2 -- a comment"))
	assert.Equal(t, "sqlite", value(t, p, ctx, chromedp.Evaluate[string](`window.endpointkitEditor.code().dialectName()`)))
	assert.Equal(t, "(SQLite)", value(t, p, ctx, chromedp.Text(chromedp.ID("sql-dialect"))))
	// CodeMirror highlights as its parser gets time, after the text is
	// set: wait until every token has a span of its own (CI under -race
	// read the lines before any was highlighted). Never highlighted fails
	// the wait.
	tokens := []string{"SELECT", "FROM", "'purchase'", "1", "-- a comment"}
	quoted, err := json.Marshal(tokens)
	require.NoError(t, err)
	p.do(t, ctx, until(`(() => { const r = document.getElementById("sql").shadowRoot; if (!r) return false;
		const seen = Array.from(r.querySelectorAll(".cm-line span")).map(s => s.textContent.trim());
		return `+string(quoted)+`.every(w => seen.includes(w)); })()`))
	// The colour of each token, by its text.
	colours := value(t, p, ctx, inEditor[map[string]string](`Object.fromEntries(Array.from(root.querySelectorAll(".cm-line span"))
		.map(s => [s.textContent.trim(), getComputedStyle(s).color]))`))
	plain := value(t, p, ctx, inEditor[string](`getComputedStyle(root.querySelector(".cm-line")).color`))
	for _, token := range tokens {
		c, ok := colours[token]
		if assert.True(t, ok, "%q is a token of its own: %v", token, colours) {
			assert.NotEqual(t, plain, c, "%q is highlighted", token)
		}
	}
	assert.NotEqual(t, colours["SELECT"], colours["'purchase'"], "keywords and strings differ")
	// Three lines, numbered.
	assert.Equal(t, []string{"1", "2", "3"}, value(t, p, ctx, inEditor[[]string](`Array.from(root.querySelectorAll(".cm-lineNumbers .cm-gutterElement"))
		.filter(e => getComputedStyle(e).visibility !== "hidden").map(e => e.textContent)`)))
	p.shootBoth(t, ctx, "code-highlighting")
}

// testCompletion: a name offers the project's tables and columns (from
// GET schema), "{" offers the defined variables' placeholders, and
// accepting one writes it whole, once.
func (p *page) testCompletion(t *testing.T) {
	createVariable(t, p.base, p.key, `{"name": "Completion event", "type": "String"}`)
	status, body := p.call(t, "GET", "/schema/", nil)
	require.Equal(t, http.StatusOK, status, "%v", body)
	var columns, tables []string
	for _, tb := range body["results"].([]any) {
		tables = append(tables, tb.(map[string]any)["name"].(string))
		for _, c := range tb.(map[string]any)["columns"].([]any) {
			columns = append(columns, c.(map[string]any)["name"].(string))
		}
	}
	require.NotEmpty(t, columns)
	ctx := p.tab(t)
	// Ctrl+Space after SELECT: every column of the schema is offered.
	p.do(t, ctx, setSQL("SELECT "), ctrlSpace())
	offered := completions(t, p, ctx)
	for _, c := range columns {
		assert.Contains(t, offered, c, "the column %s is offered", c)
	}
	// Typing part of a column's name offers it; Enter takes it.
	p.do(t, ctx, chromedp.KeyEvent(kb.Escape), chromedp.KeyEvent("distin"))
	assert.Contains(t, completionsWith(t, p, ctx, "distinct_id"), "distinct_id")
	p.do(t, ctx, enterKey(), chromedp.KeyEvent(" FROM eve"))
	// Read once the list is the one of "eve": read at once, a loaded
	// machine's run got the keywords offered for "FROM".
	require.Contains(t, tables, "events")
	offered = completionsWith(t, p, ctx, "events")
	for _, tb := range tables {
		if strings.HasPrefix(tb, "eve") {
			assert.Contains(t, offered, tb)
		}
	}
	assert.NotContains(t, offered, "event", "after FROM a table is offered, not a column")
	p.do(t, ctx, enterKey(), chromedp.KeyEvent(" WHERE event = {"))
	offered = completionsWith(t, p, ctx, "{variables.completion_event}")
	assert.Contains(t, offered, "{variables.completion_event}")
	p.shootBoth(t, ctx, "code-completion")
	p.do(t, ctx, chromedp.KeyEvent("comp"), until(`document.getElementById("sql").shadowRoot.querySelector(".cm-tooltip-autocomplete li[aria-selected] .cm-completionLabel")?.textContent === "{variables.completion_event}"`),
		enterKey())
	assert.Equal(t, "SELECT distinct_id FROM events WHERE event = {variables.completion_event}", value(t, p, ctx, sqlText()))
	// The placeholder is marked as one.
	p.do(t, ctx, until(`!!document.getElementById("sql").shadowRoot.querySelector(".cm-ek-variable")`))
	assert.Equal(t, "{variables.completion_event}", value(t, p, ctx, inEditor[string](`root.querySelector(".cm-ek-variable").textContent`)))
}

// testErrorMarked: the save-time check's refusal, which says where it is
// ("line 2, column 6"), is underlined there in the query, with its
// message; editing the text takes the mark away; a run's refusal is
// marked the same way, and a placeholder's syntax error as it is typed.
func (p *page) testErrorMarked(t *testing.T) {
	ctx := p.tab(t)
	p.do(t, ctx, setSQL("SELECT count(*) AS n\nFROM sqlite_master"),
		press("#open-save"), chromedp.SendKeys(chromedp.ID("save-name"), "marked_error"), press("#save-confirm"),
		waitText("#save-error", "line 2, column 6"))
	p.do(t, ctx, until(`!!document.getElementById("sql").shadowRoot?.querySelector(".cm-lintRange-error")`))
	assert.Equal(t, "sqlite_master", value(t, p, ctx, inEditor[string](`root.querySelector(".cm-lintRange-error").textContent`)),
		"the refused table is underlined")
	type mark struct {
		Line, Column int
		Text         string
		Message      string
	}
	m := value(t, p, ctx, chromedp.Evaluate[mark](`window.endpointkitEditor.marked()`))
	assert.Equal(t, 2, m.Line)
	assert.Equal(t, 6, m.Column)
	assert.Equal(t, "sqlite_master", m.Text)
	assert.Contains(t, m.Message, "system catalogs can never be read")
	// Its message shows on hover.
	p.do(t, ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById("sql").shadowRoot.querySelector(".cm-lintRange-error").scrollIntoView()`))
	box := value(t, p, ctx, inEditor[[]float64](`(r => [r.left + r.width / 2, r.top + r.height / 2])(root.querySelector(".cm-lintRange-error").getBoundingClientRect())`))
	p.do(t, ctx, chromedp.MouseEvent("mouseMoved", box[0], box[1]),
		until(`document.getElementById("sql").shadowRoot.querySelector(".cm-tooltip-lint")?.textContent.includes("system catalogs")`))
	p.shootBoth(t, ctx, "code-error-marked")
	// An edit takes the mark away: it was the old text's.
	p.do(t, ctx, typeSQL(" "), until(`!document.getElementById("sql").shadowRoot.querySelector(".cm-lintRange-error")`))

	// A run's refusal, from the keyboard.
	p.do(t, ctx, setSQL("SELECT n FROM (SELECT 1 AS n)\nWHERE n IN (SELECT name FROM sqlite_schema)"), ctrlEnter(),
		waitText("#run-error", "line 2, column 30"),
		until(`document.getElementById("sql").shadowRoot.querySelector(".cm-lintRange-error")?.textContent === "sqlite_schema"`))

	// A placeholder's syntax, as it is typed.
	p.do(t, ctx, setSQL("SELECT 1\nWHERE 1 = {variables.1x}"),
		until(`window.endpointkitEditor.marked()?.source === "placeholders"`))
	m = value(t, p, ctx, chromedp.Evaluate[mark](`window.endpointkitEditor.marked()`))
	assert.Equal(t, 2, m.Line)
	assert.Equal(t, 22, m.Column)

	// A structured position of the API wins over the detail's words.
	where := value(t, p, ctx, chromedp.Evaluate[[]map[string]int](`[
		window.endpointkitEditor.errorPosition({detail: "x (line 1, column 16)", line: 3, column: 4}),
		window.endpointkitEditor.errorPosition({detail: "The database refused it (line 1, column 16)"}),
		window.endpointkitEditor.errorPosition({detail: "no position"}) || {}]`))
	assert.Equal(t, []map[string]int{{"line": 3, "column": 4}, {"line": 1, "column": 16}, {}}, where)
}

// testEmptyResults: before the first run the Results panel says what to
// do.
func (p *page) testEmptyResults(t *testing.T) {
	ctx := p.tab(t)
	require.True(t, value(t, p, ctx, visible("#results-empty")), "the empty Results panel shows a hint")
	s := value(t, p, ctx, chromedp.Text(chromedp.ID("panel-results")))
	assert.Contains(t, s, "Nothing has run yet")
	assert.Contains(t, s, "Ctrl+Enter")
	p.shootBoth(t, ctx, "results-empty")
	p.do(t, ctx, typeSQL("SELECT 1 AS n"), ctrlEnter(), shown("#results table"))
	assert.False(t, value(t, p, ctx, visible("#results-empty")), "the hint goes with the first run")
}

// testResultsClearOnKind: switching the query kind clears the rows and
// the materialization verdict of the other kind's query.
func (p *page) testResultsClearOnKind(t *testing.T) {
	ctx := p.tab(t)
	p.do(t, ctx, typeSQL("SELECT event, count(*) AS n FROM events GROUP BY event"), ctrlEnter(),
		shown("#results table"), shown("#verdict"))
	p.do(t, ctx, setField("#kind", "TrendsQuery"), waitText("#sql-label", "TrendsQuery JSON"))
	assert.Equal(t, 0, value(t, p, ctx, chromedp.Evaluate[int](`document.querySelectorAll("#results table, #chart svg").length`)), "no rows of the SQL query")
	assert.False(t, value(t, p, ctx, visible("#verdict")), "no verdict of the SQL query")
	assert.Equal(t, "", value(t, p, ctx, chromedp.Text(chromedp.ID("status"))))
	assert.True(t, value(t, p, ctx, visible("#results-empty")))
	p.shootBoth(t, ctx, "results-cleared")
	// And the insight's chart goes when going back to SQL.
	p.do(t, ctx, press("#run"), shown("#chart svg polyline"),
		setField("#kind", "HogQLQuery"), waitText("#sql-label", "SQL"))
	assert.Equal(t, 0, value(t, p, ctx, chromedp.Evaluate[int](`document.querySelectorAll("#results table, #chart svg").length`)))
}

// testNumbers: floats show to two decimals (three significant digits
// under 1), the value unrounded on hover; integers as they are.
func (p *page) testNumbers(t *testing.T) {
	ctx := p.tab(t)
	p.do(t, ctx, typeSQL("SELECT 246.86117647058825 AS avg_amount, 0.000123456 AS small, 3 AS n, 1234567 AS big, 2.0 AS two"), ctrlEnter(),
		shown("#results table"))
	assert.Equal(t, [][]string{{"246.86", "0.000123", "3", "1234567", "2.00"}}, value(t, p, ctx, tableRows("#results")))
	assert.Equal(t, "246.86117647058825", value(t, p, ctx, chromedp.Evaluate[string](`document.querySelector("#results td").title`)))
	assert.Equal(t, []string{"num", "num", "num", "num", "num"}, value(t, p, ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#results td")).map(td => td.className)`)))
	// By the column's type: a decimal the database sends as text.
	assert.Equal(t, []string{"1.50", "12", "abc", "7.00"}, value(t, p, ctx, chromedp.Evaluate[[]string](`[
		window.endpointkitEditor.formatCell("1.5", "numeric").text,
		window.endpointkitEditor.formatCell("12", "text").text,
		window.endpointkitEditor.formatCell("abc", "Float64").text,
		window.endpointkitEditor.formatCell(7, "Float64").text]`)))
	p.shootBoth(t, ctx, "numbers")
}

// testDatePickers: a Date variable's test value, default and run value
// are picked from a calendar (input type=date).
func (p *page) testDatePickers(t *testing.T) {
	createVariable(t, p.base, p.key, `{"name": "Since day", "type": "Date"}`)
	ctx := p.tab(t)
	p.do(t, ctx, typeSQL("SELECT count(*) AS n FROM events WHERE timestamp >= {variables.since_day}"),
		press("#tab-variables"), shown("#test-since_day"))
	assert.Equal(t, "date", value(t, p, ctx, chromedp.Evaluate[string](`document.getElementById("test-since_day").type`)))
	p.do(t, ctx, setField("#var-type", "Date"))
	assert.Equal(t, "date", value(t, p, ctx, chromedp.Evaluate[string](`document.getElementById("var-default").type`)), "a Date's default")
	p.do(t, ctx, setField("#test-since_day", "2025-05-25"), focusSQL(), ctrlEnter(), shown("#results table"))
	assert.Equal(t, "", value(t, p, ctx, chromedp.Text(chromedp.ID("run-error"))))
	p.shootBoth(t, ctx, "date-picker-test-value")
	p.do(t, ctx, press("#open-save"), chromedp.SendKeys(chromedp.ID("save-name"), "since_day_count"), press("#save-confirm"),
		shown("#saved"))
	p.openRunForm(t, ctx, "since_day_count")
	sel := `#run-fields [data-variable="since_day"]`
	assert.Equal(t, "date", value(t, p, ctx, chromedp.Evaluate[string](`document.querySelector(`+strconv.Quote(sel)+`).type`)))
	p.do(t, ctx, setField(sel, "2025-05-25"), press("#run-endpoint"), waitText("#run-endpoint-status", " ms"))
	assert.Equal(t, "", value(t, p, ctx, chromedp.Text(chromedp.ID("run-endpoint-error"))))
	p.shootBoth(t, ctx, "date-picker-run")
}

// testRunFormBeside: the run form opens right under the row (the card,
// at 420 px) of the endpoint it runs, not below the list.
func (p *page) testRunFormBeside(t *testing.T) {
	for i := range 6 {
		status, body := p.call(t, "POST", "/endpoints/", map[string]any{"name": "beside_" + strconv.Itoa(i),
			"query": map[string]any{"kind": "HogQLQuery", "query": "SELECT event, count(*) AS n FROM events GROUP BY event"}})
		require.Equal(t, http.StatusCreated, status, "%v", body)
	}
	ctx := p.tab(t)
	for _, w := range []int64{420, 1280} {
		p.do(t, ctx, chromedp.EmulateViewport(w, 900))
		for _, name := range []string{"beside_0", "beside_3"} {
			p.openRunForm(t, ctx, name)
			row := `#endpoints tr[data-endpoint="` + name + `"]`
			// The gap between the row's bottom and the form's top, and
			// whether any other endpoint's row comes between them.
			gap := value(t, p, ctx, chromedp.Evaluate[float64](`document.getElementById("run-form").getBoundingClientRect().top - document.querySelector(`+strconv.Quote(row)+`).getBoundingClientRect().bottom`))
			between := value(t, p, ctx, chromedp.Evaluate[[]string](`(() => {
				const top = document.querySelector(`+strconv.Quote(row)+`).getBoundingClientRect().bottom, form = document.getElementById("run-form").getBoundingClientRect().top;
				return Array.from(document.querySelectorAll("#endpoints tr[data-endpoint]")).filter(r => { const b = r.getBoundingClientRect(); return b.top >= top - 1 && b.bottom <= form + 1; }).map(r => r.dataset.endpoint); })()`))
			assert.True(t, gap >= -1 && gap < 40, "at %d px the form of %s is right under its row: the gap is %v px", w, name, gap)
			assert.Empty(t, between, "at %d px no other endpoint comes between %s and its form", w, name)
		}
		p.shootBoth(t, ctx, "run-form-beside-"+strconv.FormatInt(w, 10))
	}
	// A refresh of the list keeps the form under its endpoint.
	p.do(t, ctx, chromedp.Click(chromedp.ID("refresh-endpoints")), chromedp.Sleep(300*time.Millisecond))
	assert.Equal(t, "beside_3", value(t, p, ctx, chromedp.Evaluate[string](`document.getElementById("run-form").closest("tr").previousElementSibling.dataset.endpoint`)))
}

// testStoredOrInline: a run of a saved endpoint says whether its stored
// table answered, or why it ran inline.
func (p *page) testStoredOrInline(t *testing.T) {
	q := func(sql string) map[string]any { return map[string]any{"kind": "HogQLQuery", "query": sql} }
	status, body := p.call(t, "POST", "/endpoints/", map[string]any{"name": "served", "query": q("SELECT event, count(*) AS n FROM events GROUP BY event")})
	require.Equal(t, http.StatusCreated, status, "%v", body)
	status, body = p.call(t, "PATCH", "/endpoints/served", map[string]any{"query": q("SELECT event, count(*) AS n FROM events GROUP BY event ORDER BY n DESC")})
	require.Equal(t, http.StatusOK, status, "%v", body)
	status, body = p.call(t, "POST", "/endpoints/", map[string]any{"name": "served_inline", "query": q("SELECT count(*) AS n FROM events")})
	require.Equal(t, http.StatusCreated, status, "%v", body)
	status, body = p.call(t, "PATCH", "/endpoints/served", map[string]any{"is_materialized": true})
	require.Equal(t, http.StatusOK, status, "%v", body)
	// The table is built before its runs read it.
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, ep := p.call(t, "GET", "/endpoints/served", nil)
		if m, _ := ep["materialization"].(map[string]any); m != nil && m["last_materialized_at"] != nil {
			break
		}
		require.True(t, time.Now().Before(deadline), "the stored table of served is never built: %v", ep)
		time.Sleep(200 * time.Millisecond)
	}
	ctx := p.tab(t)
	p.openRunForm(t, ctx, "served")
	p.do(t, ctx, press("#run-endpoint"), waitText("#run-endpoint-status", " ms"))
	s := value(t, p, ctx, chromedp.Text(chromedp.ID("run-endpoint-status")))
	assert.Contains(t, s, "the stored table answered")
	assert.Contains(t, s, "from version 2")
	p.shootBoth(t, ctx, "run-stored-table")
	// An older version runs inline, and says why.
	status, versions := p.call(t, "GET", "/endpoints/served/versions/", nil)
	require.Equal(t, http.StatusOK, status)
	require.Len(t, versions["results"], 2)
	p.do(t, ctx, setField("#run-version", "1"), chromedp.Sleep(300*time.Millisecond), press("#run-endpoint"),
		waitText("#run-endpoint-status", "from version 1"))
	s = value(t, p, ctx, chromedp.Text(chromedp.ID("run-endpoint-status")))
	assert.Contains(t, s, "ran inline, not from the stored table: ")
	assert.Contains(t, s, "version", "the reason names the version")
	p.shootBoth(t, ctx, "run-inline-reason")
	// An endpoint that is not materialized says so.
	p.openRunForm(t, ctx, "served_inline")
	p.do(t, ctx, press("#run-endpoint"), waitText("#run-endpoint-status", " ms"))
	assert.Contains(t, value(t, p, ctx, chromedp.Text(chromedp.ID("run-endpoint-status"))), "ran inline (the endpoint is not materialized)")
}

// testNoWrap: at 1280 px each saved endpoint's buttons are on one line,
// and so are the editor's buttons and the output tabs.
func (p *page) testNoWrap(t *testing.T) {
	for _, name := range []string{"no_wrap_materialized_with_a_longer_name", "no_wrap_plain"} {
		status, body := p.call(t, "POST", "/endpoints/", map[string]any{"name": name, "description": "Pageviews per browser in May, for the layout check",
			"query": map[string]any{"kind": "HogQLQuery", "query": "SELECT event, count(*) AS n FROM events GROUP BY event"}})
		require.Equal(t, http.StatusCreated, status, "%v", body)
	}
	status, body := p.call(t, "PATCH", "/endpoints/no_wrap_materialized_with_a_longer_name", map[string]any{"is_materialized": true})
	require.Equal(t, http.StatusOK, status, "%v", body)
	ctx := p.tab(t)
	p.do(t, ctx, chromedp.Click(chromedp.ID("refresh-endpoints")), shown(`#endpoints tr[data-endpoint="no_wrap_plain"]`),
		chromedp.EmulateViewport(1280, 900), settled())
	// The distinct tops of the buttons of each group.
	lines := value(t, p, ctx, chromedp.Evaluate[map[string]int](`(() => {
		const out = {};
		const count = (key, buttons) => { out[key] = new Set(Array.from(buttons).filter(b => b.getClientRects().length).map(b => Math.round(b.getBoundingClientRect().top))).size; };
		document.querySelectorAll("#endpoints tr[data-endpoint]").forEach(tr => count(tr.dataset.endpoint, tr.querySelectorAll("td.row-actions button")));
		count("editor actions", document.querySelectorAll("section.editor > .actions button"));
		count("tabs", document.querySelectorAll("[role=tab]"));
		return out; })()`))
	require.NotEmpty(t, lines)
	for group, n := range lines {
		assert.Equal(t, 1, n, "at 1280 px the buttons of %s are on one line", group)
	}
	assert.GreaterOrEqual(t, len(lines), 4, "the rows of the endpoints are measured: %v", lines)
	assert.Empty(t, value(t, p, ctx, chromedp.Evaluate[[]string](overflow)), "nothing reaches past its card")
	p.shootBoth(t, ctx, "no-wrap")
}
