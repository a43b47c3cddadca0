package storetest

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

// RunKeyStore is the conformance suite of driver.KeyStore. newStore is
// called once per subtest and must return an empty store.
func RunKeyStore(t *testing.T, newStore func(t *testing.T) driver.KeyStore) {
	t.Helper()
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, s driver.KeyStore)
	}{
		{"CreateByHash", testKeyCreateByHash},
		{"Conflicts", testKeyConflicts},
		{"ListOrderAndIsolation", testKeyList},
		{"Revoke", testKeyRevoke},
		{"MarkUsed", testKeyMarkUsed},
		{"NoAliasing", testKeyNoAliasing},
		{"Concurrent", testKeyConcurrent},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newStore(t)) })
	}
}

// keyFixture is the i-th key of project: every field set, Endpoints nil
// for even i (every endpoint) and a list for odd i.
func keyFixture(project string, i int) driver.KeyRecord {
	k := driver.KeyRecord{
		ID:                        uuid.NewString(),
		ProjectID:                 project,
		Name:                      fmt.Sprintf("key é %d", i),
		Prefix:                    fmt.Sprintf("ekk_%04d", i),
		Hash:                      sha256.Sum256([]byte(fmt.Sprintf("%s secret %d %s", project, i, uuid.NewString()))),
		Scopes:                    []string{"endpoint:read", "endpoint:write"},
		RunsPerMinute:             i,
		RunsPerHour:               10 * i,
		MaterializedRunsPerMinute: -1,
		MaterializedRunsPerHour:   100 * i,
		CreatedAt:                 base.Add(time.Duration(i) * time.Minute),
	}
	if i%2 == 1 {
		k.Endpoints = []string{"a", "b/ü"}
	}
	return k
}

func sameKey(t *testing.T, what string, got, want driver.KeyRecord) {
	t.Helper()
	g, w := got, want
	sameTimePtr := func(field string, a, b *time.Time) {
		if (a == nil) != (b == nil) || a != nil && !a.Equal(*b) {
			t.Errorf("%s: %s = %v, want %v", what, field, a, b)
		}
	}
	sameTimePtr("LastUsedAt", g.LastUsedAt, w.LastUsedAt)
	sameTimePtr("RevokedAt", g.RevokedAt, w.RevokedAt)
	sameTime(t, what+": CreatedAt", g.CreatedAt, w.CreatedAt)
	if (g.Endpoints == nil) != (w.Endpoints == nil) {
		t.Errorf("%s: Endpoints = %#v, want %#v (nil means every endpoint, [] none)", what, g.Endpoints, w.Endpoints)
	}
	g.LastUsedAt, g.RevokedAt, w.LastUsedAt, w.RevokedAt = nil, nil, nil, nil
	g.CreatedAt, w.CreatedAt = time.Time{}, time.Time{}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s:\n got  %+v\n want %+v", what, g, w)
	}
}

func mustCreateKey(t *testing.T, s driver.KeyStore, k driver.KeyRecord) {
	t.Helper()
	if err := s.CreateKey(context.Background(), k); err != nil {
		t.Fatalf("CreateKey: %v", err)
	}
}

func testKeyCreateByHash(t *testing.T, s driver.KeyStore) {
	ctx := context.Background()
	for i := range 3 {
		k := keyFixture("p1", i)
		if i == 2 {
			k.Endpoints = []string{} // no endpoint at all, not every one
		}
		mustCreateKey(t, s, k)
		got, err := s.KeyByHash(ctx, k.Hash)
		if err != nil {
			t.Fatalf("KeyByHash: %v", err)
		}
		sameKey(t, fmt.Sprintf("key %d", i), got, k)
	}
	_, err := s.KeyByHash(ctx, sha256.Sum256([]byte("unknown")))
	wantErr(t, "KeyByHash of an unknown hash", err, driver.ErrNotFound)
}

func testKeyConflicts(t *testing.T, s driver.KeyStore) {
	ctx := context.Background()
	k := keyFixture("p1", 1)
	mustCreateKey(t, s, k)
	sameID := keyFixture("p1", 2)
	sameID.ID = k.ID
	wantErr(t, "CreateKey of a stored ID", s.CreateKey(ctx, sameID), driver.ErrConflict)
	sameHash := keyFixture("p2", 3)
	sameHash.Hash = k.Hash
	wantErr(t, "CreateKey of a stored hash", s.CreateKey(ctx, sameHash), driver.ErrConflict)
	list, err := s.ListKeys(ctx, "p1")
	if err != nil || len(list) != 1 {
		t.Fatalf("ListKeys after conflicts = %d keys, %v; want the one created", len(list), err)
	}
	sameKey(t, "the first key after conflicts", list[0], k)
	if list, _ := s.ListKeys(ctx, "p2"); len(list) != 0 {
		t.Errorf("a conflicting CreateKey stored %d keys in p2", len(list))
	}
}

func testKeyList(t *testing.T, s driver.KeyStore) {
	ctx := context.Background()
	var want []driver.KeyRecord
	for _, i := range []int{3, 1, 2} {
		k := keyFixture("p1", i)
		mustCreateKey(t, s, k)
		want = append(want, k)
		mustCreateKey(t, s, keyFixture("p2", i))
	}
	want[0], want[1] = want[1], want[0]
	want[1], want[2] = want[2], want[1]
	got, err := s.ListKeys(ctx, "p1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("ListKeys(p1) = %d keys, want %d", len(got), len(want))
	}
	for i := range got {
		sameKey(t, fmt.Sprintf("ListKeys(p1)[%d]", i), got[i], want[i])
	}
	if got, err := s.ListKeys(ctx, "nobody"); err != nil || got == nil || len(got) != 0 {
		t.Errorf("ListKeys of a project without keys = %#v, %v; want an empty list", got, err)
	}
	// Another project's id is unknown here.
	other, _ := s.ListKeys(ctx, "p2")
	wantErr(t, "RevokeKey through another project", s.RevokeKey(ctx, "p1", other[0].ID, base), driver.ErrNotFound)
	wantErr(t, "MarkKeyUsed through another project", s.MarkKeyUsed(ctx, "p1", other[0].ID, base), driver.ErrNotFound)
	if k, _ := s.KeyByHash(ctx, other[0].Hash); k.RevokedAt != nil || k.LastUsedAt != nil {
		t.Errorf("a write through another project changed the key: %+v", k)
	}
}

func testKeyRevoke(t *testing.T, s driver.KeyStore) {
	ctx := context.Background()
	k := keyFixture("p1", 1)
	mustCreateKey(t, s, k)
	at := base.Add(time.Hour)
	if err := s.RevokeKey(ctx, "p1", k.ID, at); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeKey(ctx, "p1", k.ID, at.Add(time.Hour)); err != nil {
		t.Fatalf("revoking twice: %v", err)
	}
	got, err := s.KeyByHash(ctx, k.Hash)
	if err != nil {
		t.Fatal(err)
	}
	k.RevokedAt = &at
	sameKey(t, "revoked key (the first revocation stands)", got, k)
	wantErr(t, "RevokeKey of an unknown id", s.RevokeKey(ctx, "p1", uuid.NewString(), at), driver.ErrNotFound)
}

func testKeyMarkUsed(t *testing.T, s driver.KeyStore) {
	ctx := context.Background()
	k := keyFixture("p1", 1)
	mustCreateKey(t, s, k)
	late, early := base.Add(2*time.Hour), base.Add(time.Hour)
	for _, at := range []time.Time{late, early} {
		if err := s.MarkKeyUsed(ctx, "p1", k.ID, at); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := s.KeyByHash(ctx, k.Hash)
	k.LastUsedAt = &late
	sameKey(t, "key marked used (the later mark stands)", got, k)
	wantErr(t, "MarkKeyUsed of an unknown id", s.MarkKeyUsed(ctx, "p1", uuid.NewString(), late), driver.ErrNotFound)
}

func testKeyNoAliasing(t *testing.T, s driver.KeyStore) {
	ctx := context.Background()
	k := keyFixture("p1", 1)
	mustCreateKey(t, s, k)
	want := keyFixture("p1", 1)
	want.ID, want.Hash, want.CreatedAt = k.ID, k.Hash, k.CreatedAt
	want.Name, want.Prefix = k.Name, k.Prefix
	k.Scopes[0], k.Endpoints[0] = "changed", "changed"
	got, _ := s.KeyByHash(ctx, k.Hash)
	sameKey(t, "key after the caller changed its slices", got, want)
	got.Scopes[0], got.Endpoints[0] = "changed", "changed"
	again, _ := s.KeyByHash(ctx, k.Hash)
	sameKey(t, "key after the caller changed a returned one", again, want)
}

func testKeyConcurrent(t *testing.T, s driver.KeyStore) {
	ctx := context.Background()
	const n = 8
	keys := make([]driver.KeyRecord, n)
	var wg sync.WaitGroup
	errs := make(chan error, 4*n)
	for i := range n {
		keys[i] = keyFixture("p1", i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := keys[i]
			if err := s.CreateKey(ctx, k); err != nil {
				errs <- err
				return
			}
			if err := s.MarkKeyUsed(ctx, "p1", k.ID, base.Add(time.Duration(i)*time.Second)); err != nil {
				errs <- err
			}
			if err := s.RevokeKey(ctx, "p1", k.ID, base); err != nil {
				errs <- err
			}
			if _, err := s.ListKeys(ctx, "p1"); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, context.Canceled) {
			t.Error(err)
		}
	}
	list, err := s.ListKeys(ctx, "p1")
	if err != nil || len(list) != n {
		t.Fatalf("ListKeys = %d keys, %v; want %d", len(list), err, n)
	}
	for _, k := range list {
		if k.RevokedAt == nil || k.LastUsedAt == nil {
			t.Errorf("key %s lost a concurrent write: %+v", k.ID, k)
		}
	}
}
