// Package insight runs the subset of PostHog's insight queries that endpoints
// serve: TrendsQuery and RetentionQuery over the events table.
//
// A query goes through four steps, each a pure function:
//
//   - Decode reads the JSON of a query strictly: anything outside the
//     supported subset (another kind, math, operator, a cohort or person
//     breakdown, a formula, ...) is an *Error naming the field, never
//     silently ignored.
//   - (*Query).Variables lists the run-time variables the query offers: one
//     per breakdown property, named by the property, plus date_from and
//     date_to unless the endpoint is materialized. (*Query).Apply turns
//     values into a new query: a breakdown value becomes an exact-match
//     property filter, a date replaces a bound of the date range.
//   - Compile turns a query into one SQL statement for a dialect of package
//     placeholder, with every value and every property key bound as an
//     argument. A trends breakdown keeps BreakdownLimit values per series
//     (DefaultBreakdownLimit, 25, unless the query's breakdown_limit says
//     otherwise) and sums the rest into one Other series, as PostHog does.
//   - (*Compiled).Shape turns the rows of that statement into the result
//     shapes PostHog's clients read.
//
// A LifecycleQuery follows the users of one event series, interval by
// interval: new (first seen in the interval: their first event of any
// kind, PostHog's person created_at), returning (active in this interval
// and the one before), resurrecting (active now, not in the one before,
// seen earlier) and dormant (active in the one before, not now; counted
// negative). It has no breakdowns, so its variables are date_from and
// date_to, and a materialized lifecycle takes none. The last interval
// counts whole, whatever instant date_to names, as PostHog's does.
//
// Materialize and ReadMaterialized do the same for a materialized endpoint:
// every series of the saved query is computed once into a table, and a run
// reads only the stored series that match its breakdown values.
package insight
