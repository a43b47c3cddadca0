package driver

// QueryError is an Executor's error about the query itself, as opposed
// to a failure of the database: the engine refused or failed the
// statement because of what it says (a syntax error, an unknown column,
// table or function, a type mismatch, a division by zero, a value it
// cannot convert). The Service answers it 400 with the engine's Message,
// which the query's author can act on; every other executor error is a
// 502 without the engine's words.
//
// Guidelines for implementers: return a *QueryError (wrapping the
// driver's error in Err) only when the engine's error code says the
// statement is at fault (SQLite's SQLITE_ERROR, PostgreSQL's SQLSTATE
// classes 42 and 22, MySQL's 42 and 22 except its access denials,
// ClickHouse's syntax, identifier, type and argument exceptions), never
// for a lost connection, a closed pool, a timeout, a cancelled context,
// a lock or a lack of resources. Message is the engine's text without the
// driver's decoration (severity, codes, version) and without a copy of
// the statement where the engine appends one. The Service still refuses
// to show a Message that names the library's own tables or the tenant
// scope's variable.
type QueryError struct {
	// Message is the engine's message about the query.
	Message string
	// Err is the executor's error, the driver's error in its chain.
	Err error
}

// Error returns the engine's message.
func (e *QueryError) Error() string { return "query error: " + e.Message }

// Unwrap returns the executor's error.
func (e *QueryError) Unwrap() error { return e.Err }
