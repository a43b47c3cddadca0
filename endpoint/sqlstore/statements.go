package sqlstore

import "github.com/endpointkit/endpointkit/sql/engine"

// statements holds every statement of the store, with the dialect's bind
// markers, built once by New.
type statements struct {
	lock string

	varInsert, varUpdate, varDelete            string
	varGet, varList, varExists, varCodeNameUse string
	varLock                                    string
	// varGetMany is the prefix of a SELECT ... WHERE id IN (...); the
	// markers of the list are appended per call.
	varGetMany string

	epInsert, epUpdate, epDeleteVersions, epDelete string
	epGet, epList, epExists, epNameUse             string
	epCurrentVersion, epMarkExecuted               string
	epSetMaterialization, epListMaterialized       string
	verInsert, verExists, verGet, verList          string
	verSetColumns                                  string
}

const (
	varColumns = `id, name, code_name, var_type, default_value, list_values, is_multi`
	epColumns  = `id, name, description, query_json, is_active, is_materialized, current_version, versions_count, created_at, updated_at, last_executed_at, materialization_settings, deleted_at, materialization_state`
	verColumns = `endpoint_id, version, query_json, created_at, columns_json`
)

func newStatements(d engine.Store) statements {
	b := func(q string) string { return rebind(d, q) }
	return statements{
		// A write that changes nothing; see Store.inTx.
		lock: `UPDATE ` + schemaTable + ` SET version = version WHERE version < 0`,

		varInsert: b(`INSERT INTO ` + variablesTable + ` (project, ` + varColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`),
		varUpdate: b(`UPDATE ` + variablesTable + ` SET name = ?, code_name = ?, var_type = ?, default_value = ?, list_values = ?, is_multi = ? WHERE project = ? AND id = ?`),
		varDelete: b(`DELETE FROM ` + variablesTable + ` WHERE project = ? AND id = ?`),
		varGet:    b(`SELECT ` + varColumns + ` FROM ` + variablesTable + ` WHERE project = ? AND id = ?`),
		// Ordered by code_name, then id, as variable.Store's List requires;
		varList:        b(`SELECT ` + varColumns + ` FROM ` + variablesTable + ` WHERE project = ? ORDER BY ` + d.Bytewise("code_name") + `, ` + d.Bytewise("id")),
		varExists:      b(`SELECT 1 FROM ` + variablesTable + ` WHERE project = ? AND id = ?`),
		varLock:        b(`SELECT 1 FROM ` + variablesTable + ` WHERE project = ? AND id = ?` + d.ForUpdate()),
		varCodeNameUse: b(`SELECT 1 FROM ` + variablesTable + ` WHERE project = ? AND code_name = ? AND id <> ?`),
		varGetMany:     `SELECT ` + varColumns + ` FROM ` + variablesTable + ` WHERE project = ? AND id IN (`,

		epInsert:         b(`INSERT INTO ` + endpointsTable + ` (project, ` + epColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		epUpdate:         b(`UPDATE ` + endpointsTable + ` SET name = ?, description = ?, query_json = ?, is_active = ?, is_materialized = ?, current_version = ?, versions_count = ?, created_at = ?, updated_at = ?, last_executed_at = ?, materialization_settings = ?, deleted_at = ? WHERE project = ? AND id = ?`),
		epDeleteVersions: b(`DELETE FROM ` + versionsTable + ` WHERE project = ? AND endpoint_id = ?`),
		epDelete:         b(`DELETE FROM ` + endpointsTable + ` WHERE project = ? AND id = ?`),
		epGet:            b(`SELECT ` + epColumns + ` FROM ` + endpointsTable + ` WHERE project = ? AND ` + liveName(d)),
		epList:           b(`SELECT ` + epColumns + ` FROM ` + endpointsTable + ` WHERE project = ? ORDER BY ` + d.Bytewise("name") + `, ` + d.Bytewise("id")),
		epExists:         b(`SELECT 1 FROM ` + endpointsTable + ` WHERE project = ? AND id = ?`),
		epCurrentVersion: b(`SELECT current_version FROM ` + endpointsTable + ` WHERE project = ? AND id = ?` + d.ForUpdate()),
		// The fixed-width time text compares in time order.
		epMarkExecuted: b(`UPDATE ` + endpointsTable + ` SET last_executed_at = ? WHERE project = ? AND id = ? AND (last_executed_at IS NULL OR ` + d.Bytewise("last_executed_at") + ` < ?)`),
		// Only SetMaterialization writes the state, so that a refresh and an
		// edit never overwrite each other.
		epSetMaterialization: b(`UPDATE ` + endpointsTable + ` SET materialization_state = ? WHERE project = ? AND id = ?`),
		epListMaterialized:   b(`SELECT project, ` + epColumns + ` FROM ` + endpointsTable + ` WHERE is_materialized = 1 ORDER BY ` + d.Bytewise("project") + `, ` + d.Bytewise("name") + `, ` + d.Bytewise("id")),
		// Names are unique among the live endpoints of a project only.
		epNameUse: b(`SELECT 1 FROM ` + endpointsTable + ` WHERE project = ? AND ` + liveName(d) + ` AND id <> ?`),

		verInsert: b(`INSERT INTO ` + versionsTable + ` (project, ` + verColumns + `) VALUES (?, ?, ?, ?, ?, ?)`),
		verExists: b(`SELECT 1 FROM ` + versionsTable + ` WHERE project = ? AND endpoint_id = ? AND version = ?`),
		verGet:    b(`SELECT ` + verColumns + ` FROM ` + versionsTable + ` WHERE project = ? AND endpoint_id = ? AND version = ?`),
		verList:   b(`SELECT ` + verColumns + ` FROM ` + versionsTable + ` WHERE project = ? AND endpoint_id = ? ORDER BY version`),
		// Only the columns: the version's query never changes.
		verSetColumns: b(`UPDATE ` + versionsTable + ` SET columns_json = ? WHERE project = ? AND endpoint_id = ? AND version = ?`),
	}
}

// liveName is the condition "a live endpoint named ?" as the engine's
// unique index of live names reads it (see endpointStateMigration).
func liveName(d engine.Store) string {
	if !d.PartialIndexes() {
		return `live_name = ?`
	}
	return `name = ? AND deleted_at IS NULL`
}
