package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/endpointkit/endpointkit/sql/engine"
)

// SchemaVersion is the version of the tables this package reads and writes.
// Migrate brings a database to it.
const SchemaVersion = 10

// ErrSchemaTooNew is returned by Migrate for a database written by a newer
// version of this package, whose tables this one may misread.
var ErrSchemaTooNew = errors.New("sqlstore: database schema is newer than this package")

// Table names. The prefix keeps them apart from a host's own tables in a
// shared database.
const (
	schemaTable    = "endpointkit_schema"
	variablesTable = "endpointkit_variables"
	endpointsTable = "endpointkit_endpoints"
	versionsTable  = "endpointkit_endpoint_versions"
	cacheTable     = "endpointkit_result_cache"
	runLogTable    = "endpointkit_run_log"
	leasesTable    = "endpointkit_leases"
	keysTable      = "endpointkit_keys"
)

// endpointsColumnsV1 are the columns of the endpoints table as version 1
// created them, in the placeholders of ddlOf. Migrations are history: it
// never changes; version 9 (endpointStateMigration), which makes the table
// again on SQLite, starts from it too.
const endpointsColumnsV1 = `	project KEY_T NOT NULL,
	id KEY_T NOT NULL,
	name KEY_T NOT NULL,
	description TEXT_T NOT NULL,
	query_json TEXT_T NOT NULL,
	is_active SMALLINT NOT NULL,
	is_materialized SMALLINT NOT NULL,
	current_version BIGINT NOT NULL,
	versions_count BIGINT NOT NULL,
	created_at TIME_T NOT NULL,
	updated_at TIME_T NOT NULL,
	last_executed_at TIME_T NULL,
`

// ddlOf returns the function that writes a migration's DDL for d: KEY_T
// is d's key type, TEXT_T its long text type, TIME_T an instant's text.
func ddlOf(d engine.Store) func(string) string {
	r := strings.NewReplacer("KEY_T", d.KeyType(), "TEXT_T", d.LongTextType(), "TIME_T", "VARCHAR(40)")
	return r.Replace
}

// migrations[i] brings the schema from version i to i+1. Every statement is
// idempotent, because MySQL commits DDL at once and a migration cut short
// there must be able to run again.
func migrations(d engine.Store) [][]string {
	text := d.LongTextType()
	ddl := ddlOf(d)
	return [][]string{{
		ddl(`CREATE TABLE IF NOT EXISTS ` + variablesTable + ` (
	project KEY_T NOT NULL,
	id KEY_T NOT NULL,
	name TEXT_T NOT NULL,
	code_name KEY_T NOT NULL,
	var_type VARCHAR(32) NOT NULL,
	default_value TEXT_T NOT NULL,
	list_values TEXT_T NOT NULL,
	is_multi SMALLINT NOT NULL,
	PRIMARY KEY (project, id),
	CONSTRAINT endpointkit_variables_code_name UNIQUE (project, code_name)
)`),
		ddl(`CREATE TABLE IF NOT EXISTS ` + endpointsTable + ` (
` + endpointsColumnsV1 + `	PRIMARY KEY (project, id),
	CONSTRAINT endpointkit_endpoints_name UNIQUE (project, name)
)`),
		ddl(`CREATE TABLE IF NOT EXISTS ` + versionsTable + ` (
	project KEY_T NOT NULL,
	endpoint_id KEY_T NOT NULL,
	version BIGINT NOT NULL,
	query_json TEXT_T NOT NULL,
	created_at TIME_T NOT NULL,
	PRIMARY KEY (project, endpoint_id, version)
)`),
	}, {
		// Version 2: materialization settings and state, JSON text; NULL
		// in rows written before.
		d.AddColumn(endpointsTable, "materialization_settings", text+" NULL"),
		d.AddColumn(endpointsTable, "materialization_state", text+" NULL"),
	}, {
		// Version 3: operations. Instants are Unix nanoseconds, which
		// compare as numbers on every engine; only primary keys, which
		// every engine creates idempotently with its table.
		ddl(`CREATE TABLE IF NOT EXISTS ` + cacheTable + ` (
	cache_key KEY_T NOT NULL,
	expires_ns BIGINT NOT NULL,
	body TEXT_T NOT NULL,
	PRIMARY KEY (cache_key)
)`),
		ddl(`CREATE TABLE IF NOT EXISTS ` + runLogTable + ` (
	project KEY_T NOT NULL,
	endpoint_id KEY_T NOT NULL,
	at_ns BIGINT NOT NULL,
	seq BIGINT NOT NULL,
	entry TEXT_T NOT NULL,
	PRIMARY KEY (project, endpoint_id, at_ns, seq)
)`),
		ddl(`CREATE TABLE IF NOT EXISTS ` + leasesTable + ` (
	name KEY_T NOT NULL,
	holder KEY_T NOT NULL,
	expires_ns BIGINT NOT NULL,
	PRIMARY KEY (name)
)`),
	}, {
		// Version 4: the instant an endpoint was soft-deleted; NULL for a
		// live one.
		d.AddColumn(endpointsTable, "deleted_at", "VARCHAR(40) NULL"),
	}, keysMigration(d), runLogClusteredMigration(d), runLogBlocksMigration(d), {
		// Version 8: a version's columns and their types as the engine
		// described them, JSON text; NULL in rows written before (the
		// Service describes such a version at its first run).
		d.AddColumn(versionsTable, "columns_json", text+" NULL"),
	}, endpointStateMigration(d), countersMigration(d)}
}

// isDuplicateColumn recognizes the error of adding a column that exists:
// SQLite's "duplicate column name", MySQL's error 1060 "Duplicate column
// name". A failed ALTER leaves the transaction usable on both.
func isDuplicateColumn(err error) bool {
	return err != nil && strings.Contains(strings.ToLower(err.Error()), "duplicate column name")
}

// Migrate creates the store's tables, or brings older ones up to
// SchemaVersion. It is idempotent, and safe to run from several processes
// at once.
func (s *Store) Migrate(ctx context.Context) error {
	create := `CREATE TABLE IF NOT EXISTS ` + schemaTable + ` (version BIGINT NOT NULL PRIMARY KEY)`
	err := s.createSchemaTable(ctx, create)
	if err != nil && isUniqueViolation(err) {
		// PostgreSQL: two sessions creating the same table at once can both
		// pass IF NOT EXISTS, and the later one trips on the catalog's
		// unique key. The table exists now; the second try says so.
		err = s.createSchemaTable(ctx, create)
	}
	if err != nil {
		return fmt.Errorf("sqlstore: migrate: creating %s: %w", schemaTable, err)
	}
	steps := migrations(s.dialect)
	// Each round applies one migration, or loses a race to another process
	// that applied it; a round more than there are migrations means a
	// conflict that is not such a race.
	for range len(steps) + 3 {
		done, err := s.migrateOne(ctx, steps)
		if err != nil {
			return err
		}
		if done {
			return nil
		}
	}
	return errors.New("sqlstore: migrate: the schema version did not settle; is another program writing " + schemaTable + "?")
}

// migrateOne applies the next migration, if any, in one transaction
// (where the engine's DDL is transactional). done is true when the schema
// is already at SchemaVersion.
func (s *Store) migrateOne(ctx context.Context, steps [][]string) (done bool, err error) {
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		var cur sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT MAX(version) FROM `+schemaTable).Scan(&cur); err != nil {
			return fmt.Errorf("sqlstore: migrate: reading the schema version: %w", err)
		}
		v := int(cur.Int64)
		if v > len(steps) {
			return fmt.Errorf("%w: version %d, this package knows %d", ErrSchemaTooNew, v, len(steps))
		}
		if v == len(steps) {
			done = true
			return nil
		}
		for _, stmt := range steps[v] {
			if _, err := tx.ExecContext(ctx, stmt); err != nil && !isDuplicateColumn(err) && !isReapplied(err) {
				return fmt.Errorf("sqlstore: migrate to version %d: %w", v+1, err)
			}
		}
		_, err := tx.ExecContext(ctx, rebind(s.dialect, `INSERT INTO `+schemaTable+` (version) VALUES (?)`), v+1)
		if err != nil {
			return fmt.Errorf("sqlstore: migrate: recording version %d: %w", v+1, err)
		}
		return nil
	})
	if err != nil && isUniqueViolation(err) {
		// Another process applied the same migration first; look again.
		return false, nil
	}
	return done, err
}

// createSchemaTable runs create, the one statement of the store that cannot
// start its transaction with a write (see Store.inTx): on a new SQLite
// database it reads the schema, then writes, and fails at once with
// SQLITE_BUSY, without waiting for the busy timeout, when another process
// created a table in between. It is tried again then, for up to ten
// seconds.
func (s *Store) createSchemaTable(ctx context.Context, create string) error {
	const pause, tries = 20 * time.Millisecond, 500
	for i := 0; ; i++ {
		_, err := s.db.ExecContext(ctx, create)
		if err == nil || !s.dialect.SingleWriter() || !isBusy(err) || i == tries {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
	}
}
