package httpapi_test

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func TestVariableRoutes(t *testing.T) {
	for _, slash := range []string{"/", ""} {
		t.Run("slash="+slash, func(t *testing.T) {
			h := newHarness(t, nil)
			base := "/api/projects/1/insight_variables"

			r := h.do("POST", base+slash, keyP1, map[string]any{"id": idCountry, "name": "Country Code", "type": "String", "default_value": "US"})
			mustStatus(t, http.StatusCreated, r)
			if got, want := r.Body["id"], idCountry; !reflect.DeepEqual(got, want) {
				t.Errorf("r.Body[\"id\"] = %q, want %q", got, want)
			}
			if got, want := r.Body["code_name"], "country_code"; !reflect.DeepEqual(got, want) {
				t.Errorf("code_name derived from name: r.Body[\"code_name\"] = %q, want %q", got, want)
			}
			if got, want := r.Body["default_value"], "US"; !reflect.DeepEqual(got, want) {
				t.Errorf("r.Body[\"default_value\"] = %q, want %q", got, want)
			}

			r = h.do("GET", base+slash, keyP1, nil)
			mustStatus(t, http.StatusOK, r)
			results := r.Body["results"].([]any)
			if got := len(results); got != 1 {
				t.Fatalf("len(results) = %d, want %d: %v", got, 1, results)
			}
			if got, want := results[0].(map[string]any)["id"], idCountry; !reflect.DeepEqual(got, want) {
				t.Errorf("results[0].(map[string]any)[\"id\"] = %q, want %q", got, want)
			}

			one := base + "/" + idCountry + slash
			r = h.do("GET", one, keyP1, nil)
			mustStatus(t, http.StatusOK, r)
			if got, want := r.Body["name"], "Country Code"; !reflect.DeepEqual(got, want) {
				t.Errorf("r.Body[\"name\"] = %q, want %q", got, want)
			}

			r = h.do("PATCH", one, keyP1, map[string]any{"name": "Country", "default_value": "GB"})
			mustStatus(t, http.StatusOK, r)
			if got, want := r.Body["name"], "Country"; !reflect.DeepEqual(got, want) {
				t.Errorf("r.Body[\"name\"] = %q, want %q", got, want)
			}
			if got, want := r.Body["default_value"], "GB"; !reflect.DeepEqual(got, want) {
				t.Errorf("r.Body[\"default_value\"] = %q, want %q", got, want)
			}
			r = h.do("GET", one, keyP1, nil)
			if got, want := r.Body["default_value"], "GB"; !reflect.DeepEqual(got, want) {
				t.Errorf("the patch is stored: r.Body[\"default_value\"] = %q, want %q", got, want)
			}

			r = h.do("DELETE", one, keyP1, nil)
			mustStatus(t, http.StatusNoContent, r)
			if v := r.Raw; !(len(v) == 0) {
				t.Errorf("r.Raw = %v, want it empty", v)
			}
			mustStatus(t, http.StatusNotFound, h.do("GET", one, keyP1, nil))
			r = h.do("GET", base+slash, keyP1, nil)
			if got := r.Body["results"]; got != nil && !reflect.DeepEqual(got, []any{}) {
				t.Errorf("r.Body[\"results\"] = %v, want none", got)
			}
			if s, sub := string(r.Raw), `"results":[]`; !strings.Contains(s, sub) {
				t.Errorf("an empty list is [], not null: %q does not contain %q", s, sub)
			}
		})
	}
}
