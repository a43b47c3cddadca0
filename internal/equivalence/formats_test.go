package equivalence

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	pq "github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/endpoint/httpapi/parquet"
)

// Answer formats (CSV, NDJSON) as ways a run happens: the run goes through
// the HTTP handler of the same Service, and its rows, parsed back, must be
// the rows the JSON answer of the same run gives; the answer compared
// with the database of project 1 alone is then the JSON one.

// formatKey is the API key of project 1 on the handlers of these ways.
const formatKey = "equivalence-key"

var handlers sync.Map // *endpoint.Service -> http.Handler

// handlerOf is the HTTP API of svc, one per Service.
func handlerOf(svc *endpoint.Service) http.Handler {
	if h, ok := handlers.Load(svc); ok {
		return h.(http.Handler)
	}
	keys := httpapi.NewKeyring()
	if err := keys.Add(formatKey, "1"); err != nil {
		panic(err)
	}
	h, _ := handlers.LoadOrStore(svc, httpapi.New(svc, keys, httpapi.WithLimiter(nil), httpapi.WithMaxAnswerBytes(-1),
		httpapi.WithFormat(parquet.Format{RowGroupRows: 7})))
	return h.(http.Handler)
}

// post sends body to path of project 1 on svc's handler.
func post(svc *endpoint.Service, path string, body any) *httptest.ResponseRecorder {
	b, err := json.Marshal(body)
	if err != nil {
		panic(err)
	}
	req := httptest.NewRequest("POST", "/api/projects/1/"+path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+formatKey)
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	handlerOf(svc).ServeHTTP(w, req)
	return w
}

// httpVerdict is the verdict of an HTTP answer as ruleVerdict words an
// error of the Go API: "200", or "status code: detail".
func httpVerdict(w *httptest.ResponseRecorder) string {
	if w.Code == http.StatusOK {
		if e := w.Result().Trailer.Get(httpapi.HeaderError); e != "" {
			return "cut: " + e
		}
		return "200"
	}
	var e struct{ Detail, Code string }
	if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil {
		return fmt.Sprintf("%d unreadable: %s", w.Code, short(w.Body.String()))
	}
	return fmt.Sprintf("%d %s: %s", w.Code, e.Code, e.Detail)
}

// jsonRows decodes a JSON answer's columns, types and rows.
func jsonRows(b []byte) (a jsonAnswer, err error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	err = dec.Decode(&a)
	return a, err
}

// jsonAnswer is what formatWay reads of a JSON answer.
type jsonAnswer struct {
	Columns      []string `json:"columns"`
	Types        []string `json:"types"`
	Results      [][]any  `json:"results"`
	HasMore      bool     `json:"hasMore"`
	Materialized bool     `json:"endpoint_materialized"`
}

// csvText is a JSON value as CSV writes it.
func csvText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		return string(x)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// formatRows parses a CSV or NDJSON answer into rows of text (CSV) or of
// JSON values (NDJSON).
func formatRows(format string, w *httptest.ResponseRecorder) (cols []string, rows [][]any, err error) {
	if err := json.Unmarshal([]byte(w.Header().Get(httpapi.HeaderColumns)), &cols); err != nil {
		return nil, nil, fmt.Errorf("columns header: %w", err)
	}
	if format == httpapi.FormatParquet {
		return parquetAnswer(w.Body.Bytes())
	}
	if format == httpapi.FormatCSV {
		recs, err := csv.NewReader(bytes.NewReader(w.Body.Bytes())).ReadAll()
		if err != nil {
			return nil, nil, err
		}
		for _, r := range recs[1:] {
			row := make([]any, len(r))
			for i, s := range r {
				row[i] = s
			}
			rows = append(rows, row)
		}
		return recs[0], rows, nil
	}
	dec := json.NewDecoder(bytes.NewReader(w.Body.Bytes()))
	dec.UseNumber()
	for dec.More() {
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			return nil, nil, err
		}
		row := make([]any, len(cols))
		for i, c := range cols {
			row[i] = obj[c]
		}
		rows = append(rows, row)
	}
	return cols, rows, nil
}

// formatWay is the way of a run answered in format: the rows the format
// gives must be the JSON answer's of the same request (both computed),
// and the answer is then that JSON answer. Insights answer series, which
// no format of rows holds: the way answers as JSON does for them.
func formatWay(format string) way {
	return formatWayWith("as "+format, format, false)
}

// formatWayWith is formatWay named wayName; with streamed, both runs go
// through the Service's twin without a result cache (uncachedTwin), where
// a run in CSV, NDJSON or Parquet is written as the engine reads its rows
// (Service.RunRows), inline or from the stored table: with the cache on,
// the answer is held whole to be cached.
func formatWayWith(wayName, format string, streamed bool) way {
	return way{wayName, func(ctx context.Context, svc *endpoint.Service, d *dialect, s *spec, name string, r run) answer {
		if s.kind != endpoint.KindSQL {
			return computed.run(ctx, svc, d, s, name, r)
		}
		if streamed {
			svc = twinOf(svc)
		}
		body := map[string]any{"variables": r.vars, "refresh": endpoint.RefreshForce}
		if r.limit > 0 {
			body["limit"] = r.limit
		}
		jw := post(svc, "endpoints/"+name+"/run", body)
		body["format"] = format
		fw := post(svc, "endpoints/"+name+"/run", body)
		if strings.Contains(fw.Body.String(), marker) {
			return answer{err: "LEAK: the " + format + " answer shows project 2's rows: " + short(fw.Body.String())}
		}
		if v, fv := httpVerdict(jw), httpVerdict(fw); v != "200" || fv != "200" {
			if v != fv {
				return answer{err: fmt.Sprintf("%s answers %q where JSON answers %q", format, fv, v)}
			}
			return answer{err: v}
		}
		ja, err := jsonRows(jw.Body.Bytes())
		cols, rows, hasMore := ja.Columns, ja.Results, ja.HasMore
		if err != nil {
			return answer{err: "JSON answer: " + err.Error()}
		}
		fcols, frows, err := formatRows(format, fw)
		if err != nil {
			return answer{err: format + " answer: " + err.Error()}
		}
		want := rows
		if format == httpapi.FormatParquet {
			if want, err = parquetWant(fw, rows); err != nil {
				return answer{err: format + " answer: " + err.Error()}
			}
		}
		if format == httpapi.FormatCSV {
			want = make([][]any, len(rows))
			for i, row := range rows {
				want[i] = make([]any, len(row))
				for j, v := range row {
					want[i][j] = csvText(v)
				}
			}
		}
		if !s.ordered {
			sortRows(want)
			sortRows(frows)
		}
		if len(want) == 0 && len(frows) == 0 {
			want, frows = nil, nil
		}
		if !reflect.DeepEqual(cols, fcols) || !reflect.DeepEqual(want, frows) {
			return answer{err: fmt.Sprintf("%s differs from JSON: columns %v rows %v, JSON %v %v", format, fcols, short(fmt.Sprint(frows)), cols, short(fmt.Sprint(want)))}
		}
		if fw.Header().Get(httpapi.HeaderHasMore) != fmt.Sprint(hasMore) {
			return answer{err: format + ": hasMore header differs from JSON"}
		}
		// The JSON answer's results as it wrote them, for their JSON kinds.
		var raw struct {
			Results json.RawMessage `json:"results"`
		}
		if err := json.Unmarshal(jw.Body.Bytes(), &raw); err != nil {
			return answer{err: "JSON answer: " + err.Error()}
		}
		return answerOf(s, &endpoint.RunResult{Columns: cols, Types: ja.Types, Results: raw.Results, HasMore: hasMore, EndpointMaterialized: ja.Materialized}, nil)
	}}
}

var (
	asCSV    = formatWay(httpapi.FormatCSV)
	asNDJSON = formatWay(httpapi.FormatNDJSON)
	// The streamed ways: the rows are written as the engine reads them
	// (Service.RunRows), the stored table's read included.
	streamedCSV     = formatWayWith("streamed csv", httpapi.FormatCSV, true)
	streamedNDJSON  = formatWayWith("streamed ndjson", httpapi.FormatNDJSON, true)
	streamedParquet = formatWayWith("streamed parquet", httpapi.FormatParquet, true)
)

var twins sync.Map // *endpoint.Service -> *endpoint.Service

// uncachedTwin makes the twin of svc, made with cfg: a Service of the same
// stores, executor and rules without a result cache, which reads the
// store at every run (so that it sees svc's saves and refreshes at once),
// for the streamed ways. A run streams only without a result cache, which
// keeps answers whole.
func uncachedTwin(t *testing.T, svc *endpoint.Service, cfg endpoint.Config) {
	t.Helper()
	cfg.ResultCache = nil
	cfg.RecheckInterval = -1
	twin, err := endpoint.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = twin.Close(context.Background()) })
	twins.Store(svc, twin)
}

// twinOf is svc's uncachedTwin (svc itself when it has none: no cache).
func twinOf(svc *endpoint.Service) *endpoint.Service {
	if tw, ok := twins.Load(svc); ok {
		return tw.(*endpoint.Service)
	}
	return svc
}

// parquetAnswer reads a Parquet answer: its column names, and its rows
// with each value as a pqValue.
func parquetAnswer(b []byte) (cols []string, rows [][]any, err error) {
	f, err := pq.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, nil, err
	}
	for _, c := range f.Schema().Fields() {
		cols = append(cols, c.Name())
	}
	rd := pq.NewReader(bytes.NewReader(b))
	buf := make([]pq.Row, 64)
	for {
		n, err := rd.ReadRows(buf)
		for _, r := range buf[:n] {
			row := make([]any, len(cols))
			for _, v := range r {
				switch {
				case v.IsNull():
					row[v.Column()] = nil
				case v.Kind() == pq.Int64:
					row[v.Column()] = pqValue{pq.Int64, strconv.FormatInt(v.Int64(), 10)}
				case v.Kind() == pq.Double:
					row[v.Column()] = pqValue{pq.Double, strconv.FormatFloat(v.Double(), 'g', -1, 64)}
				case v.Kind() == pq.Boolean:
					row[v.Column()] = pqValue{pq.Boolean, strconv.FormatBool(v.Boolean())}
				default:
					row[v.Column()] = pqValue{pq.ByteArray, string(v.ByteArray())}
				}
			}
			rows = append(rows, row)
		}
		if errors.Is(err, io.EOF) {
			return cols, rows, nil
		}
		if err != nil {
			return nil, nil, err
		}
	}
}

// pqValue is a Parquet value as parquetAnswer reads it: its kind and its
// text.
type pqValue struct {
	kind pq.Kind
	text string
}

// parquetWant is the JSON answer's rows as the Parquet answer fw must
// hold them, by the kind of each of its columns: an integer's text, a
// float's value, a boolean, or the JSON text of a string column's value.
func parquetWant(fw *httptest.ResponseRecorder, rows [][]any) ([][]any, error) {
	_, got, err := parquetAnswer(fw.Body.Bytes())
	if err != nil {
		return nil, err
	}
	kinds := map[int]pq.Kind{}
	for _, row := range got {
		for i, v := range row {
			if p, ok := v.(pqValue); ok {
				kinds[i] = p.kind
			}
		}
	}
	want := make([][]any, len(rows))
	for i, row := range rows {
		want[i] = make([]any, len(row))
		for j, v := range row {
			if v == nil {
				continue
			}
			switch k := kinds[j]; k {
			case pq.Int64:
				want[i][j] = pqValue{k, csvText(v)}
			case pq.Double:
				f, err := strconv.ParseFloat(csvText(v), 64)
				if err != nil {
					return nil, fmt.Errorf("a float column's value %v: %w", v, err)
				}
				want[i][j] = pqValue{k, strconv.FormatFloat(f, 'g', -1, 64)}
			case pq.Boolean:
				want[i][j] = pqValue{k, csvText(v)}
			default:
				want[i][j] = pqValue{pq.ByteArray, csvText(v)}
			}
		}
	}
	return want, nil
}

// waysFor are the ways the i-th run of spec s runs in. By default, so
// that every way is still compared on every engine: the ways that compute
// the query afresh outside the saved endpoint (the editor's query API,
// MCP's _run_query) only on the first run of each spec, and of the format
// ways (each two HTTP runs) only one, in turn by the spec's name, on its
// first run; together they took most of the matrix's time on MariaDB.
// With -tags long, every way for every run.
func waysFor(ways []way, s *spec, i int) []way {
	if long {
		return ways
	}
	h := fnv.New32a()
	h.Write([]byte(s.name))
	format := formatWays[h.Sum32()%uint32(len(formatWays))]
	var out []way
	for _, w := range ways {
		switch {
		case slices.Contains(formatWays, w.name):
			if i == 0 && w.name == format {
				out = append(out, w)
			}
		case slices.Contains(firstRunWays, w.name):
			if i == 0 {
				out = append(out, w)
			}
		default:
			out = append(out, w)
		}
	}
	return out
}

var (
	// formatWays are the ways of the answer's formats over HTTP, of which
	// waysFor takes one per spec by default.
	formatWays = []string{asCSV.name, asNDJSON.name, streamedCSV.name, streamedNDJSON.name, streamedParquet.name}
	// firstRunWays are the ways waysFor keeps to the first run of a spec
	// by default.
	firstRunWays = []string{editor.name, viaMCPQuery.name}
)
