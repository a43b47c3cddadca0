package driver

import (
	"encoding/json"
	"time"

	"github.com/endpointkit/endpointkit/sql/engine"
)

// Query kinds.
const (
	// KindSQL is a SQL query with {variables.x} placeholders (PostHog's HogQLQuery).
	KindSQL = "HogQLQuery"
	// KindTrends is an insight trends query.
	KindTrends = "TrendsQuery"
	// KindRetention is an insight retention query.
	KindRetention = "RetentionQuery"
	// KindLifecycle is an insight lifecycle query.
	KindLifecycle = "LifecycleQuery"
)

// Endpoint is a named, saved query of a project, as a Store keeps it.
type Endpoint struct {
	ID          string
	ProjectID   string
	Name        string
	Description string
	// Query is the current version's query.
	Query          Query
	IsActive       bool
	IsMaterialized bool
	// CurrentVersion is the number of the version Query is; VersionsCount
	// how many versions there are.
	CurrentVersion int
	VersionsCount  int
	CreatedAt      time.Time
	UpdatedAt      time.Time
	// LastExecutedAt is when a run last executed it (Store.MarkExecuted);
	// nil until one did.
	LastExecutedAt *time.Time
	// DeletedAt is when the endpoint was soft-deleted (nil while it lives):
	// the record's state, never encoded in its name. A soft-deleted endpoint
	// keeps its name, record, versions and run log for the Service's
	// retention period; names are unique among the live endpoints of a
	// project only, so that its name is free at once, and the same name
	// deleted twice is two records.
	DeletedAt *time.Time
	// DataFreshnessSeconds is how old the data of an answer may be: a
	// cached answer serves while its data is younger, and the stored table
	// of a materialized endpoint is rebuilt at this period. It is one of
	// endpoint.DataFreshnessValues(); 0 stands for
	// endpoint.DefaultDataFreshness.
	DataFreshnessSeconds int
	// MaterializationFreshness is how old the stored table of a
	// materialized endpoint may get before runs go inline and it is
	// rebuilt; 0 means the data freshness (DataFreshnessSeconds). Stores
	// keep it to the nanosecond.
	MaterializationFreshness time.Duration
	// MaterializationBuckets overrides, per Date variable of a SQL query
	// (by code name), the time bucket its column is stored at: minute,
	// hour, day (the default), week or month.
	MaterializationBuckets map[string]engine.Bucket
	// MaterializationTailColumn turns the live tail of a materialized SQL
	// endpoint on: it names the column of each source row's time. The
	// stored table keeps the rows up to its build instant, and every run
	// adds the newer rows from the source, so the answer is as fresh as
	// the inline one (endpoint_materialized_at still says how old the
	// stored part is). Rows that arrive later with a time at or before
	// the build instant show from the next refresh on. Index the column
	// in the source: the tail is read by it.
	MaterializationTailColumn string
	// OptionalBreakdowns lists the breakdown properties of a materialized
	// insight endpoint that a run may omit (all their series are
	// returned); any other breakdown variable is required.
	OptionalBreakdowns []string
	// MaterializationState is what stores keep of the materialization;
	// only Store.Create and Store.SetMaterialization write it.
	MaterializationState MaterializationState
}

// Query is an endpoint's query: SQL with {variables.x} placeholders
// (KindSQL), or an insight query kept whole as the JSON it was given.
type Query struct {
	// Kind is one of KindSQL, KindTrends, KindRetention, KindLifecycle.
	Kind string
	// SQL is the query text of a KindSQL query, in the executor's dialect.
	SQL string
	// Variables of a KindSQL query, keyed by variable id.
	Variables map[string]VariableRef
	// Insight is the raw JSON of an insight query (KindTrends, KindRetention,
	// KindLifecycle).
	Insight []byte
}

// VariableRef ties a SQL query to a data-management variable.
type VariableRef struct {
	VariableID string
	CodeName   string
	// Value is the JSON text of the editor's test value, nil when there is
	// none: a run of the unsaved query uses it, saved endpoints never run
	// with it. Stores keep its bytes as they are.
	Value json.RawMessage
}

// Version is an immutable snapshot of an endpoint's query. Every change of
// the query creates the next version; version numbers start at 1.
type Version struct {
	EndpointID string
	Number     int
	Query      Query
	CreatedAt  time.Time
	// Columns and Types are the columns of a KindSQL version's answer and
	// their database types, as the engine described the query when the
	// version was saved (Executor.Query of the version with LIMIT 0): every
	// answer of the version has exactly these, inline, from a stored table,
	// cached or with no rows. Both are nil for an insight version and for a
	// version saved before versions kept them, which the Service describes
	// at its first run and stores then (Store.SetVersionColumns). A type
	// the engine left unnamed (SQLite names no type for an expression) is
	// "" until an answer's value shows it.
	Columns, Types []string
}
