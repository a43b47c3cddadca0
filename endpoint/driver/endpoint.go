package driver

import (
	"encoding/json"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/engine"
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

// Endpoint is a named, saved query of a project.
type Endpoint struct {
	ID             string     `json:"id"`
	ProjectID      string     `json:"-"`
	Name           string     `json:"name"`
	Description    string     `json:"description"`
	Query          Query      `json:"query"`
	IsActive       bool       `json:"is_active"`
	IsMaterialized bool       `json:"is_materialized"`
	CurrentVersion int        `json:"current_version"`
	VersionsCount  int        `json:"versions_count"`
	CreatedAt      time.Time  `json:"created_at"`
	UpdatedAt      time.Time  `json:"updated_at"`
	LastExecutedAt *time.Time `json:"last_executed_at"`
	// DataFreshnessSeconds is how old the data of an answer may be: a
	// cached answer serves while its data is younger, and the stored table
	// of a materialized endpoint is rebuilt at this period. It is one of
	// endpoint.DataFreshnessValues; 0 stands for
	// endpoint.DefaultDataFreshness.
	DataFreshnessSeconds int `json:"data_freshness_seconds"`
	// MaterializationFreshness is how old the stored table of a
	// materialized endpoint may get before runs go inline and it is
	// rebuilt; 0 means the data freshness (DataFreshnessSeconds), which is
	// what the Service shows then.
	MaterializationFreshness Seconds `json:"materialization_freshness"`
	// MaterializationBuckets overrides, per Date variable of a SQL query
	// (by code name), the time bucket its column is stored at: minute,
	// hour, day (the default), week or month.
	MaterializationBuckets map[string]engine.Bucket `json:"materialization_buckets,omitempty"`
	// MaterializationTailColumn turns the live tail of a materialized SQL
	// endpoint on: it names the column of each source row's time. The
	// stored table keeps the rows up to its build instant, and every run
	// adds the newer rows from the source, so the answer is as fresh as
	// the inline one (endpoint_materialized_at still says how old the
	// stored part is). Rows that arrive later with a time at or before
	// the build instant show from the next refresh on. Index the column
	// in the source: the tail is read by it.
	MaterializationTailColumn string `json:"materialization_tail_column,omitempty"`
	// OptionalBreakdowns lists the breakdown properties of a materialized
	// insight endpoint that a run may omit (all their series are
	// returned); any other breakdown variable is required.
	OptionalBreakdowns []string `json:"optional_breakdowns,omitempty"`
	// Materialization is computed by the Service (see Materialization);
	// stores neither keep nor read it.
	Materialization Materialization `json:"materialization"`
	// MaterializationState is what stores keep of the materialization;
	// only Store.Create and Store.SetMaterialization write it.
	MaterializationState MaterializationState `json:"-"`
}

// Query is an endpoint's query as it travels on the wire: PostHog-compatible
// JSON whose "kind" says which fields apply.
type Query struct {
	Kind string `json:"kind"`
	// SQL is the query text of a KindSQL query, in the executor's dialect.
	SQL string `json:"query,omitempty"`
	// Variables of a KindSQL query, keyed by variable id.
	Variables map[string]VariableRef `json:"variables,omitempty"`
	// Insight is the raw JSON of an insight query (KindTrends, KindRetention,
	// KindLifecycle).
	Insight []byte `json:"-"`
}

// VariableRef ties a SQL query to a data-management variable.
type VariableRef struct {
	VariableID string `json:"variableId"`
	CodeName   string `json:"code_name"`
	// Value is the JSON text of the editor's test value, nil when there is
	// none: a run of the unsaved query uses it, saved endpoints never run
	// with it. Stores keep its bytes as they are.
	Value json.RawMessage `json:"value,omitempty"`
}

// Version is an immutable snapshot of an endpoint's query. Every change of
// the query creates the next version; version numbers start at 1.
type Version struct {
	EndpointID string    `json:"-"`
	Number     int       `json:"version"`
	Query      Query     `json:"query"`
	CreatedAt  time.Time `json:"created_at"`
}
