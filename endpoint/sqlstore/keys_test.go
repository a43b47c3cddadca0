package sqlstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	epstoretest "github.com/endpointkit/endpointkit/endpoint/storetest"
	"github.com/endpointkit/endpointkit/internal/testdb"
)

func TestKeyStoreConformance(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			epstoretest.RunKeyStore(t, func(t *testing.T) driver.KeyStore { return b.open(t).Keys() })
		})
	}
}

// TestKeyStoreEngines runs the key store suite on PostgreSQL and MariaDB.
func TestKeyStoreEngines(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			testdb.Require(t, e.env)
			epstoretest.RunKeyStore(t, func(t *testing.T) driver.KeyStore { return openEngine(t, e.dialect, e.open).Keys() })
		})
	}
}

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
	if err := s.Keys().CreateKey(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	rows, err := s.db.Query(`SELECT ` + keyColumns + ` FROM ` + keysTable)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
		vals := make([]any, 14)
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		var all strings.Builder
		for _, v := range vals {
			switch v := v.(type) {
			case string:
				all.WriteString(v + "\x00")
			case []byte:
				all.WriteString(string(v) + "\x00")
			}
		}
		if strings.Contains(all.String(), secret[12:20]) {
			t.Errorf("the raw row holds part of the secret beyond its prefix: %q", all.String())
		}
		if !strings.Contains(all.String(), hex.EncodeToString(k.Hash[:])) {
			t.Errorf("the raw row does not hold the secret's SHA-256: %q", all.String())
		}
	}
	if n != 1 {
		t.Fatalf("%d rows in %s, want 1", n, keysTable)
	}
}
