package equivalence

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
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
	h, _ := handlers.LoadOrStore(svc, httpapi.New(svc, keys, httpapi.WithLimiter(nil), httpapi.WithMaxAnswerBytes(-1)))
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
	return way{"as " + format, func(ctx context.Context, svc *endpoint.Service, d *dialect, s *spec, name string, r run) answer {
		if s.kind != endpoint.KindSQL {
			return computed.run(ctx, svc, d, s, name, r)
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
)

// waysFor are the ways the i-th run of a spec runs in: the format ways
// only for the first run of each spec by default (each costs two HTTP
// runs), for every run with -tags long.
func waysFor(ways []way, i int) []way {
	if long || i == 0 {
		return ways
	}
	var out []way
	for _, w := range ways {
		if w.name != asCSV.name && w.name != asNDJSON.name {
			out = append(out, w)
		}
	}
	return out
}
