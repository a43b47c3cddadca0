package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/embed"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/endpoint/httpapi/parquet"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	pq "github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// kindsRows are the rows of the kinds table: every shape a CSV field can
// take (commas, quotes, line breaks, leading space, an empty string, a
// null, non-ASCII), integers, floats and times.
var kindsRows = [][]any{
	{1, "plain", 1.5, "x", time.Date(2025, 5, 1, 12, 30, 0, 0, time.UTC)},
	{2, "a, b", -0.25, "", nil},
	{3, "say \"hi\"", 1e-7, nil, time.Date(2025, 5, 2, 0, 0, 0, 0, time.UTC)},
	{4, "two\nlines", 3.0, " lead", nil},
	{5, "héllo ✓ 🙂", 123456789.125, `\.`, nil},
	{6, nil, nil, "tab\tin", nil},
}

// formatTarget is one engine's database with the kinds table.
type formatTarget struct {
	name string
	db   func(t testing.TB) *sql.DB
	eng  engine.Engine
}

var formatTargets = []formatTarget{
	{"sqlite", func(t testing.TB) *sql.DB { return openEvents(t, 0) }, engine.SQLite},
	{"postgresql", testdb.Postgres, engine.PostgreSQL},
	{"mysql", testdb.MySQL, engine.MySQL},
}

// formatServer serves one project over db with the Parquet format
// registered and a result cache, so that a run can be answered computed
// or cached.
func formatServer(t *testing.T, db *sql.DB, eng engine.Engine, opts ...httpapi.Option) *harness {
	t.Helper()
	_, h := formatService(t, db, eng, opts...)
	return h
}

// formatService is formatServer with its Service.
func formatService(t *testing.T, db *sql.DB, eng engine.Engine, opts ...httpapi.Option) (*endpoint.Service, *harness) {
	t.Helper()
	eps, vars := newStores(t)
	svc, err := endpoint.New(endpoint.Config{Endpoints: eps, Variables: vars, Executor: sqlexec.New(db, eng),
		ResultCache: memstore.NewResultCache(1 << 20)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = svc.Close(context.Background()) })
	opts = append([]httpapi.Option{httpapi.WithLimiter(nil), httpapi.WithFormat(parquet.Format{})}, opts...)
	srv := httptest.NewServer(httpapi.New(svc, keyring(t), opts...))
	t.Cleanup(srv.Close)
	return svc, &harness{t: t, server: srv}
}

// formatEndpoint serves db (formatService) and saves the SQL endpoint
// name, query, in project 1; it returns the Service, the server and the
// endpoint's run path.
func formatEndpoint(t *testing.T, db *sql.DB, eng engine.Engine, name, query string, opts ...httpapi.Option) (*endpoint.Service, *harness, string) {
	t.Helper()
	svc, h := formatService(t, db, eng, opts...)
	mustStatus(t, http.StatusCreated, h.do("POST", "/api/projects/1/endpoints/", keyP1, map[string]any{"name": name, "query": sqlQuery(query, nil)}))
	return svc, h, "/api/projects/1/endpoints/" + name + "/run"
}

// raw is an answer as it came: status, headers, body, trailers.
type raw struct {
	status  int
	header  http.Header
	trailer http.Header
	body    []byte
}

// post sends body to path with key and extra headers, and reads the whole
// answer (and its trailers).
func (h *harness) post(path, key, body string, header ...string) raw {
	h.t.Helper()
	req, err := http.NewRequest("POST", h.server.URL+path, strings.NewReader(body))
	require.NoError(h.t, err)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := h.server.Client().Do(req)
	require.NoError(h.t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(h.t, err)
	return raw{status: res.StatusCode, header: res.Header, trailer: res.Trailer, body: b}
}

// jsonAnswer is the JSON answer decoded with UseNumber.
type jsonAnswer struct {
	Columns  []string `json:"columns"`
	Types    []string `json:"types"`
	Results  [][]any  `json:"results"`
	HasMore  bool     `json:"hasMore"`
	IsCached bool     `json:"is_cached"`
}

func decodeAnswer(t *testing.T, r raw) jsonAnswer {
	t.Helper()
	got, want := r.status, http.StatusOK
	require.Equal(t, want, got, "%s: r.status", r.body)
	require.Equal(t, "application/json", r.header.Get("Content-Type"))
	var a jsonAnswer
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&a))
	return a
}

// cellText is how CSV writes a JSON value: its JSON text, a string
// without its quotes, null as nothing.
func cellText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		return string(x)
	case bool:
		return fmt.Sprint(x)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// headerList decodes a header holding a JSON array of strings.
func headerList(t *testing.T, h http.Header, name string) []string {
	t.Helper()
	var out []string
	if err := json.Unmarshal([]byte(h.Get(name)), &out); err != nil {
		t.Fatalf("%s: %q: unexpected error: %v", name, h.Get(name), err)
	}
	return out
}

// checkCSV parses a CSV answer with encoding/csv and requires the JSON
// answer's columns, types and rows.
func checkCSV(t *testing.T, r raw, want jsonAnswer) {
	t.Helper()
	if got, want := r.status, http.StatusOK; got != want {
		t.Fatalf("%s: r.status = %v, want %v", r.body, got, want)
	}
	assert.Equal(t, "text/csv; charset=utf-8; header=present", r.header.Get("Content-Type"))
	if got, want := headerList(t, r.header, httpapi.HeaderTypes), want.Types; !reflect.DeepEqual(got, want) {
		t.Errorf("headerList(t, r.header, httpapi.HeaderTypes) = %+v, want %+v", got, want)
	}
	if got, want := headerList(t, r.header, httpapi.HeaderColumns), want.Columns; !reflect.DeepEqual(got, want) {
		t.Errorf("headerList(t, r.header, httpapi.HeaderColumns) = %+v, want %+v", got, want)
	}
	if got, want := r.header.Get(httpapi.HeaderHasMore), fmt.Sprint(want.HasMore); got != want {
		t.Errorf("r.header.Get(httpapi.HeaderHasMore) = %q, want %q", got, want)
	}
	v := r.trailer.Get(httpapi.HeaderError)
	assert.True(t, (v == ""), "r.trailer.Get(httpapi.HeaderError) = %v, want it empty", v)
	records, err := csv.NewReader(bytes.NewReader(r.body)).ReadAll()
	require.NoError(t, err, "%s", r.body)
	require.Equal(t, want.Columns, records[0])
	require.Len(t, records, len(want.Results)+1)
	for i, row := range want.Results {
		cells := make([]string, len(row))
		for j, v := range row {
			cells[j] = cellText(v)
		}
		got, want := records[i+1], cells
		assert.Equal(t, want, got, "row %d: records[i+1]", i)
	}
	// null and "" differ in the text: an empty field against "".
	for i, row := range want.Results {
		for j, v := range row {
			if s, ok := v.(string); ok && s == "" {
				line := strings.Split(string(r.body), "\n")[i+1]
				assert.Contains(t, line, `""`, "row %d column %d", i, j)
			}
		}
	}
}

// checkNDJSON decodes each line of an NDJSON answer and requires the JSON
// answer's rows, values and JSON types alike.
func checkNDJSON(t *testing.T, r raw, want jsonAnswer) {
	t.Helper()
	if got, want := r.status, http.StatusOK; got != want {
		t.Fatalf("%s: r.status = %v, want %v", r.body, got, want)
	}
	assert.Equal(t, httpapi.MediaTypeNDJSON, r.header.Get("Content-Type"))
	if got, want := headerList(t, r.header, httpapi.HeaderTypes), want.Types; !reflect.DeepEqual(got, want) {
		t.Errorf("headerList(t, r.header, httpapi.HeaderTypes) = %+v, want %+v", got, want)
	}
	cols := headerList(t, r.header, httpapi.HeaderColumns)
	assert.Equal(t, want.Columns, cols)
	v := r.trailer.Get(httpapi.HeaderError)
	assert.True(t, (v == ""), "r.trailer.Get(httpapi.HeaderError) = %v, want it empty", v)
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.UseNumber()
	var got [][]any
	for dec.More() {
		var obj map[string]any
		require.NoError(t, dec.Decode(&obj))
		require.Len(t, obj, len(cols))
		row := make([]any, len(cols))
		for i, c := range cols {
			row[i] = obj[c]
		}
		got = append(got, row)
	}
	if len(want.Results) == 0 {
		v := got
		assert.True(t, (len(v) == 0), "got = %v, want it empty", v)
		return
	}
	assert.Equal(t, want.Results, got)
	// Keys are in column order in the text.
	first := strings.SplitN(string(r.body), "\n", 2)[0]
	last := -1
	for _, c := range cols {
		k, _ := json.Marshal(c)
		at := strings.Index(first, string(k)+":")
		a, b := at, last
		assert.True(t, (a > b), "key %s out of order in %s: at = %v, want > %v", k, first, a, b)
		last = at
	}
}

// checkParquet reads a Parquet answer with parquet-go and requires the
// JSON answer's columns and values: INT64 for integers, DOUBLE for
// numbers, UTF-8 strings for text and times, nulls where JSON has null.
func checkParquet(t *testing.T, r raw, want jsonAnswer) {
	t.Helper()
	if got, want := r.status, http.StatusOK; got != want {
		t.Fatalf("%s: r.status = %v, want %v", r.body, got, want)
	}
	assert.Equal(t, parquet.MediaType, r.header.Get("Content-Type"))
	v := r.trailer.Get(httpapi.HeaderError)
	assert.True(t, (v == ""), "r.trailer.Get(httpapi.HeaderError) = %v, want it empty", v)
	f, err := pq.OpenFile(bytes.NewReader(r.body), int64(len(r.body)))
	require.NoError(t, err)
	var names []string
	for _, c := range f.Schema().Fields() {
		names = append(names, c.Name())
	}
	require.Equal(t, want.Columns, names)
	rd := pq.NewReader(bytes.NewReader(r.body))
	var got [][]any
	rows := make([]pq.Row, 16)
	for {
		n, err := rd.ReadRows(rows)
		for _, row := range rows[:n] {
			vals := make([]any, len(names))
			for _, v := range row {
				vals[v.Column()] = parquetValue(v)
			}
			got = append(got, vals)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
	}
	require.Len(t, got, len(want.Results))
	for i, row := range want.Results {
		for j, v := range row {
			switch x := v.(type) {
			case json.Number:
				if n, err := x.Int64(); err == nil && f.Schema().Fields()[j].Type().Kind() == pq.Int64 {
					got, want := got[i][j], n
					assert.Equal(t, want, got, "row %d column %s: got[i][j]", i, names[j])
				} else {
					fl, err := x.Float64()
					require.NoError(t, err)
					got, want := got[i][j], fl
					assert.Equal(t, want, got, "row %d column %s: got[i][j]", i, names[j])
				}
			default:
				got, want := got[i][j], v
				assert.Equal(t, want, got, "row %d column %s: got[i][j]", i, names[j])
			}
		}
	}
}

func parquetValue(v pq.Value) any {
	if v.IsNull() {
		return nil
	}
	switch v.Kind() {
	case pq.Int64:
		return v.Int64()
	case pq.Double:
		return v.Double()
	case pq.Boolean:
		return v.Boolean()
	}
	return string(v.ByteArray())
}

// createKinds creates and fills the kinds table and the endpoint reading
// it.
func createKinds(t *testing.T, db *sql.DB, eng engine.Engine, h *harness) {
	t.Helper()
	ts := "TIMESTAMP NULL"
	if eng == engine.SQLite {
		ts = "TEXT"
	}
	_, err := db.Exec("CREATE TABLE kinds (id INTEGER, name VARCHAR(100), amount DOUBLE PRECISION, note VARCHAR(100), at " + ts + ")")
	require.NoError(t, err)
	for _, r := range kindsRows {
		args := append([]any(nil), r...)
		if tm, ok := args[4].(time.Time); ok && eng == engine.SQLite {
			args[4] = tm.Format("2006-01-02 15:04:05")
		}
		m := make([]string, 5)
		for i := range m {
			m[i] = string(eng.Marker(nil, i+1, ""))
		}
		_, err := db.Exec("INSERT INTO kinds VALUES ("+strings.Join(m, ", ")+")", args...)
		require.NoError(t, err)
	}
	mustStatus(t, http.StatusCreated, h.do("POST", "/api/projects/1/endpoints/", keyP1, map[string]any{
		"name": "kinds", "query": sqlQuery("SELECT id, name, amount, note, at, id * 2 AS twice FROM kinds ORDER BY id", nil)}))
}

// TestFormatsEqualJSON: on every engine that is up, a run answered in
// CSV, NDJSON and Parquet, computed or from the result cache, and the
// editor's query route in CSV and NDJSON, parse back (encoding/csv, a JSON
// decoder, parquet-go's reader) to the JSON answer's columns, types and
// values.
func TestFormatsEqualJSON(t *testing.T) {
	for _, tg := range formatTargets {
		t.Run(tg.name, func(t *testing.T) {
			db := tg.db(t)
			h := formatServer(t, db, tg.eng)
			createKinds(t, db, tg.eng, h)
			run := "/api/projects/1/endpoints/kinds/run"
			want := decodeAnswer(t, h.post(run, keyP1, `{"refresh": "force"}`))
			require.Len(t, want.Results, len(kindsRows))
			for _, refresh := range []string{"force", "cache"} {
				body := func(f string) string { return `{"refresh": "` + refresh + `", "format": "` + f + `"}` }
				checkCSV(t, h.post(run, keyP1, body("csv")), want)
				checkNDJSON(t, h.post(run, keyP1, body("ndjson")), want)
				checkParquet(t, h.post(run, keyP1, body("parquet")), want)
				checkCSV(t, h.post(run, keyP1, `{"refresh": "`+refresh+`"}`, "Accept", "text/csv"), want)
				checkNDJSON(t, h.post(run, keyP1, `{"refresh": "`+refresh+`"}`, "Accept", "application/x-ndjson"), want)
				checkParquet(t, h.post(run, keyP1, `{"refresh": "`+refresh+`"}`, "Accept", parquet.MediaType), want)
			}
			assert.True(t, (decodeAnswer(t, h.post(run, keyP1, `{}`)).IsCached), "the cache path was not taken: (decodeAnswer(t, h.post(run, keyP1, `{}`)).IsCached) is false")

			// A page: hasMore in its header.
			page := decodeAnswer(t, h.post(run, keyP1, `{"limit": 2}`))
			require.True(t, page.HasMore, "page.HasMore is false")
			checkCSV(t, h.post(run, keyP1, `{"limit": 2, "format": "csv"}`), page)
			checkNDJSON(t, h.post(run, keyP1, `{"limit": 2, "format": "ndjson"}`), page)

			// The editor's query route.
			q := `{"query": {"kind": "HogQLQuery", "query": "SELECT id, name, amount, note, at FROM kinds ORDER BY id"}`
			qwant := decodeAnswer(t, h.post("/api/projects/1/query/", keyP1, q+`}`))
			checkCSV(t, h.post("/api/projects/1/query/", keyP1, q+`, "format": "csv"}`), qwant)
			checkNDJSON(t, h.post("/api/projects/1/query/", keyP1, q+`}`, "Accept", "application/x-ndjson"), qwant)
			checkParquet(t, h.post("/api/projects/1/query/", keyP1, q+`, "format": "parquet"}`), qwant)

			// No rows: the header alone, an empty body, a file of no rows.
			empty := `{"query": {"kind": "HogQLQuery", "query": "SELECT id, name FROM kinds WHERE id < 0"}`
			ewant := decodeAnswer(t, h.post("/api/projects/1/query/", keyP1, empty+`}`))
			checkCSV(t, h.post("/api/projects/1/query/", keyP1, empty+`, "format": "csv"}`), ewant)
			checkNDJSON(t, h.post("/api/projects/1/query/", keyP1, empty+`, "format": "ndjson"}`), ewant)
			checkParquet(t, h.post("/api/projects/1/query/", keyP1, empty+`, "format": "parquet"}`), ewant)
		})
	}
}

// TestFormatCutAtCap: an answer that passes max_answer_bytes stops at a
// whole row and ends with an error a client sees: the trailer, and the
// format's last line (CSV: a record of one field more, which encoding/csv
// refuses; NDJSON: {"error": ...}); a Parquet file without its footer. It
// never ends as a well-formed short file.
func TestFormatCutAtCap(t *testing.T) {
	db := openEvents(t, 300)
	_, h, run := formatEndpoint(t, db, engine.SQLite, "ids", "SELECT uuid, event FROM events ORDER BY uuid", httpapi.WithMaxAnswerBytes(2000))

	r := h.post(run, keyP1, `{"limit": 300, "format": "csv"}`)
	require.Equal(t, http.StatusOK, r.status)
	a, b := len(r.body), 2000+400
	assert.True(t, (a <= b), "len(r.body) = %v, want <= %v", a, b)
	trailer := r.trailer.Get(httpapi.HeaderError)
	assert.Contains(t, trailer, "result_too_large: The answer is larger than max_answer_bytes (2000 bytes)")
	_, err := csv.NewReader(bytes.NewReader(r.body)).ReadAll()
	require.ErrorIs(t, err, csv.ErrFieldCount, "a cut CSV must not parse as a whole file")
	lines := strings.Split(strings.TrimSuffix(string(r.body), "\n"), "\n")
	last := lines[len(lines)-1]
	assert.True(t, strings.HasPrefix(last, httpapi.CSVErrorMarker+",\"result_too_large: "), "%v: condition is false", last)
	// Every line before it is a whole row.
	rec := csv.NewReader(strings.NewReader(strings.Join(lines[:len(lines)-1], "\n")))
	rows, err := rec.ReadAll()
	require.NoError(t, err)
	if a, b := len(rows), 10; !(a > b) {
		t.Errorf("len(rows) = %v, want > %v", a, b)
	}
	s, sub := last, fmt.Sprintf("after %d rows", len(rows)-1)
	assert.Contains(t, s, sub)

	r = h.post(run, keyP1, `{"limit": 300, "format": "ndjson"}`)
	require.Equal(t, http.StatusOK, r.status)
	assert.Contains(t, r.trailer.Get(httpapi.HeaderError), "result_too_large")
	lines = strings.Split(strings.TrimSuffix(string(r.body), "\n"), "\n")
	var end struct {
		Error struct{ Code, Detail string } `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &end))
	assert.Equal(t, "result_too_large", end.Error.Code)
	for _, l := range lines[:len(lines)-1] {
		var obj map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &obj), "%v", l)
		assert.Len(t, obj, 2)
	}

	r = h.post(run, keyP1, `{"limit": 300, "format": "parquet"}`)
	require.Equal(t, http.StatusOK, r.status)
	assert.Contains(t, r.trailer.Get(httpapi.HeaderError), "result_too_large")
	_, err = pq.OpenFile(bytes.NewReader(r.body), int64(len(r.body)))
	require.Error(t, err, "a cut Parquet file must not open: got no error, want one")

	// Under the bound, no error.
	r = h.post(run, keyP1, `{"limit": 5, "format": "csv"}`)
	v := r.trailer.Get(httpapi.HeaderError)
	assert.True(t, (v == ""), "r.trailer.Get(httpapi.HeaderError) = %v, want it empty", v)
	_, err = csv.NewReader(bytes.NewReader(r.body)).ReadAll()
	require.NoError(t, err)
}

// TestFormatCutByValue: a value no format can hold (an infinity, which JSON
// refuses with a 502) found after the first byte ends the answer with
// result_not_encodable, in the trailer and the last line.
func TestFormatCutByValue(t *testing.T) {
	db := openEvents(t, 0)
	_, h, run := formatEndpoint(t, db, engine.SQLite, "nan", "SELECT 1.5 AS x UNION ALL SELECT 9e999")
	j := h.post(run, keyP1, `{}`)
	got, want := j.status, http.StatusBadGateway
	require.Equal(t, want, got, "%s: j.status", j.body)
	r := h.post(run, keyP1, `{"format": "ndjson"}`)
	require.Equal(t, http.StatusOK, r.status)
	assert.Contains(t, r.trailer.Get(httpapi.HeaderError), "result_not_encodable")
	assert.Contains(t, string(r.body), `{"error":{"code":"result_not_encodable"`)
	r = h.post(run, keyP1, `{"format": "csv"}`)
	assert.Contains(t, r.trailer.Get(httpapi.HeaderError), "result_not_encodable")
	_, err := csv.NewReader(bytes.NewReader(r.body)).ReadAll()
	require.ErrorIs(t, err, csv.ErrFieldCount)
	assert.True(t, strings.HasPrefix(string(r.body), "x\n1.5\n"+httpapi.CSVErrorMarker), "%s: strings.HasPrefix(string(r.body), \"x\\n1.5\\n\"+httpapi.CSVErrorMarker) is false", r.body)
}

// TestFormatChoice: the body's format field and Accept choose the format;
// the field wins; an unknown or unregistered format, debug in another
// format and an insight in a format of rows are 400s naming what was
// wrong, before anything runs; an Accept naming nothing served answers
// JSON.
func TestFormatChoice(t *testing.T) {
	db := openEvents(t, 50)
	_, h, run := formatEndpoint(t, db, engine.SQLite, "n", "SELECT count(*) AS n FROM events")
	cases := []struct {
		body, accept, want string
	}{
		{`{}`, "", "application/json"},
		{`{}`, "text/csv", "text/csv"},
		{`{}`, "application/x-ndjson", httpapi.MediaTypeNDJSON},
		{`{}`, "text/html, text/csv;q=0.5", "text/csv"},
		{`{}`, "text/csv;q=0.4, application/x-ndjson;q=0.9", httpapi.MediaTypeNDJSON},
		{`{}`, "application/json, text/csv", "application/json"},
		{`{}`, "text/csv;q=0, */*;q=0.1", "application/json"},
		{`{}`, "text/html", "application/json"},
		{`{}`, "*/*", "application/json"},
		{`{"format": "csv"}`, "application/json", "text/csv"},
		{`{"format": "json"}`, "text/csv", "application/json"},
		{`{"format": "ndjson"}`, "", httpapi.MediaTypeNDJSON},
		{`{"format": "parquet"}`, "", parquet.MediaType},
		{``, "text/csv", "text/csv"},
	}
	for _, c := range cases {
		r := h.post(run, keyP1, c.body, "Accept", c.accept)
		got, want := r.status, http.StatusOK
		require.Equal(t, want, got, "%s %s: %s: r.status", c.body, c.accept, r.body)
		mt, _, _ := strings.Cut(r.header.Get("Content-Type"), ";")
		if got, want := mt, c.want; got != want {
			t.Errorf("%s Accept %q: mt = %q, want %q", c.body, c.accept, got, want)
		}
	}

	bad := []struct{ body, detail string }{
		{`{"format": "xml"}`, "Unknown format 'xml': expected one of json, csv, ndjson, parquet."},
		{`{"format": "CSV"}`, "Unknown format 'CSV': expected one of json, csv, ndjson, parquet."},
		{`{"format": 3}`, "Invalid type for 'format': expected string, got number."},
		{`{"format": "csv", "debug": true}`, "debug answers in JSON only: ask for format 'json' to see the executed SQL."},
	}
	for _, c := range bad {
		r := h.do("POST", run, keyP1, c.body)
		mustStatus(t, http.StatusBadRequest, r)
		got, want := r.detail(), c.detail
		assert.Equal(t, want, got, "r.detail()")
	}
	r := h.do("POST", "/api/projects/1/query/", keyP1, `{"format": "csv", "query": {"kind": "TrendsQuery", "series": [{"kind": "EventsNode", "event": "$pageview"}]}}`)
	mustStatus(t, http.StatusBadRequest, r)
	assert.Equal(t, "Format 'csv' answers rows, and an insight's results are series, not rows: ask for format 'json'.", r.detail())
	assert.Equal(t, "format", r.Body["attr"])

	// Without the Parquet format registered.
	plain := httptest.NewServer(httpapi.New(newService(t, newExecutor(db)), keyring(t), httpapi.WithLimiter(nil)))
	t.Cleanup(plain.Close)
	hp := &harness{t: t, server: plain}
	mustStatus(t, http.StatusCreated, hp.do("POST", "/api/projects/1/endpoints/", keyP1, map[string]any{
		"name": "n", "query": sqlQuery("SELECT 1 AS n", nil)}))
	r = hp.do("POST", run, keyP1, `{"format": "parquet"}`)
	mustStatus(t, http.StatusBadRequest, r)
	assert.Equal(t, "Format 'parquet' is not served here: the server's host did not register it (httpapi.WithFormat).", r.detail())
	pr := hp.post(run, keyP1, `{}`, "Accept", parquet.MediaType)
	assert.Equal(t, "application/json", pr.header.Get("Content-Type"))
}

// TestFormatsInOpenAPI: the served OpenAPI document of a SQL endpoint
// lists json, csv, ndjson and the registered parquet as formats, and their
// media types as answers.
func TestFormatsInOpenAPI(t *testing.T) {
	h := formatServer(t, openEvents(t, 0), engine.SQLite)
	mustStatus(t, http.StatusCreated, h.do("POST", "/api/projects/1/endpoints/", keyP1, map[string]any{
		"name": "n", "query": sqlQuery("SELECT 1 AS n", nil)}))
	r := h.do("GET", "/api/projects/1/endpoints/n/openapi.json", keyP1, nil)
	mustStatus(t, http.StatusOK, r)
	post := r.Body["paths"].(map[string]any)["/api/projects/1/endpoints/n/run"].(map[string]any)["post"].(map[string]any)
	props := post["requestBody"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)["properties"].(map[string]any)
	assert.Equal(t, []any{"json", "csv", "ndjson", "parquet"}, props["format"].(map[string]any)["enum"])
	content := post["responses"].(map[string]any)["200"].(map[string]any)["content"].(map[string]any)
	for _, mt := range []string{"application/json", "text/csv", "application/x-ndjson", parquet.MediaType} {
		_, ok := content[mt]
		assert.True(t, ok, "no key %v in %v", mt, content)
	}
}

func keyring(t *testing.T) *httpapi.Keyring {
	keys := httpapi.NewKeyring()
	require.NoError(t, keys.Add(keyP1, "1"))
	require.NoError(t, keys.Add(keyP2, "2"))
	return keys
}

// TestFormatInsightRun: an insight endpoint asked for rows is a 400
// naming the format, in JSON.
func TestFormatInsightRun(t *testing.T) {
	db := openEvents(t, 50)
	h := formatServer(t, db, engine.SQLite)
	mustStatus(t, http.StatusCreated, h.do("POST", "/api/projects/1/endpoints/", keyP1, map[string]any{
		"name": "trend", "query": map[string]any{"kind": "TrendsQuery", "series": []any{map[string]any{"kind": "EventsNode", "event": "$pageview"}}}}))
	for _, f := range []string{"csv", "ndjson", "parquet"} {
		r := h.do("POST", "/api/projects/1/endpoints/trend/run", keyP1, `{"format": "`+f+`"}`)
		mustStatus(t, http.StatusBadRequest, r)
		s, sub := r.detail(), "Format '"+f+"' answers rows"
		assert.Contains(t, s, sub)
	}
}

// TestFormatsAuth: every credential path answers the same with a format
// as in JSON: no key 401, another project's key 403, an embed token runs
// its endpoint with its fixed values (the same rows as JSON), may not
// change them (403), nor run another endpoint (403), nor the query route;
// failures are JSON whatever was asked.
func TestFormatsAuth(t *testing.T) {
	env, signer, _, _ := embedEnv(t)
	ctx := context.Background()
	tok, err := env.Service.MintEmbedToken(ctx, signer, env.Project, embedClaims("by_event", "purchase"), time.Hour)
	require.NoError(t, err)
	run := "/api/projects/1/endpoints/by_event/run"
	type c struct {
		bearer, path, body string
		status             int
	}
	cases := []c{
		{"", run, `{"variables": {"event": "purchase"}}`, 401},
		{"wrong", run, `{"variables": {"event": "purchase"}}`, 401},
		{tok, run, `{"variables": {"event": "signed_up"}}`, 403},
		{tok, "/api/projects/1/endpoints/other/run", `{"variables": {"event": "purchase"}}`, 403},
		{tok, "/api/projects/1/query/", `{"query": {"kind": "HogQLQuery", "query": "SELECT 1"}}`, 403},
		{tok, "/api/projects/2/endpoints/by_event/run", `{}`, 403},
		{tok, run, `{}`, 200},
		{tok, run, `{"variables": {"event": "purchase"}}`, 200},
		{env.Key, run, `{"variables": {"event": "purchase"}}`, 200},
	}
	for _, cs := range cases {
		jsonStatus, jsonBody, _ := send(t, env, "POST", cs.path, cs.bearer, cs.body)
		got, want := jsonStatus, cs.status
		require.Equal(t, want, got, "%s %s: jsonStatus", cs.path, cs.body)
		for _, f := range []string{"csv", "ndjson"} {
			body := strings.TrimSuffix(cs.body, "}")
			if body != "{" {
				body += ", "
			}
			body += `"format": "` + f + `"}`
			status, got, hdr := send(t, env, "POST", cs.path, cs.bearer, body)
			require.Equal(t, cs.status, status, "%s %s: status = %d, want %d: %s", cs.path, body, status, cs.status, got)
			if status != 200 {
				assert.Equal(t, "application/json", hdr.Get("Content-Type"))
				assert.JSONEq(t, jsonBody, got, "%s %s: error body = %s, want the JSON answer's %s", cs.path, body, got, jsonBody)
				continue
			}
			var a jsonAnswer
			dec := json.NewDecoder(strings.NewReader(jsonBody))
			dec.UseNumber()
			require.NoError(t, dec.Decode(&a))
			if f == "csv" {
				got, want := got, "n\n"+cellText(a.Results[0][0])+"\n"
				assert.Equal(t, want, got)
			} else {
				got, want := got, (`{"n":` + cellText(a.Results[0][0]) + "}\n")
				assert.Equal(t, want, got)
			}
		}
	}
}

// embedClaims is a token for endpoint with its event variable fixed.
func embedClaims(endpoint, event string) embed.Claims {
	return embed.Claims{Endpoints: []string{endpoint}, Fixed: map[string]any{"event": event}}
}

// TestParquetNotLinked: package httpapi does not import parquet-go, so
// that a host that does not register the Parquet format does not link it;
// its package endpoint/httpapi/parquet does.
func TestParquetNotLinked(t *testing.T) {
	deps := func(pkg string) []string {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		require.NoError(t, err, "go list -deps %s", pkg)
		return strings.Fields(string(out))
	}
	const lib = "github.com/parquet-go/parquet-go"
	for _, d := range deps(".") {
		assert.False(t, strings.HasPrefix(d, lib), "endpoint/httpapi imports %s", d)
	}
	found := false
	for _, d := range deps("./parquet") {
		found = found || d == lib
	}
	assert.True(t, found, "endpoint/httpapi/parquet does not import %s: the check above proves nothing", lib)
}

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
