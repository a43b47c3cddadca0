package engine

// Expander is implemented by an engine value some of whose statements must
// run as several: ClickHouse on a cluster (ClickHouseCluster), where a
// stored table is a Replicated table on every shard behind a Distributed
// table, so that creating, filling or dropping one takes more statements
// than the Engine methods return.
//
// An executor whose engine has it runs Expand(stmt), in order, in place of
// each statement it is given to execute (not to query), each with the
// statement's arguments, stopping at the first that fails. Engines
// without the interface run every statement as it is.
type Expander interface {
	// Expand returns the statements that do what stmt, one of the
	// engine's own statements, says; stmt alone when it is complete.
	Expand(stmt string) []string
}
