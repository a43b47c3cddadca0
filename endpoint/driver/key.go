package driver

import (
	"context"
	"crypto/sha256"
	"time"
)

// KeyHashSize is the size of a KeyRecord's Hash: a SHA-256 sum.
const KeyHashSize = sha256.Size

// KeyRecord is an API key for machines as a KeyStore keeps it: who it is
// (ID, Name, the Prefix a person recognizes it by), what it may do (Scopes,
// Endpoints), how much it may run (its budget; 0 takes the host's default),
// and when it was created, last used and revoked. It never holds the key's
// secret, only its SHA-256 Hash: the secret is high-entropy random bytes,
// so a fast hash is enough for a stolen table to reveal no usable key.
type KeyRecord struct {
	// ID is the key's UUID, which the run log records.
	ID        string
	ProjectID string
	// Name is the label its creator gave it.
	Name string
	// Prefix is the start of the secret, shown so that a person can tell
	// keys apart; it is too short to be used.
	Prefix string
	// Hash is the SHA-256 of the whole secret.
	Hash [KeyHashSize]byte
	// Scopes are what the key may do (apikey.ScopeEndpointRead and the
	// others), sorted.
	Scopes []string
	// Endpoints, when not nil, are the only endpoint names the key may
	// use, sorted; nil means every endpoint of the project.
	Endpoints []string
	// RunsPerMinute and RunsPerHour bound the key's runs answered inline;
	// MaterializedRunsPerMinute and MaterializedRunsPerHour those of
	// materialized endpoints. 0 takes the host's default, -1 is unlimited.
	RunsPerMinute             int
	RunsPerHour               int
	MaterializedRunsPerMinute int
	MaterializedRunsPerHour   int
	CreatedAt                 time.Time
	// LastUsedAt is when a request last authenticated with the key (to the
	// store's resolution of such marks), nil before the first.
	LastUsedAt *time.Time
	// RevokedAt is when the key was revoked, nil while it is live.
	RevokedAt *time.Time
}

// KeyStore keeps the API keys of projects (apikey.Keys).
//
// Guidelines for implementers: a KeyStore persists what it is given (the
// caller validates). Every method is safe for concurrent use; values
// returned never alias stored ones. Projects are isolated: ListKeys,
// RevokeKey and MarkKeyUsed see only the keys of their project. Errors:
// ErrNotFound for an unknown key (by hash, or by id in the project),
// ErrConflict for CreateKey of an ID or Hash that is stored. The
// conformance suite in endpoint/storetest (RunKeyStore) states the contract
// as tests.
type KeyStore interface {
	// CreateKey stores k.
	CreateKey(ctx context.Context, k KeyRecord) error
	// KeyByHash returns the key whose Hash is hash, of any project and
	// revoked or not.
	KeyByHash(ctx context.Context, hash [KeyHashSize]byte) (KeyRecord, error)
	// ListKeys returns the keys of project, revoked ones included, oldest
	// first (by CreatedAt, then ID).
	ListKeys(ctx context.Context, project string) ([]KeyRecord, error)
	// RevokeKey sets the RevokedAt of the key with id in project to at,
	// unless it is revoked already (the first revocation stands).
	RevokeKey(ctx context.Context, project, id string, at time.Time) error
	// MarkKeyUsed sets the LastUsedAt of the key with id in project to at,
	// unless the stored value is already later.
	MarkKeyUsed(ctx context.Context, project, id string, at time.Time) error
}
