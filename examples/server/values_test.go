package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/variable"
)

// valueEngines are the -driver flags of the engines TestValuesEveryEngineHolds
// and TestNumbersEveryEngineHolds run on; each skips when its server is
// not configured. -tags chdb adds TestValuesChDBHolds and
// TestNumbersChDBHolds (values_chdb_test.go), the same on chDB.
var valueEngines = map[string]func(t *testing.T) []string{
	"sqlite":   func(t *testing.T) []string { return []string{"-db", filepath.Join(t.TempDir(), "events.db")} },
	"postgres": func(t *testing.T) []string { return []string{"-driver", "postgres", "-dsn", testdb.PostgresDSN(t)} },
	"mysql":    func(t *testing.T) []string { return []string{"-driver", "mysql", "-dsn", testdb.MySQLDSN(t)} },
}

// saveWithVariable creates, with key "k", the variable (its JSON) and
// the endpoint (create) in the project at base, each answered 201.
func saveWithVariable(t *testing.T, base, variable, create string) {
	t.Helper()
	status, body := call(t, "POST", base+"/insight_variables/", "k", variable)
	require.Equal(t, 201, status, "creating the variable: %v", body)
	status, body = call(t, "POST", base+"/endpoints/", "k", create)
	require.Equal(t, 201, status, "creating the endpoint: %v", body)
}

// TestValuesEveryEngineHolds: a value some engine cannot hold as text (a
// NUL byte, which PostgreSQL's text refuses; invalid UTF-8, which
// PostgreSQL and MySQL check) answers the same 400 naming the variable on
// every engine, over HTTP and through the Go API, where PostgreSQL used to
// answer 502 and the others to match nothing. A variable whose code_name
// takes the library's reserved prefix is refused at creation, naming it.
func TestValuesEveryEngineHolds(t *testing.T) {
	for name, args := range valueEngines {
		t.Run(name, func(t *testing.T) { valuesHeld(t, name, args) })
	}
}

// valuesHeld is TestValuesEveryEngineHolds on the engine name, which the
// flags args gives start.
func valuesHeld(t *testing.T, name string, args func(t *testing.T) []string) {
	const (
		eventID = "6f1c8a52-7d0e-4b9a-9c31-2e5f7a8b9c21"
		create  = `{"name": "by_event", "query": {"kind": "HogQLQuery",
			"query": "SELECT count(*) AS n FROM events WHERE event = {variables.event_name}",
			"variables": {"` + eventID + `": {"variableId": "` + eventID + `", "code_name": "event_name"}}}}`
	)
	flags := append(args(t), "-api-key", "k", "-demo-events", "200")
	s := start(t, flags, nil)
	base := s.url() + "/api/projects/1"
	saveWithVariable(t, base, `{"id": "`+eventID+`", "name": "Event name", "type": "String"}`, create)
	status, body := call(t, "POST", base+"/endpoints/by_event/run", "k", `{"variables": {"event_name": "$pageview"}}`)
	if got, want := status, 200; got != want {
		t.Fatalf("%v: status = %v, want %v", body, got, want)
	}
	assert.NotContains(t, body, `"results":[[0]]`, "the demo events have page views")
	for _, v := range []string{`"$pageview\u0000"`, `"\u0000"`, `"a\u0000b"`} {
		status, body = call(t, "POST", base+"/endpoints/by_event/run", "k", `{"variables": {"event_name": `+v+`}}`)
		detail := invalidValue(t, v, status, body)
		assert.Contains(t, detail, "event_name", "%v", v)
		assert.Contains(t, detail, "NUL", "%v", v)
	}
	for _, code := range []string{"__endpointkit_tenant", "__ENDPOINTKIT_x"} {
		status, body = call(t, "POST", base+"/insight_variables/", "k", `{"name": "Tenant", "code_name": "`+code+`", "type": "String"}`)
		got, want := status, 400
		assert.Equal(t, want, got, "%s: %s: status", code, body)
		assert.Contains(t, body, code)
		assert.Contains(t, body, "reserved")
	}
	require.NoError(t, s.stop())

	// The Go API, on the same database: invalid UTF-8 too.
	cfg, err := parseFlags(flags, func(string) string { return "" }, io.Discard)
	require.NoError(t, err)
	b, err := openBackend(cfg)
	require.NoError(t, err)
	defer b.close()
	ctx := context.Background()
	svc, err := newService(ctx, cfg, b, prometheus.NewRegistry(), slog.New(slog.DiscardHandler), io.Discard)
	require.NoError(t, err)
	for _, v := range []string{"$pageview\x00", "$page\xffview"} {
		_, err := svc.Run(ctx, "1", "by_event", endpoint.RunRequest{Variables: map[string]any{"event_name": v}})
		var e *endpoint.Error
		require.ErrorAs(t, err, &e, "%q", v)
		got, want := e.Status, 400
		assert.Equal(t, want, got, "%q: %v: e.Status", v, err)
		assert.Contains(t, e.Detail, "event_name")
		assert.ErrorIs(t, err, variable.ErrInvalidValue)
	}
	_, err = svc.CreateVariable(ctx, "1", variable.Variable{Name: "Tenant", CodeName: "__endpointkit_tenant", Type: variable.String})
	var de *variable.DefinitionError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, "code_name", de.Field)
}

// invalidValue checks that the run with the value v answered status and
// body 400 invalid_variable_value, and returns the answer's detail.
func invalidValue(t *testing.T, v string, status int, body string) string {
	t.Helper()
	assert.Equal(t, 400, status, "%s: %s: status", v, body)
	var e struct{ Detail, Code string }
	require.NoError(t, json.Unmarshal([]byte(body), &e), "%v", body)
	assert.Equal(t, endpoint.CodeInvalidVariableValue, e.Code, "%v: the code", v)
	return e.Detail
}
