// Package endpoint is what a host embeds: a Service that stores named
// analytics endpoints and runs them with run-time variables, as
// database/sql is what a program uses to reach a database. A Service checks
// definitions on create and update and runs queries with every value
// bound; it reaches storage and query execution only through the interfaces
// of package endpoint/driver, which this package's reader does not need:
// pick implementations and give them to Config.
//
// # Building a Service
//
// New takes a Config: Endpoints (a driver.Store: memstore.New() in memory, or
// sqlstore.Store.Endpoints), Variables (a variable.Store) and Executor (a
// driver.Executor: sqlexec.New on database/sql, chexec.New on ClickHouse)
// are required; Access says what queries may read and scopes them to a
// project's rows (package sql/access). Every limit and period has a
// default (the Default constants); RunLog, ResultCache and Observer are
// optional (memstore.RunLog is the default log; memstore.NewResultCache a cache
// in memory; SlogObserver, MultiObserver). Package endpoint/httpapi serves
// the Service over HTTP; package endpoint/endpointtest gives a host's tests
// a ready one.
//
// # Using it
//
// Endpoints are created, changed and read with Create (a CreateRequest),
// Update (an UpdateRequest), Get, List, Delete, Versions and Version;
// variables with CreateVariable, UpdateVariable (a
// VariablePatch), GetVariable, ListVariables and DeleteVariable. Run runs
// a saved endpoint (a RunRequest, answered with a RunResult); Query runs
// an unsaved one (a QueryRequest) as an editor does; RunSchema describes
// an endpoint's variables. Materialize, RefreshStale, Schedule,
// RemoveOrphans and MaterializationStatus keep the stored tables of
// materialized endpoints; Logs pages through the run log; MintEmbedToken
// signs a token a customer's browser may run an endpoint with.
//
// The records a host reads are named here, so that a host imports this
// package only. Endpoint, Query, Version, Materialization and RunLogEntry
// are the API's views of the records stores keep in package
// endpoint/driver (which hold nothing of the API), declared here with the
// API's JSON and its errors (wire.go, records.go); VariableRef and
// MaterializationStatus, which the API shows as stores keep them, are
// aliases of driver's types (declared in this file).
//
// # Errors
//
// Every error of the Service is an *Error: its Status is the HTTP status
// (StatusOf decides it, in one place), Code a stable code (the Code
// constants), Detail the text for people, and the typed fields say which
// variable, value, table or limit it concerns. Compare with errors.Is
// against the sentinels (ErrInvalid, ErrNotFound, ErrConflict, ...).
//
// # Queries
//
// An endpoint's query is SQL with {variables.<code_name>} placeholders, or an
// insight query (TrendsQuery, RetentionQuery, LifecycleQuery; see package
// insight). An
// inline insight endpoint's variables are its breakdown properties, named by
// the property ("$browser"), and date_from and date_to. Unlike a SQL
// endpoint's, each may be omitted: an omitted breakdown variable leaves that
// breakdown unfiltered, so the run returns all its series, and an omitted
// date keeps the saved bound. Any other key is refused with
// "Unknown variable(s): ...". An insight run returns its whole result, in
// PostHog's shape, so limit and offset are refused for it.
package endpoint

import (
	"github.com/endpointkit/endpointkit/endpoint/driver"
)

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
