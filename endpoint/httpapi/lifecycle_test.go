package httpapi_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// insightLifecycle is a weekly lifecycle of pageviews in May 2025.
const insightLifecycle = `{"kind": "LifecycleQuery",
	"series": [{"kind": "EventsNode", "event": "$pageview"}],
	"interval": "week",
	"dateRange": {"date_from": "2025-05-05", "date_to": "2025-05-31"},
	"lifecycleFilter": {"toggledLifecycles": ["new", "dormant"]}}`

// TestHTTPLifecycle: a lifecycle endpoint over HTTP answers PostHog's four
// status series, its dates moved by date_from and date_to, its values
// bound; materialized, it reads its table, answers as the inline endpoint
// does, and refuses the dates.
func TestHTTPLifecycle(t *testing.T) {
	h := newHarness(t, nil)
	base := "/api/projects/1/endpoints/"
	query := rawJSON(t, insightLifecycle)
	r := h.do("POST", base, keyP1, map[string]any{"name": "inline", "query": query})
	mustStatus(t, http.StatusCreated, r)
	assert.Equal(t, query, r.Body["query"], "the query reads back as saved")

	r = h.do("POST", base+"inline/run", keyP1, map[string]any{"variables": map[string]any{}, "debug": true})
	mustStatus(t, http.StatusOK, r)
	assert.Equal(t, []any{}, r.Body["columns"])
	assert.NotContains(t, r.Body["debug"].(map[string]any)["sql"], "$pageview", "values are bound")
	results := r.Body["results"].([]any)
	require.Len(t, results, 4, "every status, whatever toggledLifecycles says")
	users := 0
	for i, status := range []string{"new", "returning", "resurrecting", "dormant"} {
		s := results[i].(map[string]any)
		assert.Equal(t, status, s["status"])
		assert.Equal(t, "$pageview - "+status, s["label"])
		assert.Equal(t, []any{"2025-05-05", "2025-05-12", "2025-05-19", "2025-05-26"}, s["days"])
		assert.Equal(t, []any{"5-May-2025", "12-May-2025", "19-May-2025", "26-May-2025"}, s["labels"])
		assert.Equal(t, map[string]any{"id": "$pageview", "name": "$pageview", "type": "events", "order": json.Number("0"), "math": "total"}, s["action"])
		for _, v := range s["data"].([]any) {
			n, err := v.(json.Number).Int64()
			require.NoError(t, err)
			if status == "dormant" {
				assert.LessOrEqual(t, n, int64(0))
			} else {
				assert.GreaterOrEqual(t, n, int64(0))
			}
			users += int(n * n)
		}
	}
	assert.Positive(t, users)

	r = h.do("POST", base+"inline/run", keyP1, map[string]any{"variables": map[string]any{"date_from": "2025-05-19", "date_to": "2025-05-20"}})
	mustStatus(t, http.StatusOK, r)
	assert.Equal(t, []any{"2025-05-19"}, r.Body["results"].([]any)[0].(map[string]any)["days"])
	r = h.do("POST", base+"inline/run", keyP1, map[string]any{"variables": map[string]any{"$browser": "Chrome"}})
	mustStatus(t, http.StatusBadRequest, r)
	assert.Equal(t, "Unknown variable(s): $browser", r.detail())

	mustStatus(t, http.StatusCreated, h.do("POST", base, keyP1, map[string]any{"name": "stored", "query": query, "is_materialized": true}))
	mustStatus(t, http.StatusOK, h.do("POST", base+"stored/materialize", keyP1, nil))
	got := h.do("POST", base+"stored/run", keyP1, map[string]any{"variables": map[string]any{}})
	mustStatus(t, http.StatusOK, got)
	assert.Equal(t, true, got.Body["endpoint_materialized"])
	want := h.do("POST", base+"inline/run", keyP1, map[string]any{"variables": map[string]any{}})
	assert.Equal(t, want.Body["results"], got.Body["results"])
	r = h.do("POST", base+"stored/run", keyP1, map[string]any{"variables": map[string]any{"date_to": "2025-05-20"}})
	mustStatus(t, http.StatusBadRequest, r)
	assert.Equal(t, "unknown_variable", r.Body["code"])

	r = h.do("POST", base, keyP1, map[string]any{"name": "bad", "query": rawJSON(t, `{"kind": "LifecycleQuery", "series": [{"kind": "EventsNode", "math": "sum", "math_property": "amount"}]}`)})
	mustStatus(t, http.StatusBadRequest, r)
	assert.Equal(t, "query.series[0].math", r.Body["attr"])
}
