//go:build chdb

package main

import (
	"reflect"
	"testing"
)

// TestDriverChDB runs the printed session on in-process ClickHouse, the
// store on SQLite: the same statuses and rows as on SQLite.
func TestDriverChDB(t *testing.T) {
	s := start(t, []string{"-driver", "chdb", "-dsn", t.TempDir(), "-api-key", "k", "-demo-events", "1500"}, nil)
	answers := runSession(t, s.session(t), nil)
	if got, want := statuses(answers), sessionStatuses; !reflect.DeepEqual(got, want) {
		t.Fatalf("%v: statuses(answers) = %+v, want %+v", answers, got, want)
	}
	if got, want := answers[4].body["results"], wantDaily(1500); !reflect.DeepEqual(got, want) {
		t.Errorf("answers[4].body[\"results\"] = %+v, want %+v", got, want)
	}
}
