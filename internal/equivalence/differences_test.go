package equivalence

import "strings"

// difference is an entry of the allow-list: a case (spec#i) or every case
// of a spec (spec) on which the named engines answer otherwise than
// SQLite, for a reason docs/engines.md explains under the same id. The
// test fails on a difference that is not listed, and on an entry whose
// difference no longer occurs.
type difference struct {
	id      string
	engines []string
	why     string
}

// listed is the allow-list. An id is a case (name#i), a spec (name), or
// specs by prefix (name*).
var listed = []difference{
	{"text_like", []string{"postgres", "mysql"},
		"SQLite's LIKE ignores the case of ASCII letters; PostgreSQL's, and MySQL's on a binary collation, do not"},
	{"text_eq_default_collation", []string{"mysql"},
		"a column of MariaDB's default collation ignores letter case, accents and trailing spaces in comparisons"},
	{"null_order", []string{"postgres"},
		"PostgreSQL sorts NULL after every value in ascending order; SQLite and MySQL before"},
	{"json_native_null", []string{"mysql"},
		"MySQL's JSON_UNQUOTE(JSON_EXTRACT()) answers a JSON null as the text 'null'"},
	{"json_native_number", []string{"postgres", "mysql"},
		"SQLite's json_extract answers a JSON number as a number; PostgreSQL's ->> and MySQL's JSON_UNQUOTE as text"},
	{"trends_filter4_icontains_*", []string{"postgres", "mysql"},
		"SQLite's lower() folds ASCII letters only, so icontains does not match Ü with ü there"},
	{"date_eq_ts#3", []string{"postgres", "mysql"}, wholeDay},
	{"date_eq_tstz#3", []string{"postgres", "mysql"}, wholeDay},
	{"date_after_ts#0", []string{"postgres", "mysql"}, wholeDay},
	{"date_after_tstz#0", []string{"postgres", "mysql"}, wholeDay},
}

// wholeDay is the reason of the whole-day cases: it is the storage that
// differs, not the engine (SQLite stores every timestamp as text).
const wholeDay = "a whole day (2025-05-01) is bound as the text '2025-05-01', which a text timestamp column compares as " +
	"text (before '2025-05-01 00:00:00') and a timestamp column as midnight: = and > differ, >= and < agree"

// matches reports whether allow-list id covers case caseID of spec name.
func matches(id, name, caseID string) bool {
	switch {
	case strings.HasSuffix(id, "*"):
		return strings.HasPrefix(name, strings.TrimSuffix(id, "*"))
	case strings.Contains(id, "#"):
		return id == caseID
	}
	return id == name
}

// listedFor returns the allow-list entry covering a case on an engine.
func listedFor(name, caseID, engineName string) (string, bool) {
	for _, l := range listed {
		if matches(l.id, name, caseID) && contains(l.engines, engineName) {
			return l.id, true
		}
	}
	return "", false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
