package memstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

// KeyStore is a driver.KeyStore in memory, for tests, examples and
// single-process servers whose keys need not outlive them. It keeps
// hashes only, as every KeyStore does. The zero value is ready to use; it
// is safe for concurrent use.
type KeyStore struct {
	mu     sync.RWMutex
	byHash map[[driver.KeyHashSize]byte]*driver.KeyRecord
	byID   map[string]*driver.KeyRecord
}

// NewKeyStore returns an empty KeyStore.
func NewKeyStore() *KeyStore { return &KeyStore{} }

var _ driver.KeyStore = (*KeyStore)(nil)

// CreateKey implements driver.KeyStore.
func (s *KeyStore) CreateKey(ctx context.Context, k driver.KeyRecord) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byHash == nil {
		s.byHash = map[[driver.KeyHashSize]byte]*driver.KeyRecord{}
		s.byID = map[string]*driver.KeyRecord{}
	}
	if _, ok := s.byID[k.ID]; ok {
		return fmt.Errorf("endpoint: key %q exists: %w", k.ID, driver.ErrConflict)
	}
	if _, ok := s.byHash[k.Hash]; ok {
		return fmt.Errorf("endpoint: a key with this hash exists: %w", driver.ErrConflict)
	}
	c := cloneKey(k)
	s.byHash[k.Hash], s.byID[k.ID] = &c, &c
	return nil
}

// KeyByHash implements driver.KeyStore.
func (s *KeyStore) KeyByHash(ctx context.Context, hash [driver.KeyHashSize]byte) (driver.KeyRecord, error) {
	if err := ctx.Err(); err != nil {
		return driver.KeyRecord{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	k, ok := s.byHash[hash]
	if !ok {
		return driver.KeyRecord{}, fmt.Errorf("endpoint: no such key: %w", driver.ErrNotFound)
	}
	return cloneKey(*k), nil
}

// ListKeys implements driver.KeyStore.
func (s *KeyStore) ListKeys(ctx context.Context, project string) ([]driver.KeyRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	list := []driver.KeyRecord{}
	for _, k := range s.byID {
		if k.ProjectID == project {
			list = append(list, cloneKey(*k))
		}
	}
	slices.SortFunc(list, func(a, b driver.KeyRecord) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return list, nil
}

// RevokeKey implements driver.KeyStore.
func (s *KeyStore) RevokeKey(ctx context.Context, project, id string, at time.Time) error {
	return s.update(ctx, project, id, func(k *driver.KeyRecord) {
		if k.RevokedAt == nil {
			k.RevokedAt = &at
		}
	})
}

// MarkKeyUsed implements driver.KeyStore.
func (s *KeyStore) MarkKeyUsed(ctx context.Context, project, id string, at time.Time) error {
	return s.update(ctx, project, id, func(k *driver.KeyRecord) {
		if k.LastUsedAt == nil || at.After(*k.LastUsedAt) {
			k.LastUsedAt = &at
		}
	})
}

func (s *KeyStore) update(ctx context.Context, project, id string, fn func(*driver.KeyRecord)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.byID[id]
	if !ok || k.ProjectID != project {
		return fmt.Errorf("endpoint: no key %q in project %q: %w", id, project, driver.ErrNotFound)
	}
	fn(k)
	return nil
}

// cloneKey copies k so that no slice or time pointer is shared.
func cloneKey(k driver.KeyRecord) driver.KeyRecord {
	k.Scopes = slices.Clone(k.Scopes)
	if k.Endpoints != nil {
		k.Endpoints = slices.Clone(k.Endpoints)
	}
	if k.LastUsedAt != nil {
		t := *k.LastUsedAt
		k.LastUsedAt = &t
	}
	if k.RevokedAt != nil {
		t := *k.RevokedAt
		k.RevokedAt = &t
	}
	return k
}
