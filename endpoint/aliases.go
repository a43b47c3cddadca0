package endpoint

import "github.com/endpointkit/endpointkit/endpoint/driver"

// The names a host needs beside the wire types below, declared in package
// endpoint/driver with the records the stores keep.
type (
	// VariableRef ties a SQL query to a data-management variable
	// (driver.VariableRef).
	VariableRef = driver.VariableRef
	// MaterializationStatus is the state of an endpoint's latest refresh
	// (driver.MaterializationStatus).
	MaterializationStatus = driver.MaterializationStatus
)

// Query kinds.
const (
	// KindSQL is a SQL query with {variables.x} placeholders (PostHog's
	// HogQLQuery).
	KindSQL = driver.KindSQL
	// KindTrends is an insight trends query.
	KindTrends = driver.KindTrends
	// KindRetention is an insight retention query.
	KindRetention = driver.KindRetention
	// KindLifecycle is an insight lifecycle query.
	KindLifecycle = driver.KindLifecycle
)

// The statuses of a materialization. Pending: no refresh of the current
// version and settings has run yet. Running: a refresh is under way.
// Completed: the latest refresh built the stored table. Failed: the latest
// refresh failed; a table an earlier refresh built keeps serving while it
// is fresh. Ready is how MaterializationStatus reports Completed.
const (
	StatusPending   = driver.StatusPending
	StatusRunning   = driver.StatusRunning
	StatusCompleted = driver.StatusCompleted
	StatusFailed    = driver.StatusFailed
)
