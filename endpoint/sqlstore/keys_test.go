package sqlstore

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKeysStoredHashed reads the raw table: what a stolen copy of it
// holds is the hash of the secret, never the secret nor any long part of it.
func TestKeysStoredHashed(t *testing.T) {
	s := backends[0].open(t)
	secret := "ekk_" + strings.Repeat("Zq9", 14)
	k := driver.KeyRecord{
		ID: "11111111-1111-4111-8111-111111111111", ProjectID: "1", Name: "ci",
		Prefix: secret[:12], Hash: sha256.Sum256([]byte(secret)),
		Scopes: []string{"endpoint:read"}, CreatedAt: time.Unix(1700000000, 0).UTC(),
	}
	require.NoError(t, s.Keys().CreateKey(context.Background(), k))
	rows, err := s.db.Query(`SELECT ` + keyColumns + ` FROM ` + keysTable)
	require.NoError(t, err)
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
		vals := make([]any, 14)
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		require.NoError(t, rows.Scan(ptrs...))
		var all strings.Builder
		for _, v := range vals {
			switch v := v.(type) {
			case string:
				all.WriteString(v + "\x00")
			case []byte:
				all.WriteString(string(v) + "\x00")
			}
		}
		assert.NotContains(t, all.String(), secret[12:20], "the raw row holds part of the secret beyond its prefix")
		assert.Contains(t, all.String(), hex.EncodeToString(k.Hash[:]), "the raw row does not hold the secret's SHA-256")
	}
	require.Equal(t, 1, n, "%d rows in %s, want 1", n, keysTable)
}

// TestMigrateFromVersion3: a run log entry written at version 3 reads back
// after the migration with no key id, and a run of a key keeps its id; the
// migration runs again after being cut short (the column added already).
func TestMigrateFromVersion3(t *testing.T) {
	for _, cut := range []bool{false, true} {
		t.Run(map[bool]string{false: "fresh", true: "cut short"}[cut], func(t *testing.T) {
			db := testdb.SQLite(t)
			old := []string{`INSERT INTO ` + runLogTable + ` (project, endpoint_id, at_ns, seq, entry) VALUES ('1', 'e1', 1700000000000000000, 1, '{"execution_id": "old", "status": 200}')`}
			if cut {
				old = append(old, `ALTER TABLE `+runLogTable+` ADD COLUMN key_id TEXT NULL`)
			}
			migrateTo(t, db, engine.SQLite, 3, old...)
			s, err := New(db, engine.SQLite)
			require.NoError(t, err)
			require.NoError(t, s.Migrate(context.Background()))
			got, want := schemaVersions(t, db), allVersions()
			assert.Equal(t, want, got, "schemaVersions(t, db)")
			log := s.RunLog(RunLogOptions{MaxAge: 100 * 365 * 24 * time.Hour})
			require.NoError(t, log.Append(context.Background(), driver.RunLogEntry{ExecutionID: "new", ProjectID: "1", EndpointID: "e1",
				At: time.Unix(1700000001, 0), Status: 200, KeyID: "11111111-1111-4111-8111-111111111111"}))
			list, _, err := log.List(context.Background(), "1", "e1", driver.LogPage{Limit: 10})
			require.NoError(t, err)
			require.Len(t, list, 2)
			assert.Equal(t, "new", list[0].ExecutionID)
			assert.Equal(t, "11111111-1111-4111-8111-111111111111", list[0].KeyID)
			assert.Equal(t, "old", list[1].ExecutionID)
			v := list[1].KeyID
			assert.True(t, (v == ""), "list[1].KeyID = %v, want it empty", v)
			var col sql.NullString
			require.NoError(t, db.QueryRow(`SELECT key_id FROM `+runLogTable+` WHERE seq <> 1`).Scan(&col))
			if got, want := col.String, "11111111-1111-4111-8111-111111111111"; got != want {
				t.Errorf("the key id has a column of its own: col.String = %q, want %q", got, want)
			}
		})
	}
}
