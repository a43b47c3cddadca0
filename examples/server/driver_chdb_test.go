//go:build chdb

package main

import (
	"github.com/stretchr/testify/require"
	"reflect"
	"testing"
)

// TestDriverChDB runs the printed session on in-process ClickHouse, the
// store on SQLite: the same statuses and rows as on SQLite.
func TestDriverChDB(t *testing.T) {
	s := start(t, []string{"-driver", "chdb", "-dsn", t.TempDir(), "-api-key", "k", "-demo-events", "1500"}, nil)
	answers := runSession(t, s.session(t), nil)
	got, want := statuses(answers), sessionStatuses
	require.Equal(t, want, got, "%v: statuses(answers)", answers)
	if got, want := answers[4].body["results"], wantDaily(1500); !reflect.DeepEqual(got, want) {
		t.Errorf("answers[4].body[\"results\"] = %+v, want %+v", got, want)
	}
}
