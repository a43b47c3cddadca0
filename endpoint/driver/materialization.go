package driver

import (
	"strconv"
	"time"
)

// MaterializationStatus is the state of an endpoint's latest refresh.
type MaterializationStatus string

// The statuses. Pending: no refresh of the current version and settings
// has run yet. Running: a refresh is under way. Completed: the latest
// refresh built the stored table. Failed: the latest refresh failed; a
// table an earlier refresh built keeps serving while it is fresh.
const (
	StatusPending   MaterializationStatus = "pending"
	StatusRunning   MaterializationStatus = "running"
	StatusCompleted MaterializationStatus = "completed"
	StatusFailed    MaterializationStatus = "failed"
)

// Materialization is an endpoint's materialization as API users see it (the
// "materialization" object of the endpoint JSON). The Service computes it
// from the stored MaterializationState and the analysis of the current
// version; stores do not keep it.
type Materialization struct {
	// CanMaterialize and Reason are the verdict on the current version:
	// Reason says why it cannot be materialized (empty when it can).
	CanMaterialize bool   `json:"can_materialize"`
	Reason         string `json:"reason"`
	// Status is empty for an endpoint that is not materialized.
	Status MaterializationStatus `json:"status,omitempty"`
	// LastMaterializedAt is when the stored table that serves the current
	// version and settings was built; nil when there is none.
	LastMaterializedAt *time.Time `json:"last_materialized_at"`
	// Error says why the latest refresh failed, without engine internals.
	Error string `json:"error"`
	// ReadError says why the latest read of the stored table that serves
	// now failed on the database (the run then went inline), and
	// ReadFailedAt when; empty and nil when no read of it failed.
	ReadError    string     `json:"read_error,omitempty"`
	ReadFailedAt *time.Time `json:"read_failed_at,omitempty"`
	// Variables say, per variable of a SQL endpoint, how the stored table
	// answers it or why it cannot.
	Variables []VariableVerdict `json:"variables,omitempty"`
}

// MaterializationState is what a Store keeps of an endpoint's
// materialization, written by the Service through Store.SetMaterialization
// only, never by Update, so that a refresh and an edit do not overwrite
// each other. Keys identify what a table is built from (version and
// buckets): a table serves only while its key is the current one.
type MaterializationState struct {
	// Status, Attempt and Error are about the latest refresh: Attempt is
	// the key it built.
	Status  MaterializationStatus `json:"status,omitempty"`
	Attempt string                `json:"attempt,omitempty"`
	Error   string                `json:"error,omitempty"`
	// Table names the stored table of the last completed refresh, Built is
	// its key and At the instant its data is of.
	Table string     `json:"table,omitempty"`
	Built string     `json:"built,omitempty"`
	At    *time.Time `json:"at,omitempty"`
	// Rows is the number of rows of Table, nil when it was not counted;
	// Took is how long the refresh that built it ran.
	Rows *int64        `json:"rows,omitempty"`
	Took time.Duration `json:"took,omitempty"`
	// FailedAt is when the latest refresh failed; nil unless Status is
	// failed. The scheduler waits a while after it before trying again.
	FailedAt *time.Time `json:"failed_at,omitempty"`
}

// Seconds is a period that JSON writes as a whole number of seconds.
type Seconds time.Duration

// MarshalJSON writes whole seconds.
func (s Seconds) MarshalJSON() ([]byte, error) {
	return strconv.AppendInt(nil, int64(time.Duration(s)/time.Second), 10), nil
}

// VariableVerdict says how the stored table of a SQL endpoint answers one
// of its variables, or why it cannot.
type VariableVerdict struct {
	// CodeName is the variable's code name.
	CodeName string `json:"code_name"`
	// As is materialize.Kind's value: "key" (compared with = to a column or
	// a row expression, stored as a key), "list" (expr IN a multi-valued
	// list), "range" (>=, >, <, <=); empty when it cannot be materialized.
	As string `json:"as,omitempty"`
	// Expression is the column or row expression the variable is
	// compared with, as the analysis prints it.
	Expression string `json:"expression,omitempty"`
	// Bucket is the time bucket a Date range is stored by (minute, hour,
	// day, week, month); empty when the values are stored as they are.
	Bucket string `json:"bucket,omitempty"`
	// Code and Reason say why the variable cannot be materialized: Code is
	// materialize.Code's stable value, Reason for people.
	Code   string `json:"code,omitempty"`
	Reason string `json:"reason,omitempty"`
}
