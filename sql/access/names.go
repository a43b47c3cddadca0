package access

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// libraryPrefix starts the name of every table the library itself keeps:
// the stores' endpointkit_endpoints, endpointkit_endpoint_versions,
// endpointkit_variables and endpointkit_schema (endpoint/sqlstore), and the
// materialized tables endpointkit_mat_<id>_v<n> with their _next builds
// (package materialize).
const libraryPrefix = "endpointkit_"

// catalogSchemas are schemas (databases, for MySQL and ClickHouse) that hold
// an engine's catalog: a qualified name with one of them as a part is never
// read.
var catalogSchemas = map[string]bool{
	"information_schema": true, // PostgreSQL, MySQL, ClickHouse
	"pg_catalog":         true,
	"pg_toast":           true,
	"mysql":              true,
	"performance_schema": true,
	"sys":                true, // MySQL
	"system":             true, // ClickHouse
}

// catalogTablePrefixes start the names of catalog tables that can be named
// without a schema: SQLite's sqlite_master, sqlite_schema,
// sqlite_temp_master, sqlite_sequence, sqlite_stat1, sqlite_dbpage,
// sqlite_stmt; SQLite's pragma_* table-valued functions, which read as
// tables without arguments too (pragma_table_list); PostgreSQL's pg_class,
// pg_user, pg_stat_activity, pg_settings and the rest, found through the
// search path without pg_catalog.
var catalogTablePrefixes = []string{"sqlite_", "pragma_", "pg_"}

// catalogTables are other catalog or file-reading tables that can be named
// without a schema: SQLite's dbstat (page statistics of every table), and
// the virtual tables of SQLite extensions that read the file system.
var catalogTables = map[string]bool{
	"dbstat":       true,
	"fsdir":        true,
	"zipfile":      true,
	"fts3tokenize": true,
}

// protectedTable tells whether the table named by parts (its dotted parts,
// unquoted) can never be read, and why: the library's own tables
// (ReasonProtected) and catalogs (ReasonCatalog). It is checked before the
// rules, so no rules can allow these.
func protectedTable(parts []string) (Reason, string) {
	for _, p := range parts {
		if hasFoldPrefix(p, libraryPrefix) {
			return ReasonProtected, "the library's own tables can never be read"
		}
	}
	for _, p := range parts[:len(parts)-1] {
		lp := strings.ToLower(p)
		if catalogSchemas[lp] || strings.HasPrefix(lp, "pg_") {
			return ReasonCatalog, "system catalogs can never be read"
		}
	}
	last := strings.ToLower(parts[len(parts)-1])
	if catalogTables[last] {
		return ReasonCatalog, "system catalogs can never be read"
	}
	for _, pre := range catalogTablePrefixes {
		if strings.HasPrefix(last, pre) {
			return ReasonCatalog, "system catalogs can never be read"
		}
	}
	return "", ""
}

// hasFoldPrefix reports whether s starts with prefix, ASCII letters
// compared without regard to case. Only ASCII folds: an engine that folded
// more (MySQL's lower_case_table_names folds the Kelvin sign to k) could
// otherwise read as endpointkit_ a name compared here as something else;
// such names are refused anyway: they match no rule, and under AnyTable
// foldsToASCII refuses them.
func hasFoldPrefix(s, prefix string) bool {
	return len(s) >= len(prefix) && asciiEqualFold(s[:len(prefix)], prefix)
}

// asciiEqualFold reports whether a and b are equal, ASCII letters compared
// without regard to case and every other byte exactly. strings.EqualFold
// folds Unicode too (the Kelvin sign equals k there), which would let a name
// match a rule that the engine reads as another table.
func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		if x|0x20 != y|0x20 || x|0x20 < 'a' || x|0x20 > 'z' {
			return false
		}
	}
	return true
}

// asciiLower returns s with ASCII letters lowered and every other byte kept.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// hasUpper reports whether s has an ASCII capital letter.
func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 'A' && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

// foldsToASCII returns the first character of name outside ASCII whose
// case maps to an ASCII letter (the Kelvin sign to k, İ to i, ſ to S),
// and whether there is one. MySQL and MariaDB with lower_case_table_names
// set lower table names with their utf8 case mapping, so such a name can
// be read as another, ASCII one (endpointKit_endpoints as the library's
// table, clicKs as a scoped table), which Check, comparing ASCII letters
// only, would not see.
func foldsToASCII(name string) (rune, bool) {
	for _, r := range name {
		if r < utf8.RuneSelf {
			continue
		}
		if unicode.ToLower(r) < utf8.RuneSelf || unicode.ToUpper(r) < utf8.RuneSelf {
			return r, true
		}
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f < utf8.RuneSelf {
				return r, true
			}
		}
	}
	return 0, false
}
