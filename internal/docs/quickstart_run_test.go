package docs_test

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
)

// Example_quickStart runs the README's quick start: the API of serve over a
// SQLite file with an events table, an endpoint saved and run over HTTP.
func Example_quickStart() {
	dir, err := os.MkdirTemp("", "endpointkit-quickstart-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "analytics.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		log.Fatal(err)
	}
	_, err = db.Exec(`CREATE TABLE events (event TEXT, timestamp TEXT);
		INSERT INTO events VALUES ('purchase', '2025-05-01 10:00:00'), ('purchase', '2025-05-02 11:00:00'), ('signed_up', '2025-05-02 12:00:00')`)
	if err != nil {
		log.Fatal(err)
	}
	db.Close()

	h, err := serve(path, "secret-key")
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(h) // or http.ListenAndServe(":8080", h)
	defer srv.Close()
	call := func(method, path, body string) {
		req, _ := http.NewRequest(method, srv.URL+"/api/projects/1/"+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer secret-key")
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
			log.Fatal(err)
		}
		for _, k := range []string{"code_name", "results", "name", "detail"} {
			if v, ok := out[k]; ok {
				fmt.Println(res.StatusCode, k, v)
				return
			}
		}
	}
	call("POST", "insight_variables/", `{"id": "6f1c8a52-7d0e-4b9a-9c31-2e5f7a8b9c01", "name": "Event", "type": "String"}`)
	call("POST", "endpoints/", `{"name": "per_day", "query": {"kind": "HogQLQuery",
		"query": "SELECT substr(timestamp, 1, 10) AS day, count(*) AS n FROM events WHERE event = {variables.event} GROUP BY day ORDER BY day",
		"variables": {"6f1c8a52-7d0e-4b9a-9c31-2e5f7a8b9c01": {"variableId": "6f1c8a52-7d0e-4b9a-9c31-2e5f7a8b9c01", "code_name": "event"}}}}`)
	call("POST", "endpoints/per_day/run", `{"variables": {"event": "purchase"}}`)
	call("POST", "endpoints/per_day/run", `{}`)
	// Output:
	// 201 code_name event
	// 201 name per_day
	// 200 results [[2025-05-01 1] [2025-05-02 1]]
	// 400 detail Required variable(s) 'event' not provided
}
