// Package materialize decides whether an endpoint's SQL template can be
// pre-computed, and rewrites it into the two queries a materialized endpoint
// needs: the pre-compute query, run once per refresh into a stored table, and
// the read query, run per request against that table with the request's
// values bound.
//
// A query is materializable when every use of every variable is a top-level
// AND term of the outer WHERE of the form expr OP variable (or variable OP
// expr), OP one of =, !=, >=, >, <, <=, or expr [NOT] IN variable (a
// multi-valued list), or expr [NOT] LIKE variable, expr [NOT] ILIKE
// variable, with or without a constant ESCAPE (the read applies the
// operator to the stored key), or is in the SELECT list of any query or
// the HAVING of an aggregating one, outside aggregates (bound in the read
// query, see atread.go); expr is a column
// or a deterministic expression over one row's
// columns (a JSON property, lower(), coalesce, a cast, ...), stored as a key
// of the table; each variable is always compared with the same expr; and the
// query's aggregates can be combined again after filtering (count, sum,
// total, min, max, avg, and count, sum, avg of DISTINCT x, for which x is
// kept in the stored grain). A sum or avg whose stored parts a read adds
// up again (over a range, a list or a live tail) must add up values known
// to be integers or decimals: floating-point addition in another order
// changes the last digits (see exactsum.go). Analyze reports, per
// variable and for the query, a stable Code and a human reason when it
// is not.
//
// Window functions materialize where a read computes them over the rows
// or groups the stored table answers exactly (see windowgroups.go), and
// in a subquery with no variable beneath it, whose rows no value selects
// (without a live tail, whose newer rows would change them).
//
// Reads are exact: a date range whose ends are not on bucket boundaries
// reads the whole buckets from the stored table and computes the partial
// ones at its edges from the source data, merged in SQL (Plan.Read).
//
// A live tail (Options.TailColumn) makes a stored table as fresh as the
// source: the table keeps the rows up to its build instant, and each read
// adds the newer rows from the source, merged the same way.
//
// Where a group key determines the bucket of every range variable (the
// query groups by the day, and the range is bucketed by day or month) and
// the others are compared with = (none under an OR), each group of the
// query lies in one bucket: the stored groups are read as the table's
// index holds them, a DISTINCT over the one grain column is counted
// without DISTINCT, and the partial buckets and the tail are groups of
// their own, merged after them (see onebucket.go). Such a query with a DISTINCT aggregate stores
// its groups summarized, each aggregate computed whole over its group,
// one row per group and value of the variables instead of one per distinct
// value too; with a live tail, where the range's column is bucketed by the
// day or finer, a read then takes the source's rows from the build
// instant's bucket on (see summary.go).
//
// Reads do their work in SQL: Plan.Refresh indexes the stored columns the
// read compares with values (where the engine's index suits them), and
// Plan.ReadPage filters, orders and pages there, so that a run reads one
// page of one group however many groups the table holds.
//
// The package does no I/O. Queries are read by their engine's lexical rules
// into the project's one syntax tree (package sql/tree), which reads each
// engine's own syntax: its literals, casts (CAST(x AS double precision),
// x::T, CAST(x, 'T')), extract(unit FROM x), ILIKE, ->, ->> and ||. The
// parts of the statements a plan runs are printed from that tree for the
// target dialect by the tree's one printer, in its normal form
// (tree.Normal), every name quoted for the engine and every literal and
// cast type byte for byte as the user wrote it. Constructs a plan would carry over differently from the engine
// (MySQL executable comments, bind markers, comments one engine ends
// elsewhere) make a query not materializable rather than silently
// changing its meaning.
package materialize
