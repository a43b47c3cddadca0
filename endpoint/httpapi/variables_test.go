package httpapi_test

import (
	"net/http"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestVariableRoutes(t *testing.T) {
	forEachSlash(t, func(t *testing.T, h *harness, slash string) {
		base := "/api/projects/1/insight_variables"

		r := h.do("POST", base+slash, keyP1, map[string]any{"id": idCountry, "name": "Country Code", "type": "String", "default_value": "US"})
		mustStatus(t, http.StatusCreated, r)
		assert.Equal(t, idCountry, r.Body["id"])
		assert.Equal(t, "country_code", r.Body["code_name"], "code_name derived from name: r.Body[\"code_name\"]")
		assert.Equal(t, "US", r.Body["default_value"])

		r = h.do("GET", base+slash, keyP1, nil)
		mustStatus(t, http.StatusOK, r)
		results := r.Body["results"].([]any)
		require.Len(t, results, 1)
		assert.Equal(t, idCountry, results[0].(map[string]any)["id"])

		one := base + "/" + idCountry + slash
		r = h.do("GET", one, keyP1, nil)
		mustStatus(t, http.StatusOK, r)
		assert.Equal(t, "Country Code", r.Body["name"])

		r = h.do("PATCH", one, keyP1, map[string]any{"name": "Country", "default_value": "GB"})
		mustStatus(t, http.StatusOK, r)
		assert.Equal(t, "Country", r.Body["name"])
		assert.Equal(t, "GB", r.Body["default_value"])
		r = h.do("GET", one, keyP1, nil)
		assert.Equal(t, "GB", r.Body["default_value"], "the patch is stored: r.Body[\"default_value\"]")

		r = h.do("DELETE", one, keyP1, nil)
		mustStatus(t, http.StatusNoContent, r)
		v := r.Raw
		assert.True(t, (len(v) == 0), "r.Raw = %v, want it empty", v)
		mustStatus(t, http.StatusNotFound, h.do("GET", one, keyP1, nil))
		r = h.do("GET", base+slash, keyP1, nil)
		if got := r.Body["results"]; got != nil && !reflect.DeepEqual(got, []any{}) {
			t.Errorf("r.Body[\"results\"] = %v, want none", got)
		}
		assert.Contains(t, string(r.Raw), `"results":[]`, "an empty list is [], not null")
	})
}
