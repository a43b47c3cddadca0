package sqlstore

import "github.com/endpointkit/endpointkit/sql/engine"

// runLogClusteredMigration is version 6: on SQLite, the run log becomes a
// WITHOUT ROWID table, stored in the order of its primary key (project,
// endpoint_id, at_ns, seq), so that appending or pruning an entry changes
// one b-tree instead of a table and its key's index, and List reads the
// entries in place. The rows are copied over as they are. SQLite's DDL is
// transactional: a migration cut short leaves the version 5 table as it
// was, and runs again from the start. InnoDB (MySQL) already stores a
// table in the order of its primary key, and PostgreSQL has no such
// storage; there the version changes nothing.
func runLogClusteredMigration(d engine.Store) []string {
	if !d.SingleWriter() {
		return nil
	}
	key, text := d.KeyType(), d.LongTextType()
	return rebuildRunLog("_v6", `project, endpoint_id, at_ns, seq, entry, key_id`, `
	project `+key+` NOT NULL,
	endpoint_id `+key+` NOT NULL,
	at_ns BIGINT NOT NULL,
	seq BIGINT NOT NULL,
	entry `+text+` NOT NULL,
	key_id `+key+` NULL,
`)
}

// rebuildRunLog is the statements that make the SQLite run log again as a
// WITHOUT ROWID table of columns (each line ending with a comma) keyed by
// (project, endpoint_id, at_ns, seq), built under the name run log +
// suffix, and copy cols of every row over. SQLite's DDL is transactional:
// cut short, they leave the table as it was, and run again from the start.
func rebuildRunLog(suffix, cols, columns string) []string {
	next := runLogTable + suffix
	return []string{
		`DROP TABLE IF EXISTS ` + next,
		`CREATE TABLE ` + next + ` (` + columns + `	PRIMARY KEY (project, endpoint_id, at_ns, seq)
) WITHOUT ROWID`,
		`INSERT INTO ` + next + ` (` + cols + `) SELECT ` + cols + ` FROM ` + runLogTable,
		`DROP TABLE ` + runLogTable,
		`ALTER TABLE ` + next + ` RENAME TO ` + runLogTable,
	}
}

// runLogBlocksMigration is version 7: a run log row holds the entries of
// one endpoint that ran with one key (key_id) from one AppendBatch (a
// block, see runlog_block.go), the row's key being its newest entry's;
// the new columns entries, oldest_at_ns and oldest_seq say how many
// entries it holds and the oldest one's key. The rows of version 6 have
// them NULL, and are read as blocks of one entry as they are: no row is
// rewritten.
//
// On SQLite the table is made again (its rows copied, in one transaction
// as version 6 was) with the column entry last, so that a read of the
// blocks' keys and counts (the count bound's pruning) never reads the
// pages that a long entry overflows into. Elsewhere the columns are added,
// one statement each, which the store runs again when a migration cut
// short left some added (MySQL commits each at once).
func runLogBlocksMigration(d engine.Store) []string {
	if !d.SingleWriter() {
		return []string{
			d.AddColumn(runLogTable, "entries", "BIGINT NULL"),
			d.AddColumn(runLogTable, "oldest_at_ns", "BIGINT NULL"),
			d.AddColumn(runLogTable, "oldest_seq", "BIGINT NULL"),
		}
	}
	key, text := d.KeyType(), d.LongTextType()
	return rebuildRunLog("_v7", `project, endpoint_id, at_ns, seq, key_id, entry`, `
	project `+key+` NOT NULL,
	endpoint_id `+key+` NOT NULL,
	at_ns BIGINT NOT NULL,
	seq BIGINT NOT NULL,
	entries BIGINT NULL,
	oldest_at_ns BIGINT NULL,
	oldest_seq BIGINT NULL,
	key_id `+key+` NULL,
	entry `+text+` NOT NULL,
`)
}
