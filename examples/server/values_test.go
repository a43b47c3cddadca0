package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/variable"
)

// valueEngines are the -driver flags of the engines TestValuesEveryEngineHolds
// runs on; each skips when its server is not configured. chdb adds itself
// when built with -tags chdb.
var valueEngines = map[string]func(t *testing.T) []string{
	"sqlite":   func(t *testing.T) []string { return []string{"-db", filepath.Join(t.TempDir(), "events.db")} },
	"postgres": func(t *testing.T) []string { return []string{"-driver", "postgres", "-dsn", testdb.PostgresDSN(t)} },
	"mysql":    func(t *testing.T) []string { return []string{"-driver", "mysql", "-dsn", testdb.MySQLDSN(t)} },
}

// TestValuesEveryEngineHolds: a value some engine cannot hold as text (a
// NUL byte, which PostgreSQL's text refuses; invalid UTF-8, which
// PostgreSQL and MySQL check) answers the same 400 naming the variable on
// every engine, over HTTP and through the Go API, where PostgreSQL used to
// answer 502 and the others to match nothing. A variable whose code_name
// takes the library's reserved prefix is refused at creation, naming it.
func TestValuesEveryEngineHolds(t *testing.T) {
	const (
		eventID = "6f1c8a52-7d0e-4b9a-9c31-2e5f7a8b9c21"
		create  = `{"name": "by_event", "query": {"kind": "HogQLQuery",
			"query": "SELECT count(*) AS n FROM events WHERE event = {variables.event_name}",
			"variables": {"` + eventID + `": {"variableId": "` + eventID + `", "code_name": "event_name"}}}}`
	)
	for name, args := range valueEngines {
		t.Run(name, func(t *testing.T) {
			flags := append(args(t), "-api-key", "k", "-demo-events", "200")
			s := start(t, flags, nil)
			base := regexp.MustCompile(`server on (http://\S+)`).FindStringSubmatch(s.out.String())[1] + "/api/projects/1"
			status, body := call(t, "POST", base+"/insight_variables/", "k", `{"id": "`+eventID+`", "name": "Event name", "type": "String"}`)
			if got, want := status, 201; got != want {
				t.Fatalf("%v: status = %v, want %v", body, got, want)
			}
			status, body = call(t, "POST", base+"/endpoints/", "k", create)
			if got, want := status, 201; got != want {
				t.Fatalf("%v: status = %v, want %v", body, got, want)
			}

			status, body = call(t, "POST", base+"/endpoints/by_event/run", "k", `{"variables": {"event_name": "$pageview"}}`)
			if got, want := status, 200; got != want {
				t.Fatalf("%v: status = %v, want %v", body, got, want)
			}
			if s, sub := body, `"results":[[0]]`; strings.Contains(s, sub) {
				t.Errorf("the demo events have page views: %q contains %q", s, sub)
			}
			for _, v := range []string{`"$pageview\u0000"`, `"\u0000"`, `"a\u0000b"`} {
				status, body = call(t, "POST", base+"/endpoints/by_event/run", "k", `{"variables": {"event_name": `+v+`}}`)
				if got, want := status, 400; got != want {
					t.Errorf("%s: %s: status = %v, want %v", v, body, got, want)
				}
				var e struct{ Detail, Code string }
				if err := json.Unmarshal([]byte(body), &e); err != nil {
					t.Fatalf("%v: unexpected error: %v", body, err)
				}
				if got, want := e.Code, endpoint.CodeInvalidVariableValue; got != want {
					t.Errorf("%v: e.Code = %q, want %q", v, got, want)
				}
				if s, sub := e.Detail, "event_name"; !strings.Contains(s, sub) {
					t.Errorf("%v: %q does not contain %q", v, s, sub)
				}
				if s, sub := e.Detail, "NUL"; !strings.Contains(s, sub) {
					t.Errorf("%v: %q does not contain %q", v, s, sub)
				}
			}
			for _, code := range []string{"__endpointkit_tenant", "__ENDPOINTKIT_x"} {
				status, body = call(t, "POST", base+"/insight_variables/", "k", `{"name": "Tenant", "code_name": "`+code+`", "type": "String"}`)
				if got, want := status, 400; got != want {
					t.Errorf("%s: %s: status = %v, want %v", code, body, got, want)
				}
				if s, sub := body, code; !strings.Contains(s, sub) {
					t.Errorf("%q does not contain %q", s, sub)
				}
				if s, sub := body, "reserved"; !strings.Contains(s, sub) {
					t.Errorf("%q does not contain %q", s, sub)
				}
			}
			if err := s.stop(); err != nil {
				t.Fatalf("unexpected error: %v", err)
			}

			// The Go API, on the same database: invalid UTF-8 too.
			cfg, err := parseFlags(flags, func(string) string { return "" }, io.Discard)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			b, err := openBackend(cfg)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			defer b.close()
			ctx := context.Background()
			svc, err := newService(ctx, cfg, b, prometheus.NewRegistry(), slog.New(slog.DiscardHandler), io.Discard)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			for _, v := range []string{"$pageview\x00", "$page\xffview"} {
				_, err := svc.Run(ctx, "1", "by_event", endpoint.RunRequest{Variables: map[string]any{"event_name": v}})
				var e *endpoint.Error
				if !errors.As(err, &e) {
					t.Fatalf("%q: %v: errors.As(err, &e) is false", v, err)
				}
				if got, want := e.Status, 400; got != want {
					t.Errorf("%q: %v: e.Status = %v, want %v", v, err, got, want)
				}
				if s, sub := e.Detail, "event_name"; !strings.Contains(s, sub) {
					t.Errorf("%q does not contain %q", s, sub)
				}
				if err := err; !errors.Is(err, variable.ErrInvalidValue) {
					t.Errorf("error %v is not %v", err, variable.ErrInvalidValue)
				}
			}
			_, err = svc.CreateVariable(ctx, "1", variable.Variable{Name: "Tenant", CodeName: "__endpointkit_tenant", Type: variable.String})
			var de *variable.DefinitionError
			if err := err; !errors.As(err, &de) {
				t.Fatalf("error %v is not a %T", err, &de)
			}
			if got, want := de.Field, "code_name"; got != want {
				t.Errorf("de.Field = %q, want %q", got, want)
			}
		})
	}
}
