package sqlstore

import (
	"strings"

	"github.com/endpointkit/endpointkit/sql/engine"
)

// liveNameIndex is the unique index that keeps the names of the live
// endpoints of a project apart; soft-deleted ones (deleted_at set) may
// share a name with each other and with a live one.
const liveNameIndex = "endpointkit_endpoints_live_name"

// endpointStateMigration is version 9: a soft-deleted endpoint keeps its
// own name, its state being deleted_at, where version 7 and before stored
// it under the name "<name>/<id>" to free the name. The names of the
// deleted rows are converted back, and the unique key on (project, name)
// becomes one among the live rows only: a partial unique index on
// PostgreSQL and SQLite; on MySQL, which has none, a generated column
// live_name (the name of a live row, NULL for a deleted one) with a unique
// index on (project, live_name), NULLs being distinct.
//
// On SQLite the table is made again without its UNIQUE constraint (which
// SQLite cannot drop), in one transaction: version 1's columns
// (endpointsColumnsV1), those versions 2 and 4 added, and no UNIQUE. On
// MySQL each statement commits at once; one that a migration cut short
// already applied fails again with an error that Migrate passes over (see
// isReapplied).
func endpointStateMigration(d engine.Store) []string {
	// The name before "/<id>" of a row of version 7 that was soft-deleted;
	// SUBSTR and LENGTH on every engine, the names being ASCII.
	unname := `UPDATE ` + endpointsTable + ` SET name = SUBSTR(name, 1, LENGTH(name) - LENGTH(id) - 1)
WHERE deleted_at IS NOT NULL AND LENGTH(name) > LENGTH(id) + 1
	AND SUBSTR(name, LENGTH(name) - LENGTH(id), 1) = '/' AND SUBSTR(name, LENGTH(name) - LENGTH(id) + 1) = id`
	partial := `CREATE UNIQUE INDEX IF NOT EXISTS ` + liveNameIndex + ` ON ` + endpointsTable + ` (project, name) WHERE deleted_at IS NULL`
	switch {
	case d.SingleWriter():
		const cols = `project, id, name, description, query_json, is_active, is_materialized, current_version, versions_count,
	created_at, updated_at, last_executed_at, materialization_settings, materialization_state, deleted_at`
		next := endpointsTable + "_v8"
		return []string{
			`DROP TABLE IF EXISTS ` + next,
			ddlOf(d)(`CREATE TABLE ` + next + ` (
` + endpointsColumnsV1 + `	materialization_settings TEXT_T NULL,
	materialization_state TEXT_T NULL,
	deleted_at TIME_T NULL,
	PRIMARY KEY (project, id)
)`),
			`INSERT INTO ` + next + ` (` + cols + `) SELECT ` + cols + ` FROM ` + endpointsTable,
			`DROP TABLE ` + endpointsTable,
			`ALTER TABLE ` + next + ` RENAME TO ` + endpointsTable,
			unname,
			partial,
		}
	case !d.PartialIndexes(): // MySQL
		return []string{
			d.AddColumn(endpointsTable, "live_name", d.KeyType()+" AS (CASE WHEN deleted_at IS NULL THEN name END) STORED"),
			`ALTER TABLE ` + endpointsTable + ` DROP INDEX endpointkit_endpoints_name`,
			unname,
			`CREATE UNIQUE INDEX ` + liveNameIndex + ` ON ` + endpointsTable + ` (project, live_name)`,
		}
	default: // PostgreSQL
		return []string{
			`ALTER TABLE ` + endpointsTable + ` DROP CONSTRAINT IF EXISTS endpointkit_endpoints_name`,
			unname,
			partial,
		}
	}
}

// isReapplied recognizes MySQL's errors of a DDL statement that a
// migration cut short already applied: an index dropped already (error
// 1091, "Can't DROP ...; check that column/key exists") or created
// already (error 1061, "Duplicate key name").
func isReapplied(err error) bool {
	if err == nil {
		return false
	}
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "error 1091") || strings.Contains(msg, "error 1061")
}
