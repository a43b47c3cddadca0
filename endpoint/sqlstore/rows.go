package sqlstore

import (
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

// scanner is what *sql.Row and *sql.Rows have in common.
type scanner interface {
	Scan(dest ...any) error
}

// endpointRow returns the values of epColumns for e.
func endpointRow(e driver.Endpoint) ([]any, error) {
	q, err := marshalQuery(e.Query)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: endpoint %q: %w", e.Name, err)
	}
	created, err := formatTime(e.CreatedAt)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: endpoint %q: created_at: %w", e.Name, err)
	}
	updated, err := formatTime(e.UpdatedAt)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: endpoint %q: updated_at: %w", e.Name, err)
	}
	executed, err := formatNullTime(e.LastExecutedAt)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: endpoint %q: last_executed_at: %w", e.Name, err)
	}
	deleted, err := formatNullTime(e.DeletedAt)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: endpoint %q: deleted_at: %w", e.Name, err)
	}
	settings, err := marshalSettings(e)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: endpoint %q: %w", e.Name, err)
	}
	state, err := marshalState(e.MaterializationState)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: endpoint %q: %w", e.Name, err)
	}
	return []any{
		e.ID, e.Name, e.Description, q,
		boolInt(e.IsActive), boolInt(e.IsMaterialized),
		int64(e.CurrentVersion), int64(e.VersionsCount),
		created, updated, executed, settings, deleted, state,
	}, nil
}

// scanEndpoint reads a row of epColumns, after the columns of lead if any.
// The caller sets ProjectID.
func scanEndpoint(r scanner, lead ...any) (driver.Endpoint, error) {
	var (
		e                       driver.Endpoint
		query, created, updated string
		active, materialized    int64
		current, count          int64
		executed, deleted       sql.NullString
		settings, state         sql.NullString
	)
	err := r.Scan(append(lead, &e.ID, &e.Name, &e.Description, &query, &active, &materialized,
		&current, &count, &created, &updated, &executed, &settings, &deleted, &state)...)
	if err != nil {
		return driver.Endpoint{}, err
	}
	if e.Query, err = unmarshalQuery(query); err != nil {
		return driver.Endpoint{}, fmt.Errorf("endpoint %q: %w", e.Name, err)
	}
	e.IsActive, e.IsMaterialized = active != 0, materialized != 0
	e.CurrentVersion, e.VersionsCount = int(current), int(count)
	if e.CreatedAt, err = parseTime(created); err != nil {
		return driver.Endpoint{}, fmt.Errorf("endpoint %q: created_at: %w", e.Name, err)
	}
	if e.UpdatedAt, err = parseTime(updated); err != nil {
		return driver.Endpoint{}, fmt.Errorf("endpoint %q: updated_at: %w", e.Name, err)
	}
	if e.LastExecutedAt, err = parseNullTime(executed); err != nil {
		return driver.Endpoint{}, fmt.Errorf("endpoint %q: last_executed_at: %w", e.Name, err)
	}
	if e.DeletedAt, err = parseNullTime(deleted); err != nil {
		return driver.Endpoint{}, fmt.Errorf("endpoint %q: deleted_at: %w", e.Name, err)
	}
	if err := unmarshalSettings(settings, &e); err != nil {
		return driver.Endpoint{}, fmt.Errorf("endpoint %q: materialization_settings: %w", e.Name, err)
	}
	if e.MaterializationState, err = unmarshalState(state); err != nil {
		return driver.Endpoint{}, fmt.Errorf("endpoint %q: materialization_state: %w", e.Name, err)
	}
	return e, nil
}

// versionRow returns the values of (project, verColumns) for v, a version
// of the endpoint with id.
func versionRow(project, id string, v driver.Version) ([]any, error) {
	q, err := marshalQuery(v.Query)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: version %d of endpoint %q: %w", v.Number, id, err)
	}
	created, err := formatTime(v.CreatedAt)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: version %d of endpoint %q: created_at: %w", v.Number, id, err)
	}
	cols, err := marshalColumns(v.Columns, v.Types)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: version %d of endpoint %q: %w", v.Number, id, err)
	}
	return []any{project, id, int64(v.Number), q, created, cols}, nil
}

// versionColumns is the JSON text of a version's columns_json.
type versionColumns struct {
	Columns []string `json:"columns"`
	Types   []string `json:"types"`
}

// marshalColumns is the columns_json of a version with columns and types:
// NULL when it has none (an insight version, or one not described yet).
func marshalColumns(columns, types []string) (any, error) {
	if columns == nil && types == nil {
		return nil, nil
	}
	if len(columns) != len(types) {
		return nil, fmt.Errorf("%d columns with %d types", len(columns), len(types))
	}
	b, err := json.Marshal(versionColumns{Columns: nonNilStrings(columns), Types: nonNilStrings(types)})
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// scanVersion reads a row of verColumns.
func scanVersion(r scanner) (driver.Version, error) {
	var (
		v              driver.Version
		n              int64
		query, created string
		cols           sql.NullString
	)
	if err := r.Scan(&v.EndpointID, &n, &query, &created, &cols); err != nil {
		return driver.Version{}, err
	}
	if cols.Valid {
		var vc versionColumns
		if err := json.Unmarshal([]byte(cols.String), &vc); err != nil {
			return driver.Version{}, fmt.Errorf("version %d: columns_json: %w", n, err)
		}
		v.Columns, v.Types = vc.Columns, vc.Types
	}
	v.Number = int(n)
	var err error
	if v.Query, err = unmarshalQuery(query); err != nil {
		return driver.Version{}, fmt.Errorf("version %d: %w", n, err)
	}
	if v.CreatedAt, err = parseTime(created); err != nil {
		return driver.Version{}, fmt.Errorf("version %d: created_at: %w", n, err)
	}
	return v, nil
}
