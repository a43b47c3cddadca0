package engine

// Store is what an engine that can also hold the library's own tables
// (endpoints, versions, variables: package endpoint/sqlstore) adds to
// Engine. SQLite, PostgreSQL and MySQL implement it; ClickHouse, whose
// tables have no transactions, does not.
type Store interface {
	Engine
	// KeyType is the column type of text that takes part in a key: at most
	// 255 bytes, compared byte for byte.
	KeyType() string
	// LongTextType is the column type of text without a practical limit
	// (a saved query).
	LongTextType() string
	// Bytewise returns col for ORDER BY so that it sorts byte for byte, as
	// Go compares strings, whatever the database's default collation.
	Bytewise(col string) string
	// ForUpdate is the clause that locks the rows a SELECT reads until the
	// transaction ends, "" where a write transaction holds the one write
	// lock already.
	ForUpdate() string
	// AddColumn is an ALTER TABLE that adds a column; where the engine can,
	// it skips a column that exists.
	AddColumn(table, column, typ string) string
	// SingleWriter reports whether the engine has one write lock for the
	// whole database that a transaction must take with its first statement
	// (SQLite), and whose busy errors are retried.
	SingleWriter() bool
	// PartialIndexes reports whether a unique index may hold only the rows
	// a WHERE clause selects; where it may not (MySQL), a generated column
	// that is NULL for the other rows carries the index, NULLs being
	// distinct.
	PartialIndexes() bool
	// UpsertReturns reports whether INSERT ... ON CONFLICT ... DO UPDATE
	// may end with RETURNING the row it wrote; where not (MySQL), an upsert
	// is INSERT ... ON DUPLICATE KEY UPDATE and hands a value back through
	// LAST_INSERT_ID.
	UpsertReturns() bool
}

// addColumn is the standard ALTER TABLE ... ADD COLUMN.
func addColumn(table, column, typ string) string {
	return "ALTER TABLE " + table + " ADD COLUMN " + column + " " + typ
}
