package httpapi_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/internal/heldexec"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	pq "github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// kindsEndpoint runs setup on db, then formatEndpoint.
func kindsEndpoint(t *testing.T, db *sql.DB, eng engine.Engine, setup []string, name, query string) (*endpoint.Service, *harness, string) {
	t.Helper()
	for _, q := range setup {
		_, err := db.Exec(q)
		require.NoError(t, err, q)
	}
	return formatEndpoint(t, db, eng, name, query)
}

// numberKinds is, per column, the JSON kinds of a JSON answer's numbers:
// "i" for an integer's text (256), "f" for a float's (256.0, 2.5e-07), one
// letter per kind met, "" for a column of no number.
func numberKinds(rows [][]any) []string {
	if len(rows) == 0 {
		return nil
	}
	out := make([]string, len(rows[0]))
	for _, row := range rows {
		for i, v := range row {
			n, ok := v.(json.Number)
			if !ok {
				continue
			}
			k := "i"
			if strings.ContainsAny(string(n), ".eE") {
				k = "f"
			}
			if !strings.Contains(out[i], k) {
				out[i] += k
			}
		}
	}
	return out
}

// ndjsonKinds is numberKinds of an NDJSON answer's lines, in the order of
// columns.
func ndjsonKinds(t *testing.T, r raw, columns []string) []string {
	t.Helper()
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	var rows [][]any
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.UseNumber()
	for dec.More() {
		var obj map[string]any
		require.NoError(t, dec.Decode(&obj))
		row := make([]any, len(columns))
		for i, c := range columns {
			row[i] = obj[c]
		}
		rows = append(rows, row)
	}
	return numberKinds(rows)
}

// parquetKinds are the physical types of a Parquet answer's columns.
func parquetKinds(t *testing.T, r raw) []string {
	t.Helper()
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	f, err := pq.OpenFile(bytes.NewReader(r.body), int64(len(r.body)))
	require.NoError(t, err)
	var out []string
	for _, c := range f.Schema().Fields() {
		out = append(out, c.Type().Kind().String())
	}
	return out
}

// TestAnswerKindsPostgresMaterialized: on PostgreSQL, sum(length(...)) is
// an integer column whose re-aggregation in the stored table is NUMERIC;
// its JSON values are integers inline and materialized, in JSON and
// NDJSON, computed and cached, and Parquet keeps it INT64; the average,
// a float column, writes every value as a float (256.0 beside 256.5).
func TestAnswerKindsPostgresMaterialized(t *testing.T) {
	svc, h, run := kindsEndpoint(t, testdb.Postgres(t), engine.PostgreSQL, []string{
		"CREATE TABLE kt (grp text, distinct_id text, amount double precision)",
		"INSERT INTO kt VALUES ('a', 'user-1', 256), ('a', 'user-22', 256), ('b', 'user-333', 256), ('b', 'u', 257)",
	}, "lens", "SELECT grp, sum(length(distinct_id)) AS total, avg(amount) AS mean FROM kt GROUP BY grp ORDER BY grp")
	want := []string{"", "i", "f"}
	check := func(stage string, materialized bool) {
		t.Helper()
		for _, refresh := range []string{"force", "cache"} {
			a := decodeAnswer(t, h.post(run, keyP1, `{"refresh": "`+refresh+`"}`))
			require.Len(t, a.Results, 2, "%s %s", stage, refresh)
			assert.Equal(t, want, numberKinds(a.Results), "%s %s: JSON %v", stage, refresh, a.Results)
			assert.Equal(t, want, ndjsonKinds(t, h.post(run, keyP1, `{"refresh": "`+refresh+`", "format": "ndjson"}`), a.Columns), "%s %s: NDJSON", stage, refresh)
			assert.Equal(t, []string{"BYTE_ARRAY", "INT64", "DOUBLE"}, parquetKinds(t, h.post(run, keyP1, `{"refresh": "`+refresh+`", "format": "parquet"}`)), "%s %s: Parquet", stage, refresh)
		}
		var got struct {
			Materialized bool `json:"endpoint_materialized"`
		}
		require.NoError(t, json.Unmarshal(h.post(run, keyP1, `{"refresh": "force"}`).body, &got))
		assert.Equal(t, materialized, got.Materialized, stage)
	}
	check("inline", false)
	yes := true
	ctx := context.Background()
	_, err := svc.Update(ctx, "1", "lens", endpoint.UpdateRequest{IsMaterialized: &yes})
	require.NoError(t, err)
	require.NoError(t, svc.Materialize(ctx, "1", "lens"))
	check("materialized", true)
}

// TestFloatColumnOneJSONKind: on SQLite, a REAL average whose value is
// integral in one row (256) and not in another (256.5) writes both as
// floats (256.0), in the JSON answer and NDJSON, computed and cached, and
// Parquet types it DOUBLE.
func TestFloatColumnOneJSONKind(t *testing.T) {
	_, h, run := kindsEndpoint(t, openEvents(t, 0), engine.SQLite, []string{
		"CREATE TABLE kt (grp TEXT, amount REAL)",
		"INSERT INTO kt VALUES ('a', 256), ('a', 256), ('b', 256), ('b', 257)",
	}, "means", "SELECT grp, avg(amount) AS mean, count(*) AS n FROM kt GROUP BY grp ORDER BY grp")
	want := []string{"", "f", "i"}
	for _, refresh := range []string{"force", "cache"} {
		r := h.post(run, keyP1, `{"refresh": "`+refresh+`"}`)
		a := decodeAnswer(t, r)
		require.Len(t, a.Results, 2)
		assert.Equal(t, want, numberKinds(a.Results), "%s: JSON %s", refresh, r.body)
		assert.Contains(t, string(r.body), `[["a",256.0,2],["b",256.5,2]]`, refresh)
		assert.Equal(t, want, ndjsonKinds(t, h.post(run, keyP1, `{"refresh": "`+refresh+`", "format": "ndjson"}`), a.Columns), "%s: NDJSON", refresh)
		assert.Equal(t, []string{"BYTE_ARRAY", "DOUBLE", "INT64"}, parquetKinds(t, h.post(run, keyP1, `{"refresh": "`+refresh+`", "format": "parquet"}`)), "%s: Parquet", refresh)
	}
}

// heldRequests holds the end of every run made over HTTP (one with a
// request id) until release is closed: the HTTP API writes its answer
// after that.
type heldRequests struct{ release chan struct{} }

func (o heldRequests) ObserveRun(ctx context.Context, _ endpoint.RunEvent) {
	if endpoint.RequestID(ctx) != "" {
		<-o.release
	}
}

func (heldRequests) ObserveRefresh(context.Context, endpoint.RefreshEvent) {}

// TestHTTPAnswerIsNotAHostsAnswer: a host that runs an endpoint through
// the Go API and writes over the answer it got changes nothing of the
// answer an HTTP client gets from the same flight, whichever of the two
// runs computed it.
func TestHTTPAnswerIsNotAHostsAnswer(t *testing.T) {
	for _, hostFirst := range []bool{true, false} {
		name := map[bool]string{true: "host computes", false: "client computes"}[hostFirst]
		t.Run(name, func(t *testing.T) {
			for attempt := 0; ; attempt++ {
				joined, body, want := hostAndClient(t, hostFirst)
				if !joined && attempt < 5 {
					continue // the second run came after the first ended; again
				}
				require.True(t, joined, "in 6 attempts the second run never joined the first's flight")
				cols, rows, _ := strings.Cut(want, "\x00")
				if !strings.Contains(body, cols) || !strings.Contains(body, rows) || strings.Contains(body, "vandal") || strings.Contains(body, `"last_refresh":"1970-`) {
					t.Fatalf("the client got %s, want %s and %s", body, cols, rows)
				}
				return
			}
		})
	}
}

// hostAndClient runs one endpoint at once from a host (Go) and a client
// (HTTP), the first of them holding the query until the second has had
// time to join its flight; the host writes over its answer before the
// client's is written. It returns whether the second run joined, the
// client's body and the results it should hold.
func hostAndClient(t *testing.T, hostFirst bool) (joined bool, body, want string) {
	t.Helper()
	events := openEvents(t, demoEvents)
	x := heldexec.New(newExecutor(events), 4)
	obs := heldRequests{release: make(chan struct{})}
	eps, vars := newStores(t)
	svc, err := endpoint.New(endpoint.Config{Endpoints: eps, Variables: vars, Executor: x, Observer: obs})
	require.NoError(t, err)
	ctx := context.Background()
	q := &endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT event, count(*) AS n FROM events GROUP BY event ORDER BY event"}
	if _, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "counts", Query: q}); err != nil {
		t.Fatal(err)
	}
	first, err := svc.Run(ctx, "1", "counts", endpoint.RunRequest{})
	require.NoError(t, err)
	want = resultsOf(t, first)

	keys := httpapi.NewKeyring()
	require.NoError(t, keys.Add(keyP1, "1"))
	srv := httptest.NewServer(httpapi.New(svc, keys, httpapi.WithLimiter(nil)))
	defer srv.Close()

	x.Hold()
	host := make(chan *endpoint.RunResult, 1)
	client := make(chan string, 1)
	runHost := func() {
		res, err := svc.Run(ctx, "1", "counts", endpoint.RunRequest{})
		assert.NoError(t, err)
		host <- res
	}
	runClient := func() {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/projects/1/endpoints/counts/run", strings.NewReader(`{}`))
		req.Header.Set("Authorization", "Bearer "+keyP1)
		req.Header.Set("Content-Type", "application/json")
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Error(err)
			client <- ""
			return
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		client <- string(b)
	}
	if hostFirst {
		go runHost()
		<-x.Started
		go runClient()
	} else {
		go runClient()
		<-x.Started
		go runHost()
	}
	time.Sleep(100 * time.Millisecond) // for the second run to join
	x.Release()
	res := <-host
	if res != nil {
		// The host writes over its answer while the client's is not yet
		// written.
		if rows, ok := res.Results.([][]any); ok {
			for _, row := range rows {
				for j := range row {
					row[j] = "vandal"
				}
			}
		}
		for i := range res.Columns {
			res.Columns[i] = "vandal"
		}
		if res.LastRefresh != nil {
			*res.LastRefresh = time.Unix(1, 0)
		}
	}
	close(obs.release)
	body = <-client
	hostJoined := res != nil && res.IsCached
	clientJoined := strings.Contains(body, `"is_cached":true`)
	return hostJoined != clientJoined, body, want
}

// resultsOf is the JSON of an answer's results and columns as the HTTP
// API writes them.
func resultsOf(t *testing.T, res *endpoint.RunResult) string {
	t.Helper()
	cols, err := json.Marshal(res.Columns)
	require.NoError(t, err)
	rows, err := json.Marshal(res.Results)
	require.NoError(t, err)
	return `"columns":` + string(cols) + "\x00" + `"results":` + string(rows)
}
