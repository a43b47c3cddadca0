package httpapi

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"sync"

	"github.com/endpointkit/endpointkit/endpoint"
)

// ErrBadKey is returned by Keyring.Add for a key that no request could
// present: empty, or holding spaces or control characters.
var ErrBadKey = errors.New("httpapi: API key must be non-empty and hold no spaces or control characters")

// Keyring is the shipped Authenticator: a set of API keys, each allowed a
// list of projects or all of them. It keeps only the SHA-256 hash of each
// key, so a memory dump does not reveal usable keys, and compares hashes in
// constant time over every entry, so response time tells nothing about
// which keys exist. The zero Keyring is empty and ready to use; it is safe
// for concurrent use, also while keys are added.
type Keyring struct {
	mu      sync.RWMutex
	entries []keyEntry
}

type keyEntry struct {
	hash     [sha256.Size]byte
	all      bool
	projects map[string]bool
}

// NewKeyring returns an empty Keyring.
func NewKeyring() *Keyring { return &Keyring{} }

// Add allows key to use projects, in addition to any it was allowed before.
// A key added with no projects is known but may use none (403 everywhere).
func (k *Keyring) Add(key string, projects ...string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	k.AddHash(sha256.Sum256([]byte(key)), projects...)
	return nil
}

// AddAllProjects allows key to use every project, as an administrator's key
// or a single-tenant host needs.
func (k *Keyring) AddAllProjects(key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	k.update(sha256.Sum256([]byte(key)), func(e *keyEntry) { e.all = true })
	return nil
}

// AddHash is Add for a host that keeps only hashes in its configuration:
// sum is the SHA-256 of the key.
func (k *Keyring) AddHash(sum [sha256.Size]byte, projects ...string) {
	k.update(sum, func(e *keyEntry) {
		for _, p := range projects {
			e.projects[p] = true
		}
	})
}

// update applies fn to the entry of sum, created when absent, under the
// write lock.
func (k *Keyring) update(sum [sha256.Size]byte, fn func(*keyEntry)) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for i := range k.entries {
		if k.entries[i].hash == sum {
			fn(&k.entries[i])
			return
		}
	}
	k.entries = append(k.entries, keyEntry{hash: sum, projects: map[string]bool{}})
	fn(&k.entries[len(k.entries)-1])
}

// Authorize implements Authenticator.
func (k *Keyring) Authorize(_ context.Context, key, project string) error {
	sum := sha256.Sum256([]byte(key))
	k.mu.RLock()
	defer k.mu.RUnlock()
	found := -1
	for i := range k.entries {
		// Every entry is compared, found or not, so that the time taken
		// does not depend on where (or whether) the key is stored.
		if subtle.ConstantTimeCompare(sum[:], k.entries[i].hash[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return fmt.Errorf("httpapi: unknown API key: %w", endpoint.ErrUnauthorized)
	}
	e := &k.entries[found]
	if e.all || e.projects[project] {
		return nil
	}
	return fmt.Errorf("httpapi: API key may not use project %q: %w", project, endpoint.ErrForbidden)
}

func checkKey(key string) error {
	if key == "" {
		return ErrBadKey
	}
	for _, c := range []byte(key) {
		if c <= ' ' || c == 0x7f {
			return ErrBadKey
		}
	}
	return nil
}
