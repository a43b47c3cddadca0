package httpapi_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/endpoint/sqlstore"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/require"
)

// API keys of the test harness.
const (
	keyP1    = "key-project-1"
	keyP2    = "key-project-2"
	keyAdmin = "key-admin"
	keyNone  = "key-no-project"
)

// demoEvents is the size of the harness's events table.
const demoEvents = 2000

// demoSeed is the seed of the harness's demo events.
const demoSeed = 7

// Variable ids used across tests.
const (
	idFrom    = "11111111-1111-4111-8111-111111111111"
	idTo      = "22222222-2222-4222-8222-222222222222"
	idEvent   = "33333333-3333-4333-8333-333333333333"
	idCountry = "44444444-4444-4444-8444-444444444444"
)

// openEvents returns an in-memory SQLite database with n demo events.
func openEvents(tb testing.TB, n int) *sql.DB {
	tb.Helper()
	db := testdb.SQLite(tb)
	require.NoError(tb, demo.Load(context.Background(), db, n, demoSeed))
	return db
}

// harness is the real handler over a real Service, SQL stores and the SQL
// executor, all on SQLite, behind a Keyring with one key per project.
type harness struct {
	t       testing.TB
	handler http.Handler
	server  *httptest.Server
	events  *sql.DB
	logs    *bytes.Buffer
}

// newHarness serves the API with exec as the executor, or the SQL executor
// over the events database when exec is nil.
func newHarness(t testing.TB, exec func(events *sql.DB) driver.Executor) *harness {
	t.Helper()
	events := openEvents(t, demoEvents)
	var ex driver.Executor = newExecutor(events)
	if exec != nil {
		ex = exec(events)
	}
	svc := newService(t, ex)
	keys := httpapi.NewKeyring()
	require.NoError(t, keys.Add(keyP1, "1"))
	require.NoError(t, keys.Add(keyP2, "2"))
	require.NoError(t, keys.AddAllProjects(keyAdmin))
	require.NoError(t, keys.Add(keyNone))
	logs := &bytes.Buffer{}
	// Run limits are tested in limits_test.go; here they are off, so that
	// the fuzzer's thousands of runs reach the run code, not a 429.
	h := httpapi.New(svc, keys, httpapi.WithLogger(slog.New(slog.NewTextHandler(logs, nil))), httpapi.WithLimiter(nil))
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &harness{t: t, handler: h, server: srv, events: events, logs: logs}
}

// newService returns a Service over SQL stores in their own in-memory
// SQLite database and ex.
func newService(tb testing.TB, ex driver.Executor) *endpoint.Service {
	tb.Helper()
	eps, vars := newStores(tb)
	svc, err := endpoint.New(endpoint.Config{Endpoints: eps, Variables: vars, Executor: ex})
	require.NoError(tb, err)
	return svc
}

// response is a decoded answer.
type response struct {
	Status int
	Header http.Header
	Raw    []byte
	// Body is the JSON body decoded with UseNumber; nil when empty.
	Body map[string]any
}

// detail returns the error detail of an error answer.
func (r response) detail() string { s, _ := r.Body["detail"].(string); return s }

// do sends a request with key as bearer (none when ""). A string body is
// sent as is, anything else as its JSON; a non-nil body gets Content-Type
// application/json.
func (h *harness) do(method, path, key string, body any) response {
	h.t.Helper()
	var rd io.Reader
	if body != nil {
		switch b := body.(type) {
		case string:
			rd = strings.NewReader(b)
		case []byte:
			rd = bytes.NewReader(b)
		default:
			j, err := json.Marshal(b)
			require.NoError(h.t, err)
			rd = bytes.NewReader(j)
		}
	}
	req, err := http.NewRequest(method, h.server.URL+path, rd)
	require.NoError(h.t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	return h.send(req)
}

func (h *harness) send(req *http.Request) response {
	h.t.Helper()
	res, err := h.server.Client().Do(req)
	require.NoError(h.t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(h.t, err)
	return decodeResponse(h.t, res.StatusCode, res.Header, raw)
}

func decodeResponse(t testing.TB, status int, header http.Header, raw []byte) response {
	t.Helper()
	r := response{Status: status, Header: header, Raw: raw}
	if len(bytes.TrimSpace(raw)) > 0 {
		require.Equal(t, "application/json", header.Get("Content-Type"), "body %s: header.Get(\"Content-Type\")", raw)
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		require.NoError(t, dec.Decode(&r.Body), "body %s", raw)
	}
	return r
}

// mustStatus fails the test unless r has status want.
func mustStatus(t testing.TB, want int, r response) {
	t.Helper()
	if got, want := r.Status, want; got != want {
		t.Fatalf("body: %s: r.Status = %v, want %v", r.Raw, got, want)
	}
}

// dateVar is the JSON of a Date variable.
func dateVar(id, name string) map[string]any {
	return map[string]any{"id": id, "name": name, "type": "Date"}
}

// sqlQuery is the JSON of a HogQLQuery using the variables of ids, each
// known by codeNames[i].
func sqlQuery(sqlText string, refs map[string]string) map[string]any {
	vars := map[string]any{}
	for id, code := range refs {
		vars[id] = map[string]any{"variableId": id, "code_name": code}
	}
	return map[string]any{"kind": "HogQLQuery", "query": sqlText, "variables": vars}
}

// rangeSQL counts and lists the events of a time range.
const rangeSQL = "SELECT uuid FROM events WHERE timestamp >= {variables.from} AND timestamp < {variables.to} ORDER BY uuid"

// setupRange creates the variables from and to and the endpoint "in_range"
// in project with key.
func (h *harness) setupRange(project, key string) {
	h.t.Helper()
	base := "/api/projects/" + project
	mustStatus(h.t, http.StatusCreated, h.do("POST", base+"/insight_variables/", key, dateVar(idFrom, "From")))
	mustStatus(h.t, http.StatusCreated, h.do("POST", base+"/insight_variables/", key, dateVar(idTo, "To")))
	mustStatus(h.t, http.StatusCreated, h.do("POST", base+"/endpoints/", key, map[string]any{
		"name":  "in_range",
		"query": sqlQuery(rangeSQL, map[string]string{idFrom: "from", idTo: "to"}),
	}))
}

// newStores returns the SQL stores over a fresh in-memory SQLite database,
// separate from the events so that an endpoint's query cannot reach them.
func newStores(tb testing.TB) (driver.Store, variable.Store) {
	tb.Helper()
	db := testdb.SQLite(tb)
	st, err := sqlstore.New(db, engine.SQLite)
	require.NoError(tb, err)
	require.NoError(tb, st.Migrate(context.Background()))
	return st.Endpoints(), st.Variables()
}

// newExecutor returns the SQL executor over the events database.
func newExecutor(db *sql.DB) driver.Executor { return sqlexec.New(db, engine.SQLite) }

// forEachSlash runs f on a fresh harness twice: with slash "/" ending the
// routes it calls and with slash "", as both forms are served alike.
func forEachSlash(t *testing.T, f func(t *testing.T, h *harness, slash string)) {
	for _, slash := range []string{"/", ""} {
		t.Run("slash="+slash, func(t *testing.T) { f(t, newHarness(t, nil), slash) })
	}
}
