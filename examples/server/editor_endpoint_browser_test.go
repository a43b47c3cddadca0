package main

// Browser tests of what the editor page knows about the endpoints it runs
// (issue 24, items 8 and 10): the run form follows the server's OpenAPI
// document of the endpoint's current state, insight mode shows no SQL-only
// help, the saved list says kind, materialization and freshness, and
// endpoints are edited (a new version), materialized and deleted from the
// page; an insight form writes the query's JSON; the schema panel; the
// curl box; the layout at 1280 and 420 px.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// call sends one request to the example server's API of project 1 and
// decodes its JSON answer.
func (p *page) call(t *testing.T, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, p.base+"/api/projects/1"+path, r)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+p.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	var out map[string]any
	if len(raw) > 0 {
		require.NoError(t, json.Unmarshal(raw, &out), "%v", string(raw))
	}
	return res.StatusCode, out
}

// runField is one input of the run form: its variable and what its label
// says of it.
type runField struct {
	Name     string `json:"name"`
	Required bool   `json:"required"`
}

// serverFields reads the variables a run of the endpoint takes, and which
// are required, from the server's OpenAPI document.
func (p *page) serverFields(t *testing.T, name string) []runField {
	t.Helper()
	status, doc := p.call(t, "GET", "/endpoints/"+name+"/openapi.json", nil)
	got, want := status, http.StatusOK
	require.Equal(t, want, got, "%v: status", doc)
	var out []runField
	for _, item := range doc["paths"].(map[string]any) {
		schema := item.(map[string]any)["post"].(map[string]any)["requestBody"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
		vars := schema["properties"].(map[string]any)["variables"].(map[string]any)
		var required []string
		if r, ok := vars["required"].([]any); ok {
			for _, x := range r {
				required = append(required, x.(string))
			}
		}
		for n := range vars["properties"].(map[string]any) {
			out = append(out, runField{Name: n, Required: slices.Contains(required, n)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// pageFields reads the run form's inputs: their variables, and whether
// their labels say required.
func pageFields(t *testing.T, p *page, ctx context.Context) []runField {
	t.Helper()
	got := value(t, p, ctx, chromedp.Evaluate[[]runField](`Array.from(document.querySelectorAll("#run-fields [data-variable]"))
		.map(i => ({name: i.dataset.variable, required: i.labels[0].textContent.includes("required")}))
		.sort((a, b) => a.name < b.name ? -1 : 1)`))
	return got
}

// setField sets an input or select of the page as a user does, with the
// input and change events the page listens to.
func setField(sel, v string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](`(() => { const e = document.querySelector(` + strconv.Quote(sel) + `);
		e.value = ` + strconv.Quote(v) + `; e.dispatchEvent(new Event("input", {bubbles: true})); e.dispatchEvent(new Event("change", {bubbles: true})); })()`)
}

// visible tells whether the element of sel is displayed.
func visible(sel string) chromedp.Action[bool] {
	return chromedp.Evaluate[bool](isShown(sel))
}

// TestEditorFollowsEndpoint drives the editor's knowledge of the endpoint
// in headless Chromium.
func TestEditorFollowsEndpoint(t *testing.T) {
	t.Parallel() // servers of its own, tabs of the package's Chromium: the browser tests overlap
	onPages(t, map[string][]browserCase{
		"endpoints": {
			{"run form per state", (*page).testRunFormPerState},
			{"insight mode", (*page).testInsightMode},
			{"insight form", (*page).testInsightForm},
			{"edit materialize delete", (*page).testEditMaterializeDelete},
		},
		"views": {
			{"focus kept on redraw", (*page).testFocusKeptOnRedraw},
			{"curl box", (*page).testCurlBox},
			{"schema panel", (*page).testSchemaPanel},
			{"layout", (*page).testLayout},
		},
	})
}

// browserTrends is an insight endpoint with a breakdown.
var browserTrends = map[string]any{
	"kind":            "TrendsQuery",
	"series":          []any{map[string]any{"kind": "EventsNode", "event": "$pageview"}},
	"interval":        "day",
	"dateRange":       map[string]any{"date_from": "2025-05-01", "date_to": "2025-05-31"},
	"breakdownFilter": map[string]any{"breakdown": "$browser"},
}

// openRunForm opens the run form of the endpoint named name from the list.
func (p *page) openRunForm(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	row := `#endpoints tr[data-endpoint="` + name + `"]`
	p.do(t, ctx,
		// The row shown now goes, so that the one waited for is the
		// refreshed list's (pressing a row the refresh replaces fails).
		chromedp.Evaluate[chromedp.Void](`document.querySelector(`+strconv.Quote(row)+`)?.remove()`),
		chromedp.Click(chromedp.ID("refresh-endpoints")),
		shown(row),
		press(row+" button[data-run]"),
		waitText("#run-name", name),
		until(`document.querySelectorAll("#run-fields [data-variable], #run-fields p.hint").length > 0`),
	)
}

// testRunFormPerState: the run form offers the variables the server takes
// for the endpoint as it is now: an insight endpoint's breakdown and dates,
// all optional; once materialized, its breakdown alone, required.
func (p *page) testRunFormPerState(t *testing.T) {
	status, body := p.call(t, "POST", "/endpoints/", map[string]any{"name": "browsers_state", "query": browserTrends})
	got, want := status, http.StatusCreated
	require.Equal(t, want, got, "%v: status", body)
	ctx := p.tab(t)
	p.openRunForm(t, ctx, "browsers_state")
	inline := p.serverFields(t, "browsers_state")
	assert.Equal(t, []runField{{"$browser", false}, {"date_from", false}, {"date_to", false}}, inline)
	if got, want := pageFields(t, p, ctx), inline; !reflect.DeepEqual(got, want) {
		t.Errorf("inline: the form offers what the server takes: pageFields(t, p, ctx) = %+v, want %+v", got, want)
	}

	status, body = p.call(t, "PATCH", "/endpoints/browsers_state", map[string]any{"is_materialized": true})
	if got, want := status, http.StatusOK; got != want {
		t.Fatalf("%v: status = %v, want %v", body, got, want)
	}
	p.openRunForm(t, ctx, "browsers_state")
	stored := p.serverFields(t, "browsers_state")
	if got, want := stored, ([]runField{{"$browser", true}}); !reflect.DeepEqual(got, want) {
		t.Errorf("materialized: no dates, the breakdown required: stored = %+v, want %+v", got, want)
	}
	if got, want := pageFields(t, p, ctx), stored; !reflect.DeepEqual(got, want) {
		t.Errorf("materialized: the form offers what the server takes: pageFields(t, p, ctx) = %+v, want %+v", got, want)
	}
	assert.Contains(t, value(t, p, ctx, chromedp.Text(chromedp.CSS(`#endpoints tr[data-endpoint="browsers_state"] [data-col="materialized"]`))), "yes")
	// The form's values run: the breakdown given, the server answers.
	p.do(t, ctx,
		chromedp.SendKeys(chromedp.CSS(`#run-fields [data-variable="$browser"]`), "Chrome"+kb.Enter),
		waitText("#run-endpoint-status", "from version 1"),
	)
	v := value(t, p, ctx, chromedp.Text(chromedp.ID("run-endpoint-error")))
	assert.True(t, (v == ""), "value(t, p, ctx, chromedp.Text(chromedp.ID(\"run-endpoint-error\"))) = %v, want it empty", v)

	// A SQL endpoint: each variable required.
	createVariable(t, p.base, p.key, `{"name": "State event", "type": "String"}`)
	status, vars := p.call(t, "GET", "/insight_variables/", nil)
	require.Equal(t, http.StatusOK, status)
	var id string
	for _, v := range vars["results"].([]any) {
		if v.(map[string]any)["code_name"] == "state_event" {
			id = v.(map[string]any)["id"].(string)
		}
	}
	if v := id; v == "" {
		t.Fatalf("id is empty")
	}
	status, body = p.call(t, "POST", "/endpoints/", map[string]any{"name": "sql_state", "query": map[string]any{
		"kind": "HogQLQuery", "query": "SELECT count(*) AS n FROM events WHERE event = {variables.state_event}",
		"variables": map[string]any{id: map[string]any{"variableId": id, "code_name": "state_event"}},
	}})
	if got, want := status, http.StatusCreated; got != want {
		t.Fatalf("%v: status = %v, want %v", body, got, want)
	}
	p.openRunForm(t, ctx, "sql_state")
	assert.Equal(t, []runField{{"state_event", true}}, pageFields(t, p, ctx))
	if got, want := pageFields(t, p, ctx), p.serverFields(t, "sql_state"); !reflect.DeepEqual(got, want) {
		t.Errorf("pageFields(t, p, ctx) = %+v, want %+v", got, want)
	}
}

// testInsightMode: the SQL hint and the add-variable form show for SQL
// only; the insight form for insights only.
func (p *page) testInsightMode(t *testing.T) {
	ctx := p.tab(t)
	shown := func() []bool {
		return value(t, p, ctx, chromedp.Evaluate[[]bool](`["sql-hint", "variable-form", "insight-form"].map(id => document.getElementById(id).getClientRects().length > 0 || getComputedStyle(document.getElementById(id)).display !== "none")`))
	}
	got, want := shown(), ([]bool{true, true, false})
	assert.Equal(t, want, got, "SQL: shown()")
	for _, kind := range []string{"TrendsQuery", "RetentionQuery", "LifecycleQuery"} {
		p.do(t, ctx, setField("#kind", kind), waitText("#sql-label", kind+" JSON"))
		got, want := shown(), ([]bool{false, false, true})
		assert.Equal(t, want, got, "%v: shown()", kind)
	}
	p.do(t, ctx, setField("#kind", "HogQLQuery"), waitText("#sql-label", "SQL"))
	if got, want := shown(), ([]bool{true, true, false}); !reflect.DeepEqual(got, want) {
		t.Errorf("SQL again: shown() = %+v, want %+v", got, want)
	}
}

// queryJSON reads the editor's JSON.
func queryJSON(t *testing.T, p *page, ctx context.Context) map[string]any {
	t.Helper()
	text := value(t, p, ctx, sqlText())
	var q map[string]any
	require.NoError(t, json.Unmarshal([]byte(text), &q), "%v", text)
	return q
}

// testInsightForm: the form writes the TrendsQuery, RetentionQuery and
// LifecycleQuery JSON the API takes and runs; edits of the JSON show in
// the form.
func (p *page) testInsightForm(t *testing.T) {
	ctx := p.tab(t)
	p.do(t, ctx, setField("#kind", "TrendsQuery"), waitText("#sql-label", "TrendsQuery JSON"),
		shown("#if-event-0"))
	// The form shows the sample JSON.
	assert.Equal(t, "$pageview", value(t, p, ctx, chromedp.Value(chromedp.ID("if-event-0"))))
	assert.Equal(t, "$browser", value(t, p, ctx, chromedp.Value(chromedp.ID("if-breakdowns"))))
	p.do(t, ctx,
		setField("#if-event-0", ""),
		chromedp.SendKeys(chromedp.ID("if-event-0"), "purchase"),
		setField("#if-math-0", "sum"),
		shown("#if-math-property-0"),
		chromedp.SendKeys(chromedp.ID("if-math-property-0"), "amount"),
		press("#if-add-series"),
		shown("#if-event-1"),
		setField("#if-math-1", "dau"),
		setField("#if-interval", "week"),
		setField("#if-breakdowns", "country, plan"),
		setField("#if-date-from", "2025-04-01"),
		setField("#if-date-to", "2025-05-31"),
		press("#if-add-filter"),
		shown("#if-key-0"),
		chromedp.SendKeys(chromedp.ID("if-key-0"), "plan"),
		chromedp.SendKeys(chromedp.ID("if-value-0"), "pro, team"),
		press("#if-add-filter"),
		shown("#if-key-1"),
		chromedp.SendKeys(chromedp.ID("if-key-1"), "$browser"),
		setField("#if-op-1", "is_set"),
	)
	want := map[string]any{
		"kind": "TrendsQuery",
		"series": []any{
			map[string]any{"kind": "EventsNode", "event": "purchase", "math": "sum", "math_property": "amount"},
			map[string]any{"kind": "EventsNode", "event": "$pageview", "math": "dau"},
		},
		"interval":  "week",
		"dateRange": map[string]any{"date_from": "2025-04-01", "date_to": "2025-05-31"},
		"breakdownFilter": map[string]any{"breakdowns": []any{
			map[string]any{"property": "country", "type": "event"},
			map[string]any{"property": "plan", "type": "event"},
		}},
		"properties": []any{
			map[string]any{"key": "plan", "operator": "exact", "value": []any{"pro", "team"}, "type": "event"},
			map[string]any{"key": "$browser", "operator": "is_set", "type": "event"},
		},
	}
	q := queryJSON(t, p, ctx)
	if got, want := q, want; !reflect.DeepEqual(got, want) {
		t.Errorf("the form writes the TrendsQuery: q = %+v, want %+v", got, want)
	}
	// The server takes and runs that JSON.
	status, body := p.call(t, "POST", "/query/", map[string]any{"query": q})
	if got, want := status, http.StatusOK; got != want {
		t.Fatalf("%v: status = %v, want %v", body, got, want)
	}
	rows, ok := body["results"].([]any)
	require.True(t, ok, "body[\"results\"] = %v, want rows", body["results"])
	require.NotEmpty(t, rows, "body[\"results\"] = %v, want rows", body["results"])
	// And so does the page.
	p.do(t, ctx, press("#run"), waitText("#status", " ms"), shown("#chart svg polyline"))
	v := value(t, p, ctx, chromedp.Text(chromedp.ID("run-error")))
	assert.True(t, (v == ""), "value(t, p, ctx, chromedp.Text(chromedp.ID(\"run-error\"))) = %v, want it empty", v)

	// The JSON stays editable, and its edits show in the form; what the
	// form does not show is kept.
	q["interval"] = "month"
	q["series"].([]any)[0].(map[string]any)["custom_name"] = "Revenue"
	q["breakdownFilter"] = map[string]any{"breakdown": "$os", "breakdown_limit": 5}
	edited, err := json.MarshalIndent(q, "", "  ")
	require.NoError(t, err)
	p.do(t, ctx, setSQL(string(edited)), until(`document.getElementById("if-interval").value === "month"`))
	assert.Equal(t, "$os", value(t, p, ctx, chromedp.Value(chromedp.ID("if-breakdowns"))))
	p.do(t, ctx, setField("#if-date-to", "2025-05-15"))
	q = queryJSON(t, p, ctx)
	assert.Equal(t, "Revenue", q["series"].([]any)[0].(map[string]any)["custom_name"], "a key the form does not show is kept: q[\"series\"].([]any)[0].(map[string]any)[\"custom_name\"]")
	assert.Equal(t, map[string]any{"breakdown": "$os", "breakdown_limit": 5.0}, q["breakdownFilter"])
	assert.Equal(t, "2025-05-15", q["dateRange"].(map[string]any)["date_to"])
	// Removing a series removes it, its keys the form does not show with it.
	p.do(t, ctx, press(`#if-series [data-series="0"] button.remove`), until(`!document.getElementById("if-event-1")`))
	q = queryJSON(t, p, ctx)
	assert.Equal(t, []any{map[string]any{"kind": "EventsNode", "event": "$pageview", "math": "dau"}}, q["series"])
	assert.Equal(t, "$pageview", value(t, p, ctx, chromedp.Value(chromedp.ID("if-event-0"))))
	// Property groups the form cannot show are said so, and left as written.
	q["properties"] = map[string]any{"type": "AND", "values": []any{map[string]any{"type": "AND", "values": []any{}}, map[string]any{"type": "AND", "values": []any{}}}}
	edited, _ = json.Marshal(q)
	p.do(t, ctx, setSQL(string(edited)), waitText("#if-note", "property filters"), setField("#if-interval", "day"))
	if got, want := queryJSON(t, p, ctx)["properties"], q["properties"]; !reflect.DeepEqual(got, want) {
		t.Errorf("queryJSON(t, p, ctx)[\"properties\"] = %+v, want %+v", got, want)
	}

	// A RetentionQuery.
	p.do(t, ctx, setField("#kind", "RetentionQuery"), shown("#if-target"),
		setField("#if-target", "signed_up"), setField("#if-returning", "purchase"), setField("#if-period", "Week"),
		setField("#if-total", "5"), setField("#if-breakdowns", ""))
	q = queryJSON(t, p, ctx)
	assert.Equal(t, map[string]any{
		"targetEntity":    map[string]any{"id": "signed_up", "type": "events"},
		"returningEntity": map[string]any{"id": "purchase", "type": "events"},
		"period":          "Week", "totalIntervals": 5.0,
	}, q["retentionFilter"])
	status, body = p.call(t, "POST", "/query/", map[string]any{"query": q})
	if got, want := status, http.StatusOK; got != want {
		t.Fatalf("%v: status = %v, want %v", body, got, want)
	}
	if rows, ok := body["results"].([]any); !ok || len(rows) != 5 {
		t.Errorf("len(body[\"results\"]) = %d, want %d: %v", len(rows), 5, body["results"])
	}

	// A LifecycleQuery: one series, no math, no breakdowns.
	p.do(t, ctx, setField("#kind", "LifecycleQuery"), shown("#if-event-0"),
		setField("#if-event-0", "purchase"), setField("#if-interval", "month"))
	assert.Equal(t, []bool{false, false, false}, value(t, p, ctx, chromedp.Evaluate[[]bool](
		`["if-math-0", "if-breakdowns", "if-add-series"].map(id => !!document.getElementById(id) && document.getElementById(id).getClientRects().length > 0)`)))
	q = queryJSON(t, p, ctx)
	assert.Equal(t, []any{map[string]any{"kind": "EventsNode", "event": "purchase"}}, q["series"])
	status, body = p.call(t, "POST", "/query/", map[string]any{"query": q})
	if got, want := status, http.StatusOK; got != want {
		t.Fatalf("%v: status = %v, want %v", body, got, want)
	}

	// Saved from the page, the form's query is the endpoint's.
	p.do(t, ctx, press("#open-save"), chromedp.SendKeys(chromedp.ID("save-name"), "purchase_lifecycle"),
		press("#save-confirm"), shown("#saved"))
	status, ep := p.call(t, "GET", "/endpoints/purchase_lifecycle", nil)
	if got, want := status, http.StatusOK; got != want {
		t.Fatalf("%v: status = %v, want %v", ep, got, want)
	}
	assert.Equal(t, q, ep["query"])
	p.screenshot(t, ctx, "insight-form")
}

// testEditMaterializeDelete: an endpoint is edited into a new version,
// materialized and deleted from the page, each after a confirmation.
func (p *page) testEditMaterializeDelete(t *testing.T) {
	status, body := p.call(t, "POST", "/endpoints/", map[string]any{"name": "edited", "description": "Events by name",
		"query": map[string]any{"kind": "HogQLQuery", "query": "SELECT event, count(*) AS n FROM events GROUP BY event"}})
	got, want := status, http.StatusCreated
	require.Equal(t, want, got, "%v: status", body)
	ctx := p.tab(t)
	row := `#endpoints tr[data-endpoint="edited"]`
	p.do(t, ctx, shown(row))
	listed := value(t, p, ctx, chromedp.Text(chromedp.CSS(row)))
	assert.Equal(t, "SQL", value(t, p, ctx, chromedp.Text(chromedp.CSS(row+` [data-col="kind"]`))))
	assert.Equal(t, "no", value(t, p, ctx, chromedp.Text(chromedp.CSS(row+` [data-col="materialized"]`))))
	assert.Contains(t, value(t, p, ctx, chromedp.Text(chromedp.CSS(row+` [data-col="freshness"]`))), "1 day")
	assert.Contains(t, listed, "Events by name")

	// Edit: the query comes into the editor; saving makes version 2.
	p.do(t, ctx, press(row+" button[data-edit]"), waitText("#editing-text", "Editing 'edited' (version 1)"))
	assert.Equal(t, "SELECT event, count(*) AS n FROM events GROUP BY event", value(t, p, ctx, sqlText()), "value(t, p, ctx, chromedp.Value(chromedp.ID(\"sql\")))")
	p.do(t, ctx,
		typeSQL(" ORDER BY n DESC"),
		press("#open-save"),
		until(`document.getElementById("save-name").value === "edited"`),
		press("#save-confirm"),
		waitText("#saved-message", "version 2"),
		waitText(row, "v2 (2 versions)"),
	)
	status, ep := p.call(t, "GET", "/endpoints/edited", nil)
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, 2.0, ep["current_version"])
	assert.Equal(t, "SELECT event, count(*) AS n FROM events GROUP BY event ORDER BY n DESC", ep["query"].(map[string]any)["query"])

	// Materialize, after a confirmation.
	p.do(t, ctx, press(row+" button[data-materialize]"), shown("#confirm"))
	assert.Contains(t, value(t, p, ctx, chromedp.Text(chromedp.ID("confirm-text"))), "Materialize 'edited'?")
	p.do(t, ctx, press("#confirm-yes"), notShown("#confirm"), waitText("#endpoint-status", "is materialized"))
	_, ep = p.call(t, "GET", "/endpoints/edited", nil)
	assert.Equal(t, true, ep["is_materialized"])
	p.do(t, ctx, waitText(row+` [data-col="materialized"]`, "yes"), waitText(row+` [data-col="freshness"]`, "stored table refreshed every"))

	// Delete: cancelled, nothing happens; confirmed, it is gone.
	p.do(t, ctx, press(row+" button[data-delete]"), shown("#confirm"))
	assert.Contains(t, value(t, p, ctx, chromedp.Text(chromedp.ID("confirm-text"))), "Delete 'edited' and its 2 versions?")
	p.screenshot(t, ctx, "confirm-delete")
	p.do(t, ctx, press("#confirm-no"), notShown("#confirm"))
	status, _ = p.call(t, "GET", "/endpoints/edited", nil)
	if got, want := status, http.StatusOK; got != want {
		t.Fatalf("cancel deletes nothing: status = %v, want %v", got, want)
	}
	p.do(t, ctx, press(row+" button[data-delete]"), shown("#confirm"), press("#confirm-yes"),
		waitText("#endpoint-status", "deleted"), until(`!document.querySelector(`+strconv.Quote(row)+`)`))
	status, _ = p.call(t, "GET", "/endpoints/edited", nil)
	assert.Equal(t, http.StatusNotFound, status)
	assert.True(t, (value(t, p, ctx, visible("#editing")) == false), "editing a deleted endpoint stops: value(t, p, ctx, visible(\"#editing\")) == false is false")
}

// testFocusKeptOnRedraw: a row button keeps the keyboard's focus when the
// list is drawn anew (a refresh, a materialization that finishes and
// reloads the list), so that Enter pressed there still acts on it. CI lost
// such a press: the list was drawn anew between the focus and the key.
func (p *page) testFocusKeptOnRedraw(t *testing.T) {
	status, body := p.call(t, "POST", "/endpoints/", map[string]any{"name": "focused",
		"query": map[string]any{"kind": "HogQLQuery", "query": "SELECT count(*) AS n FROM events"}})
	require.Equal(t, http.StatusCreated, status, "%v: status", body)
	ctx := p.tab(t)
	row := `#endpoints tr[data-endpoint="focused"]`
	p.do(t, ctx, shown(row),
		chromedp.Evaluate[chromedp.Void](`window.focusedBefore = document.querySelector(`+strconv.Quote(row+" button[data-delete]")+`);
			window.focusedBefore.focus(); document.getElementById("refresh-endpoints").click()`),
		until(`!window.focusedBefore.isConnected && !!document.querySelector(`+strconv.Quote(row)+`)`),
	)
	assert.Equal(t, "focused", value(t, p, ctx, chromedp.Evaluate[string](`document.activeElement.getAttribute("data-delete") || document.activeElement.tagName`)),
		"the delete button of the row drawn anew has the focus")
	p.do(t, ctx, chromedp.KeyEvent(kb.Enter), shown("#confirm"))
	assert.Contains(t, value(t, p, ctx, chromedp.Text(chromedp.ID("confirm-text"))), "Delete 'focused'")
	p.do(t, ctx, press("#confirm-no"), notShown("#confirm"))

	// A field of the run form keeps the focus too: the form is moved aside
	// and back under the row drawn anew.
	p.openRunForm(t, ctx, "focused")
	p.do(t, ctx,
		chromedp.Evaluate[chromedp.Void](`window.rowBefore = document.querySelector(`+strconv.Quote(row)+`);
			document.getElementById("run-version").focus(); document.getElementById("refresh-endpoints").click()`),
		until(`!window.rowBefore.isConnected && !!document.querySelector(`+strconv.Quote(row)+`)`),
	)
	assert.Equal(t, "run-version", value(t, p, ctx, chromedp.Evaluate[string](`document.activeElement.id || document.activeElement.tagName`)),
		"the run form's field has the focus after the list is drawn anew")
}

// curlFits tells whether the curl box shows all its text.
func curlFits() chromedp.Action[[]int] {
	return chromedp.Evaluate[[]int](`(() => { const t = document.getElementById("saved-curl"); return [t.scrollHeight, t.clientHeight, t.scrollWidth, t.clientWidth]; })()`)
}

// testCurlBox: the curl box shows its whole command, at 1280 and 420 px,
// and is cleared when the editor switches to another query.
func (p *page) testCurlBox(t *testing.T) {
	ctx := p.tab(t)
	p.do(t, ctx, typeSQL("SELECT event, count(*) AS n FROM events GROUP BY event"),
		press("#open-save"), chromedp.SendKeys(chromedp.ID("save-name"), "curl_box_with_a_rather_long_endpoint_name_that_wraps"),
		press("#save-confirm"), shown("#saved"))
	text := value(t, p, ctx, chromedp.Value(chromedp.ID("saved-curl")))
	require.Contains(t, text, "-d '")
	for _, width := range []int64{1280, 420} {
		p.do(t, ctx, chromedp.EmulateViewport(width, 900), until(`document.getElementById("saved-curl").clientWidth > 0`),
			settled())
		m := value(t, p, ctx, curlFits())
		a, b := m[0], m[1]+1
		assert.True(t, (a <= b), "at %d px the curl box cuts lines (scroll height %d, client %d): m[0] = %v, want <= %v", width, m[0], m[1], a, b)
		if a, b := m[2], m[3]+1; !(a <= b) {
			t.Errorf("at %d px the curl box is wider than it shows: m[2] = %v, want <= %v", width, a, b)
		}
	}
	p.do(t, ctx, chromedp.EmulateViewport(1280, 900))
	p.do(t, ctx, setField("#kind", "TrendsQuery"), waitText("#sql-label", "TrendsQuery JSON"))
	assert.False(t, value(t, p, ctx, visible("#saved")), "the curl box of another query is gone: value(t, p, ctx, visible(\"#saved\")) is true")
	v := value(t, p, ctx, chromedp.Value(chromedp.ID("saved-curl")))
	assert.True(t, (v == ""), "value(t, p, ctx, chromedp.Value(chromedp.ID(\"saved-curl\"))) = %v, want it empty", v)
}

// testSchemaPanel: the Tables tab shows the schema route's tables and
// columns.
func (p *page) testSchemaPanel(t *testing.T) {
	status, body := p.call(t, "GET", "/schema", nil)
	if got, want := status, http.StatusOK; got != want {
		t.Fatalf("%v: status = %v, want %v", body, got, want)
	}
	var want [][]string
	for _, tb := range body["results"].([]any) {
		tm := tb.(map[string]any)
		for _, c := range tm["columns"].([]any) {
			cm := c.(map[string]any)
			want = append(want, []string{tm["name"].(string), cm["name"].(string), cm["type"].(string)})
		}
	}
	v := want
	require.NotEmpty(t, v, "want is empty")
	ctx := p.tab(t)
	p.do(t, ctx, press("#tab-schema"), shown(`#schema table[data-table="events"]`))
	got := value(t, p, ctx, chromedp.Evaluate[[][]string](`Array.from(document.querySelectorAll("#schema table")).flatMap(t =>
		Array.from(t.tBodies[0].rows).map(r => [t.dataset.table, r.cells[0].textContent, r.cells[1].textContent]))`))
	assert.Equal(t, want, got)
	assert.Contains(t, strings.Join(slices.Concat(got...), " "), "properties")
}

// overflow lists the visible elements wider than the card (section) that
// holds them, or reaching past its edges; what a scrolling box holds is
// the box's to show.
const overflow = `(() => {
	const out = [];
	for (const card of document.querySelectorAll("section")) {
		if (!card.getClientRects().length) continue;
		const c = card.getBoundingClientRect();
		const walk = (e) => {
			for (const k of e.children) {
				if (!k.getClientRects().length) continue;
				const r = k.getBoundingClientRect();
				if (r.width > 0 && (r.left < c.left - 1 || r.right > c.right + 1)) {
					out.push(card.className + " > " + k.tagName.toLowerCase() + (k.id ? "#" + k.id : "") + (k.className && typeof k.className === "string" ? "." + k.className : "") + " " + Math.round(r.left) + ".." + Math.round(r.right) + " in " + Math.round(c.left) + ".." + Math.round(c.right));
					continue; // the outermost offender names the fault
				}
				const st = getComputedStyle(k);
				if (st.overflowX === "auto" || st.overflowX === "scroll" || st.overflowX === "hidden") continue;
				walk(k);
			}
		};
		walk(card);
	}
	if (document.documentElement.scrollWidth > window.innerWidth + 1) out.push("page " + document.documentElement.scrollWidth + " > " + window.innerWidth);
	return out;
})()`

// testLayout: at 1280 and 420 px, with the lists, the run form, the
// insight form and the curl box open, no element is wider than its card;
// screenshots of both.
func (p *page) testLayout(t *testing.T) {
	createVariable(t, p.base, p.key, `{"name": "Layout event", "type": "String"}`)
	ctx := p.tab(t)
	check := func(width int64, what string) {
		p.do(t, ctx, chromedp.EmulateViewport(width, 900), settled())
		v := value(t, p, ctx, chromedp.Evaluate[[]string](overflow))
		assert.True(t, (len(v) == 0), "at %d px, %s: elements wider than their card: value(t, p, ctx, chromedp.Evaluate[[]string](overflow)) = %v, want it empty", width, what, v)
	}
	// The saved endpoints, one materialized, and a run form.
	for _, name := range []string{"layout_trends", "layout_trends_materialized"} {
		status, body := p.call(t, "POST", "/endpoints/", map[string]any{"name": name, "description": "Pageviews per browser in May", "query": browserTrends})
		got, want := status, http.StatusCreated
		require.Equal(t, want, got, "%v: status", body)
	}
	status, body := p.call(t, "PATCH", "/endpoints/layout_trends_materialized", map[string]any{"is_materialized": true})
	got, want := status, http.StatusOK
	require.Equal(t, want, got, "%v: status", body)
	p.openRunForm(t, ctx, "layout_trends")
	check(420, "the saved endpoints")
	// And the insight form, a filter and the curl box.
	p.do(t, ctx, chromedp.EmulateViewport(1280, 900), setField("#kind", "TrendsQuery"), shown("#if-event-0"),
		press("#if-add-filter"), shown("#if-key-0"),
		chromedp.SendKeys(chromedp.ID("if-key-0"), "country"), chromedp.SendKeys(chromedp.ID("if-value-0"), "US"),
		press("#open-save"), chromedp.SendKeys(chromedp.ID("save-name"), "layout_check"),
		press("#save-confirm"), shown("#saved"))
	for _, width := range []int64{1280, 420} {
		check(width, "the editor, Results tab")
		p.screenshot(t, ctx, "editor-"+strconv.FormatInt(width, 10))
		p.do(t, ctx, press("#tab-variables"))
		check(width, "Variables tab")
		p.do(t, ctx, press("#tab-schema"))
		check(width, "Tables tab")
		p.do(t, ctx, press("#tab-results"))
	}
	// A SQL query with a placeholder with a variable and one without, its
	// Variables tab and its rows.
	p.do(t, ctx, setField("#kind", "HogQLQuery"), waitText("#sql-label", "SQL"),
		setSQL("SELECT event, distinct_id, timestamp, properties FROM events WHERE event = {variables.layout_event} AND distinct_id <> {variables.no_variable_for_this_rather_long_name} LIMIT 5"),
		press("#tab-variables"), shown("#test-layout_event"),
		chromedp.SendKeys(chromedp.ID("test-layout_event"), "purchase"))
	check(420, "SQL Variables tab")
	p.screenshot(t, ctx, "variables-420")
	p.do(t, ctx, chromedp.EmulateViewport(1280, 900))
}
