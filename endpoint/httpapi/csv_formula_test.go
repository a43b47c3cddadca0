package httpapi_test

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// formulaValues are texts a spreadsheet runs as formulas (OWASP's CSV
// injection), and texts it does not.
var formulaValues = []struct {
	text    string
	formula bool
}{
	{"=1+2", true},
	{"@SUM(1)", true},
	{`=HYPERLINK("x")`, true},
	{"+1", true},
	{"-2", true}, // a text, not a number: guarded
	{"\t=1", true},
	{"\r=1", true},
	{"plain", false},
	{" lead", false},
	{"a=1", false},
	{"", false},
}

// formulaColumns are the column names of the formula query: the id, the
// text, a number (-5 on the first row) and names that are formulas.
var formulaColumns = []string{"id", "v", "n", "=1+2", "@SUM(1)", `=HYPERLINK("x")`, "+1", "-x", "\t=1", "\r=1"}

// formulaSQL reads the formulas table under formulaColumns.
const formulaSQL = `SELECT id, v, n, 1 AS "=1+2", 2 AS "@SUM(1)", 3 AS "=HYPERLINK(""x"")", 4 AS "+1", 5 AS "-x", 6 AS "` + "\t=1" + `", 7 AS "` + "\r=1" + `" FROM formulas ORDER BY id`

// formulaServer serves an inline and a materialized endpoint over the
// formulas table on SQLite, with opts.
func formulaServer(t *testing.T, opts ...httpapi.Option) *harness {
	t.Helper()
	db := openEvents(t, 0)
	_, err := db.Exec("CREATE TABLE formulas (id INTEGER, v TEXT, n INTEGER)")
	require.NoError(t, err)
	for i, f := range formulaValues {
		n := i + 1
		if i == 0 {
			n = -5
		}
		_, err := db.Exec("INSERT INTO formulas VALUES (?, ?, ?)", i+1, f.text, n)
		require.NoError(t, err)
	}
	h := formatServer(t, db, engine.SQLite, opts...)
	for _, name := range []string{"formulas", "formulas_m"} {
		mustStatus(t, http.StatusCreated, h.do("POST", "/api/projects/1/endpoints/", keyP1, map[string]any{
			"name": name, "query": sqlQuery(formulaSQL, nil), "is_materialized": name == "formulas_m"}))
	}
	mustStatus(t, http.StatusOK, h.do("POST", "/api/projects/1/endpoints/formulas_m/materialize?wait=true", keyP1, map[string]any{}))
	return h
}

// wantFormulaCSV is the CSV the formula query reads as (encoding/csv),
// guarded or not.
func wantFormulaCSV(guard bool) [][]string {
	g := func(s string, formula bool) string {
		if guard && formula {
			return "'" + s
		}
		return s
	}
	head := make([]string, len(formulaColumns))
	for i, c := range formulaColumns {
		head[i] = g(c, i >= 3)
	}
	out := [][]string{head}
	for i, f := range formulaValues {
		n := "-5" // a number of a numeric column: never guarded
		if i > 0 {
			n = jsonText(i + 1)
		}
		out = append(out, []string{jsonText(i + 1), g(f.text, f.formula), n, "1", "2", "3", "4", "5", "6", "7"})
	}
	return out
}

func jsonText(v any) string { b, _ := json.Marshal(v); return string(b) }

// readCSV reads a CSV answer as records; encoding/csv reads "\r\n" inside
// a quoted field as "\n" but keeps a lone "\r", as every cell here is.
func readCSV(t *testing.T, r raw) [][]string {
	t.Helper()
	got, want := r.status, http.StatusOK
	require.Equal(t, want, got, "%s: r.status", r.body)
	assert.Equal(t, "text/csv; charset=utf-8; header=present", r.header.Get("Content-Type"), "Content-Type")
	assert.Equal(t, "", r.trailer.Get(httpapi.HeaderError), "trailer %s", httpapi.HeaderError)
	records, err := csv.NewReader(bytes.NewReader(r.body)).ReadAll()
	require.NoError(t, err, "%q", r.body)
	return records
}

// TestCSVFormulaGuard: on every path that answers CSV (a run computed, the
// same run from the result cache, CSV asked by Accept, a materialized run,
// the editor's query route), a cell or a column name that begins with =,
// +, -, @, a tab or a carriage return is written with a leading ', a
// number (-5) as it is; NDJSON and Parquet carry the values unchanged.
// WithCSVFormulaGuard(false) writes every value as it is.
func TestCSVFormulaGuard(t *testing.T) {
	for _, guard := range []bool{true, false} {
		t.Run(map[bool]string{true: "default", false: "off"}[guard], func(t *testing.T) {
			var opts []httpapi.Option
			if !guard {
				opts = append(opts, httpapi.WithCSVFormulaGuard(false))
			}
			h := formulaServer(t, opts...)
			want := wantFormulaCSV(guard)
			run := "/api/projects/1/endpoints/formulas/run"
			query := `{"query": {"kind": "HogQLQuery", "query": ` + jsonText(formulaSQL) + `}`
			paths := []struct {
				name string
				r    func() raw
			}{
				{"computed", func() raw { return h.post(run, keyP1, `{"refresh": "force", "format": "csv"}`) }},
				{"cached", func() raw { return h.post(run, keyP1, `{"refresh": "cache", "format": "csv"}`) }},
				{"accept", func() raw { return h.post(run, keyP1, `{}`, "Accept", "text/csv") }},
				{"materialized", func() raw {
					return h.post("/api/projects/1/endpoints/formulas_m/run", keyP1, `{"format": "csv"}`)
				}},
				{"query", func() raw { return h.post("/api/projects/1/query/", keyP1, query+`, "format": "csv"}`) }},
			}
			for _, p := range paths {
				assert.Equal(t, want, readCSV(t, p.r()), "%s: records", p.name)
			}
			// The cached and materialized paths were taken.
			assert.True(t, decodeAnswer(t, h.post(run, keyP1, `{}`)).IsCached, "the run was not answered from the cache: is_cached is false")
			m := h.do("POST", "/api/projects/1/endpoints/formulas_m/run", keyP1, map[string]any{})
			mustStatus(t, http.StatusOK, m)
			if got, want := m.Body["endpoint_materialized"], true; got != want {
				t.Errorf("endpoint_materialized = %v, want %v", got, want)
			}

			// NDJSON: the values as they are, whatever the setting.
			r := h.post(run, keyP1, `{"format": "ndjson"}`)
			if got, want := r.status, http.StatusOK; got != want {
				t.Fatalf("%s: r.status = %v, want %v", r.body, got, want)
			}
			sc := bufio.NewScanner(bytes.NewReader(r.body))
			for i := 0; sc.Scan(); i++ {
				var line map[string]any
				if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
					t.Fatalf("line %d %q: unexpected error: %v", i, sc.Bytes(), err)
				}
				if got, want := line["v"], formulaValues[i].text; got != want {
					t.Errorf("NDJSON line %d: v = %q, want %q", i, got, want)
				}
				_, ok := line["=1+2"]
				assert.True(t, ok, "NDJSON line %d: no key %q: %v", i, "=1+2", line)
			}
			// Parquet: the values as they are.
			r = h.post(run, keyP1, `{"format": "parquet"}`)
			if got, want := r.status, http.StatusOK; got != want {
				t.Fatalf("%s: r.status = %v, want %v", r.body, got, want)
			}
			s := string(r.body)
			if assert.Contains(t, s, `=HYPERLINK("x")`, "Parquet: the values are not as they are") {
				assert.NotContains(t, s, `'=`, "Parquet: the values are not as they are")
			}
		})
	}
}

// TestCSVFormulaNumbers: a numeric column's negative numbers, from the
// executor and from the result cache, are written as numbers, never
// guarded, while the same text in a text column is.
func TestCSVFormulaNumbers(t *testing.T) {
	db := openEvents(t, 0)
	h := formatServer(t, db, engine.SQLite)
	mustStatus(t, http.StatusCreated, h.do("POST", "/api/projects/1/endpoints/", keyP1, map[string]any{
		"name": "neg", "query": sqlQuery(`SELECT -5 AS i, -0.5 AS f, '-5' AS s, -1e300 AS e`, nil)}))
	for _, refresh := range []string{"force", "cache"} {
		r := h.post("/api/projects/1/endpoints/neg/run", keyP1, `{"refresh": "`+refresh+`", "format": "csv"}`)
		want := [][]string{{"i", "f", "s", "e"}, {"-5", "-0.5", "'-5", "-1e+300"}}
		assert.Equal(t, want, readCSV(t, r), "%s: records", refresh)
	}
}
