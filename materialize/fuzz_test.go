package materialize

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/engine"
	"github.com/endpointkit/endpointkit/variable"
)

// FuzzAnalyze feeds arbitrary query text to Analyze in every dialect: it
// must never panic, its verdict must be consistent, and a plan must read,
// read a page and refresh.
func FuzzAnalyze(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*/query.sql")
	for _, s := range seeds {
		if data, err := os.ReadFile(s); err == nil {
			f.Add(string(data))
		}
	}
	for _, s := range []string{"/*!*/", "/*!", "select /*!*/ 1", "SELECT 1 FROM t WHERE a = {variables.x}0",
		"SELECT a FROM t WHERE a = :v1 AND b = {variables.b}", "SELECT count(*) FROM t WHERE {variables.a} = {variables.b}",
		"SELECT max(a, b) FROM t WHERE c >= {variables.d} GROUP BY a", "SELECT avg(*) FROM t WHERE c >= {variables.d}",
		"SELECT a FROM t WHERE ((a = {variables.a}) AND (b < {variables.b}))", "select 1 from dual", "'", "{variables.", ""} {
		f.Add(s)
	}
	dialects := []engine.Engine{engine.SQLite, engine.PostgreSQL, engine.MySQL, engine.ClickHouse}
	day := variable.Timestamp{Time: time.Date(2025, 9, 1, 0, 0, 0, 0, time.UTC)}
	f.Fuzz(func(t *testing.T, query string) {
		for _, d := range dialects {
			types := map[string]variable.Type{"d": variable.Date, "date_from": variable.Date, "b": variable.Date}
			a, err := Analyze(query, Options{Engine: d, Types: types})
			if err != nil {
				t.Fatalf("Analyze(%q): %v", query, err)
			}
			if a.Materializable() != (len(a.Reasons) == 0) {
				t.Fatalf("Analyze(%q): plan %v with reasons %v", query, a.Plan != nil, a.Reasons)
			}
			if a.Plan == nil {
				continue
			}
			if a.Plan.Precompute() == "" {
				t.Fatalf("Analyze(%q): empty pre-compute query", query)
			}
			values := map[string]any{}
			for _, v := range a.Variables {
				values[v.Name] = "x"
				if types[v.Name] == variable.Date {
					values[v.Name] = day
				}
			}
			read, _, err := a.Plan.Read("t", values)
			if err != nil {
				t.Fatalf("Read of %q: %v", query, err)
			}
			page, _, perr := a.Plan.ReadPage("t", values, 11, 3)
			if (err == nil) != (perr == nil) || !strings.Contains(page, read) {
				t.Fatalf("ReadPage of %q: %q, %v; Read: %q, %v", query, page, perr, read, err)
			}
			if _, err := a.Plan.Refresh("t"); err != nil {
				t.Fatalf("Refresh of %q: %v", query, err)
			}
		}
	})
}
