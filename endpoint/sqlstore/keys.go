package sqlstore

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/sql/engine"
)

// keysMigration is version 5: API keys for machines (Store.Keys), and the
// key that ran in the run log. A key's secret is never stored: key_hash
// is the hex SHA-256 of it. Instants are Unix nanoseconds; scopes and
// endpoints are JSON arrays (endpoints NULL for every endpoint).
func keysMigration(d engine.Store) []string {
	key, text := d.KeyType(), d.LongTextType()
	return []string{
		`CREATE TABLE IF NOT EXISTS ` + keysTable + ` (
	project ` + key + ` NOT NULL,
	id ` + key + ` NOT NULL,
	name ` + text + ` NOT NULL,
	prefix ` + key + ` NOT NULL,
	key_hash ` + key + ` NOT NULL,
	scopes ` + text + ` NOT NULL,
	endpoints ` + text + ` NULL,
	runs_per_minute BIGINT NOT NULL,
	runs_per_hour BIGINT NOT NULL,
	materialized_runs_per_minute BIGINT NOT NULL,
	materialized_runs_per_hour BIGINT NOT NULL,
	created_ns BIGINT NOT NULL,
	last_used_ns BIGINT NULL,
	revoked_ns BIGINT NULL,
	PRIMARY KEY (project, id),
	CONSTRAINT endpointkit_keys_id UNIQUE (id),
	CONSTRAINT endpointkit_keys_hash UNIQUE (key_hash)
)`,
		d.AddColumn(runLogTable, "key_id", key+" NULL"),
	}
}

const keyColumns = `project, id, name, prefix, key_hash, scopes, endpoints, runs_per_minute, runs_per_hour, materialized_runs_per_minute, materialized_runs_per_hour, created_ns, last_used_ns, revoked_ns`

// Keys returns the driver.KeyStore view of s: API keys in the table
// endpointkit_keys, each with the SHA-256 of its secret (never the secret),
// shared by the processes that share the database.
func (s *Store) Keys() driver.KeyStore {
	d := s.dialect
	b := func(q string) string { return rebind(d, q) }
	return &keyStore{
		s:      s,
		insert: b(`INSERT INTO ` + keysTable + ` (` + keyColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		byHash: b(`SELECT ` + keyColumns + ` FROM ` + keysTable + ` WHERE key_hash = ?`),
		list:   b(`SELECT ` + keyColumns + ` FROM ` + keysTable + ` WHERE project = ? ORDER BY created_ns, ` + d.Bytewise("id")),
		revoke: b(`UPDATE ` + keysTable + ` SET revoked_ns = ? WHERE project = ? AND id = ? AND revoked_ns IS NULL`),
		used:   b(`UPDATE ` + keysTable + ` SET last_used_ns = ? WHERE project = ? AND id = ? AND (last_used_ns IS NULL OR last_used_ns < ?)`),
		exists: b(`SELECT 1 FROM ` + keysTable + ` WHERE project = ? AND id = ?`),
	}
}

type keyStore struct {
	s                                          *Store
	insert, byHash, list, revoke, used, exists string
}

var _ driver.KeyStore = (*keyStore)(nil)

// CreateKey implements driver.KeyStore.
func (k *keyStore) CreateKey(ctx context.Context, r driver.KeyRecord) error {
	scopes, err := json.Marshal(r.Scopes)
	if err != nil {
		return fmt.Errorf("sqlstore: key %q: %w", r.ID, err)
	}
	if r.Scopes == nil {
		scopes = []byte("[]")
	}
	var endpoints sql.NullString
	if r.Endpoints != nil {
		b, err := json.Marshal(r.Endpoints)
		if err != nil {
			return fmt.Errorf("sqlstore: key %q: %w", r.ID, err)
		}
		endpoints = sql.NullString{String: string(b), Valid: true}
	}
	_, err = k.s.exec(ctx, k.insert, r.ProjectID, r.ID, r.Name, r.Prefix, hex.EncodeToString(r.Hash[:]), string(scopes), endpoints,
		r.RunsPerMinute, r.RunsPerHour, r.MaterializedRunsPerMinute, r.MaterializedRunsPerHour,
		r.CreatedAt.UnixNano(), nullNanos(r.LastUsedAt), nullNanos(r.RevokedAt))
	if err != nil {
		if isUniqueViolation(err) {
			return fmt.Errorf("sqlstore: key %q or its hash exists: %w", r.ID, driver.ErrConflict)
		}
		return fmt.Errorf("sqlstore: creating key %q: %w", r.ID, err)
	}
	return nil
}

// KeyByHash implements driver.KeyStore.
func (k *keyStore) KeyByHash(ctx context.Context, hash [driver.KeyHashSize]byte) (driver.KeyRecord, error) {
	rows, err := k.s.query(ctx, k.byHash, hex.EncodeToString(hash[:]))
	if err != nil {
		return driver.KeyRecord{}, fmt.Errorf("sqlstore: reading a key: %w", err)
	}
	list, err := scanKeys(rows)
	if err != nil {
		return driver.KeyRecord{}, err
	}
	if len(list) == 0 {
		return driver.KeyRecord{}, fmt.Errorf("sqlstore: no such key: %w", driver.ErrNotFound)
	}
	return list[0], nil
}

// ListKeys implements driver.KeyStore.
func (k *keyStore) ListKeys(ctx context.Context, project string) ([]driver.KeyRecord, error) {
	rows, err := k.s.query(ctx, k.list, project)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: listing keys: %w", err)
	}
	return scanKeys(rows)
}

// RevokeKey implements driver.KeyStore: one statement, which leaves an
// earlier revocation as it is.
func (k *keyStore) RevokeKey(ctx context.Context, project, id string, at time.Time) error {
	return k.write(ctx, k.revoke, project, id, at.UnixNano())
}

// MarkKeyUsed implements driver.KeyStore: one statement, which only moves
// the time forward.
func (k *keyStore) MarkKeyUsed(ctx context.Context, project, id string, at time.Time) error {
	return k.write(ctx, k.used, project, id, at.UnixNano(), at.UnixNano())
}

// write runs an UPDATE of the key with id in project whose arguments are
// first, project, id and the rest; when it changes no row, the key is
// looked for, so that an unknown key is ErrNotFound and a write that had
// nothing to change is not.
func (k *keyStore) write(ctx context.Context, stmt, project, id string, first int64, rest ...any) error {
	res, err := k.s.exec(ctx, stmt, append([]any{first, project, id}, rest...)...)
	if err != nil {
		return fmt.Errorf("sqlstore: writing key %q: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("sqlstore: writing key %q: %w", id, err)
	} else if n > 0 {
		return nil
	}
	var one int
	err = k.s.queryRow(ctx, k.exists, project, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("sqlstore: no key %q in project %q: %w", id, project, driver.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("sqlstore: writing key %q: %w", id, err)
	}
	return nil
}

func scanKeys(rows *sql.Rows) ([]driver.KeyRecord, error) {
	defer rows.Close()
	list := []driver.KeyRecord{}
	for rows.Next() {
		var (
			r                 driver.KeyRecord
			hash, scopes      string
			endpoints         sql.NullString
			created           int64
			lastUsed, revoked sql.NullInt64
		)
		if err := rows.Scan(&r.ProjectID, &r.ID, &r.Name, &r.Prefix, &hash, &scopes, &endpoints,
			&r.RunsPerMinute, &r.RunsPerHour, &r.MaterializedRunsPerMinute, &r.MaterializedRunsPerHour,
			&created, &lastUsed, &revoked); err != nil {
			return nil, fmt.Errorf("sqlstore: reading a key: %w", err)
		}
		b, err := hex.DecodeString(strings.TrimSpace(hash))
		if err != nil || len(b) != driver.KeyHashSize {
			return nil, fmt.Errorf("sqlstore: key %q: stored hash is not a hex SHA-256", r.ID)
		}
		copy(r.Hash[:], b)
		if err := json.Unmarshal([]byte(scopes), &r.Scopes); err != nil {
			return nil, fmt.Errorf("sqlstore: key %q: scopes: %w", r.ID, err)
		}
		if endpoints.Valid {
			r.Endpoints = []string{}
			if err := json.Unmarshal([]byte(endpoints.String), &r.Endpoints); err != nil {
				return nil, fmt.Errorf("sqlstore: key %q: endpoints: %w", r.ID, err)
			}
		}
		r.CreatedAt = time.Unix(0, created).UTC()
		r.LastUsedAt, r.RevokedAt = nanosTime(lastUsed), nanosTime(revoked)
		list = append(list, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlstore: reading keys: %w", err)
	}
	return list, nil
}

func nullNanos(t *time.Time) sql.NullInt64 {
	if t == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixNano(), Valid: true}
}

func nanosTime(n sql.NullInt64) *time.Time {
	if !n.Valid {
		return nil
	}
	t := time.Unix(0, n.Int64).UTC()
	return &t
}
