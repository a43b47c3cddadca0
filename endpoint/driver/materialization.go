package driver

import (
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

// MaterializationState is what a Store keeps of an endpoint's
// materialization, written by the Service through Store.SetMaterialization
// only, never by Update, so that a refresh and an edit do not overwrite
// each other. Keys identify what a table is built from (version and
// buckets): a table serves only while its key is the current one.
type MaterializationState struct {
	// Status, Attempt and Error are about the latest refresh: Attempt is
	// the key it built.
	Status  MaterializationStatus
	Attempt string
	Error   string
	// Table names the stored table of the last completed refresh, Built is
	// its key and At the instant its data is of.
	Table string
	Built string
	At    *time.Time
	// Rows is the number of rows of Table, nil when it was not counted;
	// Bytes what it takes in the database, nil when it was not measured;
	// Took is how long the refresh that built it ran.
	Rows  *int64
	Bytes *int64
	Took  time.Duration
	// FailedAt is when the latest refresh failed; nil unless Status is
	// failed. The scheduler waits a while after it before trying again.
	FailedAt *time.Time
	// SourceRows is how many source rows the pre-compute query read when
	// the stored table of this version was first built, nil when not
	// measured (an insight's table, or a count that failed): Rows over it
	// tells how much the stored table saves.
	SourceRows *int64
	// EdgeIndex is what the latest completed refresh found of the reads of
	// the source that runs make beside the stored table (the partial
	// buckets of a range, a live tail), asking the engine's query plan:
	// "used" (each reads through an index), "not_used" (one scans the
	// table), "not_checked" (the engine's plans are not read) or
	// "check_failed"; "" when runs read no source beside the table.
	// EdgeIndexNote says which read and why, "" when each uses an index.
	EdgeIndex     string
	EdgeIndexNote string
}
