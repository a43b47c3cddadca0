package placeholder

// Dialect decides how bind markers, arguments, identifiers and string
// literals are written for one SQL engine. The zero Dialect is not valid;
// use one of the package's values.
type Dialect struct {
	name string
}

// The supported dialects.
var (
	SQLite     = Dialect{name: "sqlite"}
	PostgreSQL = Dialect{name: "postgresql"}
	MySQL      = Dialect{name: "mysql"}
	ClickHouse = Dialect{name: "clickhouse"}
)
