package main

import (
	"reflect"
	"testing"

	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
			got, want := statuses(answers), sessionStatuses
			require.Equal(t, want, got, "%v: statuses(answers)", answers)
			if got, want := answers[4].body["results"], wantDaily(n); !reflect.DeepEqual(got, want) {
				t.Errorf("answers[4].body[\"results\"] = %+v, want %+v", got, want)
			}
			require.NoError(t, s.stop())

			// A restart on the same database keeps everything.
			again := start(t, []string{"-driver", tc.driver, "-dsn", dsn, "-api-key", "k", "-demo-events", "1500"}, nil)
			assert.Contains(t, again.out.String(), "1500 already in the database")
		})
	}
}

func TestDriverFlags(t *testing.T) {
	for _, bad := range [][]string{{"-driver", "postgres"}, {"-driver", "oracle", "-dsn", "x"}} {
		_, err := parseFlagsAndBackend(bad)
		assert.Error(t, err, "%v: got no error, want one", bad)
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
