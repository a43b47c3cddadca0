package demo

import (
	"crypto/subtle"
	"database/sql"
	"encoding/json"
	"net/http"
	"strings"
)

// HandWrittenHandler is what a host would write by hand instead of the
// library for two endpoints of project 1's events, the yardstick of the
// library's speed (BenchmarkHTTPRun in endpoint/httpapi, examples/loadtest):
// one route per query, a bearer key compared in constant time, the body
// decoded into a struct, the variable checked for its type, the query run
// with the value bound, and the rows encoded as JSON. Its routes are the
// run routes of the endpoints "select1" (SELECT 1) and "count" (the events
// of project 1 named by the variable "name", on the tenant-first index, as
// the library's count scoped to the project is).
func HandWrittenHandler(db *sql.DB, key string) http.Handler {
	type runBody struct {
		Variables map[string]any `json:"variables"`
	}
	type answer struct {
		Columns []string `json:"columns"`
		Results [][]any  `json:"results"`
	}
	serve := func(query string, params ...string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || subtle.ConstantTimeCompare([]byte(tok), []byte(key)) != 1 || r.PathValue("project") != "1" {
				http.Error(w, `{"detail": "unauthorized"}`, http.StatusUnauthorized)
				return
			}
			var body runBody
			if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
				http.Error(w, `{"detail": "bad body"}`, http.StatusBadRequest)
				return
			}
			args := make([]any, len(params))
			for i, p := range params {
				s, ok := body.Variables[p].(string)
				if !ok {
					http.Error(w, `{"detail": "bad variable"}`, http.StatusBadRequest)
					return
				}
				args[i] = s
			}
			rows, err := db.QueryContext(r.Context(), query, args...)
			if err != nil {
				http.Error(w, `{"detail": "query failed"}`, http.StatusBadGateway)
				return
			}
			defer rows.Close()
			cols, err := rows.Columns()
			if err != nil {
				http.Error(w, `{"detail": "query failed"}`, http.StatusBadGateway)
				return
			}
			out := answer{Columns: cols, Results: [][]any{}}
			for rows.Next() {
				row := make([]any, len(cols))
				dest := make([]any, len(cols))
				for i := range row {
					dest[i] = &row[i]
				}
				if err := rows.Scan(dest...); err != nil {
					http.Error(w, `{"detail": "query failed"}`, http.StatusBadGateway)
					return
				}
				out.Results = append(out.Results, row)
			}
			if rows.Err() != nil {
				http.Error(w, `{"detail": "query failed"}`, http.StatusBadGateway)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(out) //nolint:errcheck // the client went away
		}
	}
	mux := http.NewServeMux()
	mux.Handle("POST /api/projects/{project}/endpoints/count/run", serve("SELECT count(*) AS n FROM events WHERE project_id = '1' AND event = ?", "name"))
	mux.Handle("POST /api/projects/{project}/endpoints/select1/run", serve("SELECT 1"))
	return mux
}
