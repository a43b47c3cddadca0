// Package driver is what an implementer of storage or query execution for
// package endpoint writes against, as database/sql/driver is for
// database/sql: the interfaces a Service reaches the world through, the
// contract of each, and the records they exchange. A host that embeds the
// Service does not need this package: it picks implementations (package
// endpoint/sqlstore, endpoint/sqlexec, endpoint/chexec, endpoint/chdb, or
// the in-memory ones of package endpoint) and hands them to endpoint.Config.
//
// # What to implement
//
//   - Store keeps endpoints and their versions (endpoint.Config.Endpoints).
//     A Store may also implement Leaser, so that Services in several
//     processes sharing it never refresh one materialized endpoint at once.
//   - Executor runs SQL against the analytics database
//     (endpoint.Config.Executor): Query runs a sealed Statement within its
//     Bounds (rows, bytes, time), always; Exec runs statements that write,
//     in one transaction when asked.
//   - RunLog keeps a bounded record of runs (endpoint.Config.RunLog), and
//     ResultCache the encoded answers of runs (endpoint.Config.ResultCache).
//   - KeyStore keeps the API keys of machines, hashed
//     (apikey.Config.Store).
//
// Variables are kept by a variable.Store, whose contract is in package
// variable.
//
// # The records
//
// A Store keeps Endpoint values with their Version history; an Endpoint
// holds a Query (SQL with {variables.x} placeholders, or an insight query
// kept as the JSON bytes it was given) and a MaterializationState, which
// only the Service writes (through Store.Create and
// Store.SetMaterialization). An Executor answers with a Result; each Query
// is given Bounds. A RunLog keeps RunLogEntry values and pages through them
// with LogPage, Cursor and ParseCursor.
//
// The records are storage records: plain fields, no JSON tags, nothing
// computed. How a store keeps them is its own business (columns, JSON text
// of its own shape, anything), as long as it gives back exactly what it was
// given: every field, nil and empty told apart where the field's doc says
// so, byte slices (Query.Insight, VariableRef.Value) byte for byte. Choose
// a format that you can read in the next version of your store too; the
// HTTP API's JSON is package endpoint's and may change with it, so it is
// no format to keep records in.
//
// # Guidelines for every implementation
//
//   - Persist or run what you are given: do not validate or correct input
//     (the Service does), and never put a value into SQL text: values come
//     as bound arguments.
//   - Every method is safe for concurrent use and honours its context.
//   - Projects are isolated: nothing of one project is visible through
//     another's id.
//   - Values returned never alias values stored or given.
//   - Errors: ErrNotFound and ErrConflict (wrapped if you add context) where
//     the contract names them, ErrResultTooLarge and ErrBadCursor likewise;
//     any other error is a failing backend, which the Service logs nothing
//     of and shows as a generic 502.
//
// # Conformance suites
//
// Each interface's contract is also written as tests, which every
// implementation runs from its own: package endpoint/storetest (Run for a
// Store, RunLeaser, RunResultCache, RunRunLog), package
// endpoint/executortest (Run, RunWith for an Executor) and
// variable/storetest for a variable.Store.
package driver
