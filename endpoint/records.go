package endpoint

import "github.com/endpointkit/endpointkit/endpoint/driver"

// The records a host reads and writes through the Service are those the
// stores keep; they are declared in package endpoint/driver, beside the
// interfaces that carry them, and named here so that a host needs no other
// import.
type (
	// Endpoint is a named, saved query of a project (driver.Endpoint).
	Endpoint = driver.Endpoint
	// VariableRef ties a SQL query to a data-management variable
	// (driver.VariableRef).
	VariableRef = driver.VariableRef
	// Version is an immutable snapshot of an endpoint's query
	// (driver.Version).
	Version = driver.Version
	// Materialization is an endpoint's materialization as API users see it,
	// the "materialization" object of the endpoint JSON
	// (driver.Materialization).
	Materialization = driver.Materialization
	// MaterializationStatus is the state of an endpoint's latest refresh
	// (driver.MaterializationStatus).
	MaterializationStatus = driver.MaterializationStatus
	// VariableVerdict says how the stored table of a SQL endpoint answers
	// one of its variables, or why it cannot (driver.VariableVerdict).
	VariableVerdict = driver.VariableVerdict
	// RunLogEntry is one run as the run log keeps it (driver.RunLogEntry);
	// Service.Logs returns them.
	RunLogEntry = driver.RunLogEntry
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
