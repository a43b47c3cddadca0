package main

import (
	"reflect"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/internal/testdb"
)

// TestDrivers runs the printed session on PostgreSQL and MariaDB (data and
// store in the -dsn database): the same statuses, and the same rows as on
// SQLite.
func TestDrivers(t *testing.T) {
	const n = 1500
	for _, tc := range []struct {
		driver string
		dsn    func(testing.TB) string
	}{{"postgres", testdb.PostgresDSN}, {"mysql", testdb.MySQLDSN}} {
		t.Run(tc.driver, func(t *testing.T) {
			dsn := tc.dsn(t)
			s := start(t, []string{"-driver", tc.driver, "-dsn", dsn, "-api-key", "k", "-demo-events", "1500"}, nil)
			answers := runSession(t, s.session(t), nil)
			if got, want := statuses(answers), sessionStatuses; !reflect.DeepEqual(got, want) {
				t.Fatalf("%v: statuses(answers) = %+v, want %+v", answers, got, want)
			}
			if got, want := answers[4].body["results"], wantDaily(n); !reflect.DeepEqual(got, want) {
				t.Errorf("answers[4].body[\"results\"] = %+v, want %+v", got, want)
			}
			if err := s.stop(); err != nil {
				t.Fatalf("unexpected error: %v", err)
			}

			// A restart on the same database keeps everything.
			again := start(t, []string{"-driver", tc.driver, "-dsn", dsn, "-api-key", "k", "-demo-events", "1500"}, nil)
			if s, sub := again.out.String(), "1500 already in the database"; !strings.Contains(s, sub) {
				t.Errorf("%q does not contain %q", s, sub)
			}
		})
	}
}

func TestDriverFlags(t *testing.T) {
	for _, bad := range [][]string{{"-driver", "postgres"}, {"-driver", "oracle", "-dsn", "x"}} {
		_, err := parseFlagsAndBackend(bad)
		if err == nil {
			t.Errorf("%v: got no error, want one", bad)
		}
	}
}

// parseFlagsAndBackend parses args and opens their backend.
func parseFlagsAndBackend(args []string) (*backend, error) {
	cfg, err := parseFlags(args, func(string) string { return "" }, nilWriter{})
	if err != nil {
		return nil, err
	}
	return openBackend(cfg)
}

type nilWriter struct{}

func (nilWriter) Write(p []byte) (int, error) { return len(p), nil }
