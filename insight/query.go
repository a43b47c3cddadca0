package insight

import (
	"github.com/endpointkit/endpointkit/sql/tree"
	"slices"

	"github.com/endpointkit/endpointkit/sql/engine"
)

// DefaultBreakdownLimit is how many combinations of breakdown values a
// trends series keeps when its query names no breakdown_limit: PostHog's
// default (BREAKDOWN_VALUES_LIMIT).
const DefaultBreakdownLimit = 25

// The series that folds the breakdown values past the limit, as PostHog
// names it: its breakdown_value is OtherBreakdownValue (one per breakdown,
// in an array, with several breakdowns, as PostHog repeats it), and its
// label OtherLabel, which is what PostHog's clients display for it.
const (
	OtherBreakdownValue = "$$_posthog_breakdown_other_$$"
	OtherLabel          = "Other (i.e. all remaining values)"
)

// breakdownLimit is the limit that applies to q.
func (q *Query) breakdownLimit() int {
	if q.BreakdownLimit > 0 {
		return q.BreakdownLimit
	}
	return DefaultBreakdownLimit
}

// Kind is the kind of an insight query, spelled as in PostHog's schema.
type Kind string

// The supported kinds.
const (
	Trends    Kind = "TrendsQuery"
	Retention Kind = "RetentionQuery"
	Lifecycle Kind = "LifecycleQuery"
)

// Status is the lifecycle status of a user in one interval, as PostHog's
// LifecycleQuery names it.
type Status string

// The lifecycle statuses, in the order of a lifecycle result. A user's
// first seen is the start of the interval of their first event of any kind
// (PostHog's person created_at; here actors are distinct_ids).
const (
	// New: active in the interval in which they were first seen.
	New Status = "new"
	// Returning: active in the interval and in the one before.
	Returning Status = "returning"
	// Resurrecting: active in the interval, not in the one before, and
	// first seen before the interval.
	Resurrecting Status = "resurrecting"
	// Dormant: active in the interval before, not in this one. Dormant
	// users are counted negative, as PostHog counts them.
	Dormant Status = "dormant"
)

// statuses are the lifecycle statuses in result order; a status's index
// is its number in a lifecycle statement's rows.
var statuses = []Status{New, Returning, Resurrecting, Dormant}

// Statuses returns the lifecycle statuses in the order of a lifecycle
// result: New, Returning, Resurrecting, Dormant.
func Statuses() []Status { return slices.Clone(statuses) }

// Math is how a trends series aggregates the events of one interval.
type Math string

// The supported maths. Sum, Avg, Min and Max aggregate the numeric values of
// the series' MathProperty; events whose property is missing or not a JSON
// number do not contribute.
const (
	Total Math = "total" // number of events
	DAU   Math = "dau"   // number of distinct distinct_ids
	Sum   Math = "sum"
	Avg   Math = "avg"
	Min   Math = "min"
	Max   Math = "max"
)

var maths = []Math{Total, DAU, Sum, Avg, Min, Max}

// needsProperty reports whether m aggregates a property's values.
func (m Math) needsProperty() bool { return m == Sum || m == Avg || m == Min || m == Max }

// intervals are the buckets a trends or lifecycle query may group by
// (Interval of Query); Minute is not one of them.
var intervals = []engine.Bucket{engine.Hour, engine.Day, engine.Week, engine.Month}

// Operator is the comparison of a property filter.
type Operator string

// The supported operators. A property whose value is the empty string counts
// as not set, so that a breakdown value "" and is_not_set select the same
// events. IsNot and NotIContains also match events without the property.
const (
	Exact        Operator = "exact"  // equals the value, or one of a list of values
	IsNot        Operator = "is_not" // equals none of the values
	IContains    Operator = "icontains"
	NotIContains Operator = "not_icontains"
	GT           Operator = "gt" // numeric comparison; the property must be a JSON number
	LT           Operator = "lt"
	IsSet        Operator = "is_set"
	IsNotSet     Operator = "is_not_set"
)

var operators = []Operator{Exact, IsNot, IContains, NotIContains, GT, LT, IsSet, IsNotSet}

// RetentionType decides who forms a retention cohort.
type RetentionType string

// The supported retention types.
const (
	// FirstTime puts a user in the cohort of the period of their first
	// target event ever (among the events the query's filters keep).
	FirstTime RetentionType = "retention_first_time"
	// Recurring puts a user in the cohort of every period in which they did
	// the target event.
	Recurring RetentionType = "retention_recurring"
)

// Query is a decoded insight query. Decode is the only way to get a valid
// one; Apply returns modified copies and never changes its receiver.
type Query struct {
	Kind Kind
	// Series are the trends series, in order; empty for a retention query;
	// the one series whose users a lifecycle query follows.
	Series []Series
	// Interval is the trends or lifecycle interval, or the retention
	// period.
	Interval engine.Bucket
	// DateRange bounds the events considered.
	DateRange DateRange
	// Properties are filters AND-ed together.
	Properties []Property
	// Breakdowns split every series (or cohort) by the values of event
	// properties, in order.
	Breakdowns []Breakdown
	// BreakdownLimit is how many combinations of breakdown values each
	// trends series keeps (breakdownFilter.breakdown_limit); 0 means
	// DefaultBreakdownLimit. A host may set it on a decoded query that
	// names none, to apply its own default. See Compile for which values
	// are kept.
	BreakdownLimit int
	// HideOther drops the series that folds the values past the limit
	// (breakdownFilter.breakdown_hide_other_aggregation).
	HideOther bool
	// Retention holds what only a retention query has.
	Retention RetentionFilter
	// Tenant, when set, confines every read of the events table to the
	// rows of one tenant (and to the columns its scope lists): each is
	// written by package sql/tree's printer (tree.WriteTable), the one
	// place that confines a table reference, with the tenant bound. A
	// table with a tenant column and no tenant fails to compile rather
	// than be read whole. Decode never sets it: the host's service does,
	// from its access rules (see package sql/scope), so a query's author
	// cannot.
	Tenant *tree.Confinement
}

// Series is one EventsNode of a trends query.
type Series struct {
	// Event is the event name; empty means all events.
	Event        string
	Math         Math
	MathProperty string
}

// label is how PostHog names a series: by its event.
func (s Series) label() string {
	if s.Event == "" {
		return "All events"
	}
	return s.Event
}

// DateRange holds the bounds as written, in the date grammar a Date variable
// reads (variable.ParseDateExpr): a date ("2025-05-01"), a date and time in
// UTC ("2025-05-01 10:00:00", "2025-05-01T10:00:00") or with a zone
// ("2025-05-01T10:00:00+02:00"), or a date relative to the run's now ("-7d",
// "-24h", "-4w", "-3m", "-1y", "mStart", "-1mStart", "-1mEnd"). Empty From
// means the kind's default (7 days back for trends, TotalIntervals periods
// for retention); empty To means now. A To includes what it names: the whole
// day of a date or of a relative date in days, weeks, months or years, the
// hour of "-Nh", the second of a date and time.
type DateRange struct {
	From string
	To   string
}

// Property is one event property filter.
type Property struct {
	Key      string
	Operator Operator
	// Values are the values compared as text (Exact, IsNot: any of them;
	// IContains, NotIContains: the first).
	Values []string
	// Number is the bound of GT and LT.
	Number float64
}

// Breakdown is one breakdown property. Only event properties are supported.
type Breakdown struct {
	Property string
}

// RetentionFilter is the retention part of a RetentionQuery.
type RetentionFilter struct {
	TargetEvent    string
	ReturningEvent string
	Type           RetentionType
	// TotalIntervals is how many periods each cohort is followed for,
	// including its own.
	TotalIntervals int
}

// clone returns a deep copy of q, so that Apply leaves the saved query alone.
func (q *Query) clone() *Query {
	c := *q
	c.Series = slices.Clone(q.Series)
	c.Breakdowns = slices.Clone(q.Breakdowns)
	c.Properties = make([]Property, len(q.Properties))
	for i, p := range q.Properties {
		p.Values = slices.Clone(p.Values)
		c.Properties[i] = p
	}
	return &c
}
