// Package materialize decides whether an endpoint's SQL template can be
// pre-computed, and rewrites it into the two queries a materialized endpoint
// needs: the pre-compute query, run once per refresh into a stored table, and
// the read query, run per request against that table with the request's
// values bound.
//
// A query is materializable when every use of every variable is a top-level
// AND term of the outer WHERE of the form column OP variable (or variable OP
// column), OP one of =, >=, >, <, <=, each variable always against the same
// column, and the query's aggregates can be combined again after filtering
// (count, sum, total, min, max, avg). Analyze reports, per variable and for
// the query, a stable Code and a human reason when it is not.
//
// Reads are exact or refused: Plan.Read returns an error wrapping
// ErrRunInline whenever the stored table cannot give exactly what the
// inline query would (a date off its bucket's boundary, or > and <= against a
// bucketed date), and the caller runs the template inline instead.
//
// Reads do their work in SQL: Plan.Refresh indexes the stored columns the
// read compares with values (where the engine's index suits them), and
// Plan.ReadPage filters, orders and pages there, so that a run reads one
// page of one group however many groups the table holds.
//
// The package does no I/O. Queries are parsed with github.com/xwb1989/sqlparser
// (a MySQL grammar) and always printed back by this package's own printer for
// the target dialect; constructs the grammar would read differently from the
// target engine (double-quoted identifiers, || concatenation, backslash
// escapes in strings on engines without them, MySQL executable comments) make
// a query not materializable rather than silently changing its meaning.
package materialize
