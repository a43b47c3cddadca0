package sqlstore

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/sql/engine"
)

// settingsRow is the stored form of an endpoint's materialization settings
// (column materialization_settings). The freshness is kept in nanoseconds,
// exactly as a Go caller set it.
type settingsRow struct {
	DataFreshnessS     int64                    `json:"data_freshness_s,omitempty"`
	FreshnessNS        int64                    `json:"freshness_ns,omitempty"`
	Buckets            map[string]engine.Bucket `json:"buckets,omitempty"`
	TailColumn         string                   `json:"tail_column,omitempty"`
	OptionalBreakdowns []string                 `json:"optional_breakdowns,omitempty"`
}

// marshalSettings returns the materialization_settings text of e; NULL when
// it has none, as rows written before schema version 2 have.
func marshalSettings(e driver.Endpoint) (any, error) {
	r := settingsRow{
		DataFreshnessS:     int64(e.DataFreshnessSeconds),
		FreshnessNS:        int64(e.MaterializationFreshness),
		Buckets:            e.MaterializationBuckets,
		TailColumn:         e.MaterializationTailColumn,
		OptionalBreakdowns: e.OptionalBreakdowns,
	}
	if r.DataFreshnessS == 0 && r.FreshnessNS == 0 && len(r.Buckets) == 0 && r.TailColumn == "" && len(r.OptionalBreakdowns) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("materialization settings: %w", err)
	}
	return string(b), nil
}

func unmarshalSettings(text sql.NullString, e *driver.Endpoint) error {
	if !text.Valid || text.String == "" {
		return nil
	}
	var r settingsRow
	if err := json.Unmarshal([]byte(text.String), &r); err != nil {
		return err
	}
	e.DataFreshnessSeconds = int(r.DataFreshnessS)
	e.MaterializationFreshness = time.Duration(r.FreshnessNS)
	if len(r.Buckets) > 0 {
		e.MaterializationBuckets = r.Buckets
	}
	e.MaterializationTailColumn = r.TailColumn
	if len(r.OptionalBreakdowns) > 0 {
		e.OptionalBreakdowns = r.OptionalBreakdowns
	}
	return nil
}

// stateRow is the stored form of a driver.MaterializationState (column
// materialization_state), field for field.
type stateRow struct {
	Status        driver.MaterializationStatus `json:"status,omitempty"`
	Attempt       string                       `json:"attempt,omitempty"`
	Error         string                       `json:"error,omitempty"`
	Table         string                       `json:"table,omitempty"`
	Built         string                       `json:"built,omitempty"`
	At            *time.Time                   `json:"at,omitempty"`
	Rows          *int64                       `json:"rows,omitempty"`
	Bytes         *int64                       `json:"bytes,omitempty"`
	Took          time.Duration                `json:"took,omitempty"`
	FailedAt      *time.Time                   `json:"failed_at,omitempty"`
	SourceRows    *int64                       `json:"source_rows,omitempty"`
	EdgeIndex     string                       `json:"edge_index,omitempty"`
	EdgeIndexNote string                       `json:"edge_index_note,omitempty"`
}

// marshalState returns the materialization_state text of st; NULL for the
// zero state.
func marshalState(st driver.MaterializationState) (any, error) {
	if st == (driver.MaterializationState{}) {
		return nil, nil
	}
	st.At, st.FailedAt = utcPtr(st.At), utcPtr(st.FailedAt)
	b, err := json.Marshal(stateRow(st))
	if err != nil {
		return nil, fmt.Errorf("materialization state: %w", err)
	}
	return string(b), nil
}

func unmarshalState(text sql.NullString) (driver.MaterializationState, error) {
	var r stateRow
	if !text.Valid || text.String == "" {
		return driver.MaterializationState{}, nil
	}
	if err := json.Unmarshal([]byte(text.String), &r); err != nil {
		return driver.MaterializationState{}, err
	}
	st := driver.MaterializationState(r)
	st.At, st.FailedAt = utcPtr(st.At), utcPtr(st.FailedAt)
	return st, nil
}

// utcPtr returns a copy of *t in UTC, nil for nil.
func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
