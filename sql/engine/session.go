package engine

// Session is implemented by an engine whose SQL assumes settings of the
// connection's session that a server may default otherwise. PostgreSQL and
// MySQL read a timestamp with a time zone (timestamptz, TIMESTAMP) and
// text compared with one in the session's time zone: the library's SQL
// compares and buckets in UTC, so their sessions must be in UTC, or ranges
// and buckets silently move by the zone's offset.
//
// An executor runs the statements once on each new connection before it
// serves a query (sqlexec.Open and sqlexec.Connector do). Engines without
// the interface need nothing.
type Session interface {
	// Session returns the statements, in order, that put a new connection
	// in the session the engine's SQL assumes.
	Session() []string
}
