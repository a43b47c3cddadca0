package main

import (
	"bytes"
	"encoding/csv"
	"io"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"

	pq "github.com/parquet-go/parquet-go"
)

// TestFormatsOverHTTP: the example server answers a run in CSV (by
// Accept), NDJSON and Parquet (by the body's format), the last one because
// it registers package endpoint/httpapi/parquet.
func TestFormatsOverHTTP(t *testing.T) {
	s := start(t, []string{"-api-key", "k", "-demo-events", "200"}, nil)
	base := regexp.MustCompile(`server on (http://\S+)`).FindStringSubmatch(s.out.String())[1]
	create := curl(t, []string{"-X", "POST", base + "/api/projects/1/endpoints/", "-H", "Authorization: Bearer k",
		"-H", "Content-Type: application/json", "-d", `{"name": "by_event", "query": {"kind": "HogQLQuery", "query": "SELECT event, count(*) AS n FROM events GROUP BY event ORDER BY event"}}`})
	if got, want := create.status, http.StatusCreated; got != want {
		t.Fatalf("%v: create.status = %v, want %v", create.raw, got, want)
	}
	run := func(body, accept string) (*http.Response, []byte) {
		req, err := http.NewRequest("POST", base+"/api/projects/1/endpoints/by_event/run", strings.NewReader(body))
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		req.Header.Set("Authorization", "Bearer k")
		req.Header.Set("Content-Type", "application/json")
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if got, want := res.StatusCode, http.StatusOK; got != want {
			t.Fatalf("%s: res.StatusCode = %v, want %v", b, got, want)
		}
		return res, b
	}
	res, b := run(`{}`, "text/csv")
	if got, want := res.Header.Get("X-Endpointkit-Columns"), `["event","n"]`; got != want {
		t.Errorf("res.Header.Get(\"X-Endpointkit-Columns\") = %q, want %q", got, want)
	}
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got, want := recs[0], ([]string{"event", "n"}); !reflect.DeepEqual(got, want) {
		t.Errorf("recs[0] = %+v, want %+v", got, want)
	}
	if a, b := len(recs), 2; !(a > b) {
		t.Errorf("len(recs) = %v, want > %v", a, b)
	}

	_, b = run(`{"format": "ndjson"}`, "")
	if got, want := strings.Count(string(b), "\n"), len(recs)-1; got != want {
		t.Errorf("strings.Count(string(b), \"\\n\") = %v, want %v", got, want)
	}

	res, b = run(`{"format": "parquet"}`, "")
	if got, want := res.Header.Get("Content-Type"), "application/vnd.apache.parquet"; got != want {
		t.Errorf("res.Header.Get(\"Content-Type\") = %q, want %q", got, want)
	}
	f, err := pq.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got, want := f.NumRows(), int64(len(recs)-1); got != want {
		t.Errorf("f.NumRows() = %v, want %v", got, want)
	}
}
