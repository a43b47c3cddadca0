//go:build chdb

package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDriverChDB runs the printed session on in-process ClickHouse, the
// store on SQLite: the same statuses and rows as on SQLite.
func TestDriverChDB(t *testing.T) {
	s := start(t, []string{"-driver", "chdb", "-dsn", t.TempDir(), "-api-key", "k", "-demo-events", "1500"}, nil)
	answers := runSession(t, s.session(t), nil)
	require.Equal(t, sessionStatuses, statuses(answers), "%v", answers)
	assert.Equal(t, wantDaily(1500), answers[4].body["results"])
}
