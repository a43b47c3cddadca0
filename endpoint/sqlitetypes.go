package endpoint

import (
	"slices"
	"strings"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/sqltoken"
)

// SQLite declares a type for a result column that reads a table's column,
// and none for an expression: the type of count(*) is only that of its
// values, which an answer with no rows does not have, and the type of
// sum(x), min(x) or json_extract(...) is the type of each value, which may
// change from row to row (sum is INTEGER while its inputs are, REAL once
// one is not). A version's types are therefore what SQLite declares, and,
// for an expression whose result SQLite types the same whatever its input
// (sqliteFixedTypes), that type; any other expression keeps the type ""
// (KindOther: its values as SQLite gives them), the same with rows and
// without, inline and materialized. Learning a type from an answer's
// values would not be exact: a json_extract whose first answer holds 12
// and a later one 3.5.

// sqliteFixedResult is the type of the result of each SQLite function
// whose result is of one type whatever its arguments, NULL aside.
var sqliteFixedResult = map[string]string{
	"count": "INTEGER", "length": "INTEGER", "octet_length": "INTEGER", "instr": "INTEGER", "unicode": "INTEGER",
	"avg": "REAL", "total": "REAL", "round": "REAL",
	"lower": "TEXT", "upper": "TEXT", "typeof": "TEXT", "quote": "TEXT", "hex": "TEXT", "printf": "TEXT",
	"format": "TEXT", "group_concat": "TEXT", "string_agg": "TEXT", "date": "TEXT", "time": "TEXT",
	"datetime": "TEXT", "strftime": "TEXT", "char": "TEXT",
}

// sqliteFixedTypes returns the types that types leaves unnamed ("") of the
// result columns of query, a SQL version's text, where SQLite types the
// column's expression the same whatever its values: a call of a function of
// sqliteFixedResult, or CAST(... AS INTEGER, REAL or TEXT), with an alias
// or none. types is returned as it is when the query's first SELECT list
// cannot be read, or has another number of items than types (a *).
func sqliteFixedTypes(query string, types []string) []string {
	if !slices.Contains(types, "") {
		return types
	}
	items := selectItems(query)
	if len(items) != len(types) {
		return types
	}
	out := append([]string(nil), types...)
	for i, item := range items {
		if out[i] == "" {
			out[i] = fixedType(query, item)
		}
	}
	return out
}

// selectItems returns the tokens of each item of the first SELECT list of
// query (past opening parentheses, SELECT, DISTINCT or ALL), comments left
// out; nil when query does not start so, or an item is a *.
func selectItems(query string) [][]sqltoken.Token {
	var toks []sqltoken.Token
	for _, t := range sqltoken.Tokens(engine.SQLite.Lexical(), query) {
		if t.Kind != sqltoken.Comment {
			toks = append(toks, t)
		}
	}
	word := func(t sqltoken.Token, w string) bool {
		return t.Kind == sqltoken.Word && strings.EqualFold(t.Text(query), w)
	}
	punct := func(t sqltoken.Token, p string) bool { return t.Kind == sqltoken.Punct && t.Text(query) == p }
	i := 0
	for i < len(toks) && punct(toks[i], "(") {
		i++
	}
	if i >= len(toks) || !word(toks[i], "select") {
		return nil
	}
	i++
	for i < len(toks) && (word(toks[i], "distinct") || word(toks[i], "all")) {
		i++
	}
	var items [][]sqltoken.Token
	depth, start := 0, i
	end := func(t sqltoken.Token) bool {
		for _, kw := range []string{"from", "where", "group", "having", "window", "order", "limit", "union", "intersect", "except"} {
			if word(t, kw) {
				return true
			}
		}
		return punct(t, ";")
	}
loop:
	for ; i < len(toks); i++ {
		t := toks[i]
		switch {
		case punct(t, "("):
			depth++
		case punct(t, ")"):
			depth--
			if depth < 0 {
				break loop
			}
		case depth > 0:
		case punct(t, ","):
			items = append(items, toks[start:i])
			start = i + 1
		case end(t):
			break loop
		}
	}
	items = append(items, toks[start:i])
	for _, item := range items {
		if len(item) == 0 || punct(item[len(item)-1], "*") {
			return nil
		}
	}
	return items
}

// fixedType is the type SQLite gives the item's expression whatever its
// values, "" when it has none: the item is name(...) or CAST(... AS type),
// followed by nothing, an alias, or AS and an alias.
func fixedType(query string, item []sqltoken.Token) string {
	if len(item) < 3 || item[0].Kind != sqltoken.Word || item[1].Kind != sqltoken.Punct || item[1].Text(query) != "(" {
		return ""
	}
	// The parenthesis that closes the call.
	depth, closeAt := 0, -1
	for j := 1; j < len(item) && closeAt < 0; j++ {
		if item[j].Kind != sqltoken.Punct {
			continue
		}
		switch item[j].Text(query) {
		case "(":
			depth++
		case ")":
			if depth--; depth == 0 {
				closeAt = j
			}
		}
	}
	if closeAt < 0 {
		return ""
	}
	rest := item[closeAt+1:]
	isName := func(t sqltoken.Token) bool { return t.Kind == sqltoken.Word || t.Kind == sqltoken.QuotedName }
	switch {
	case len(rest) == 0:
	case len(rest) == 1 && isName(rest[0]) && !strings.EqualFold(rest[0].Text(query), "over") && !strings.EqualFold(rest[0].Text(query), "filter"):
	case len(rest) == 2 && rest[0].Kind == sqltoken.Word && strings.EqualFold(rest[0].Text(query), "as") && isName(rest[1]):
	default:
		return "" // an operator, a window, a FILTER: not the call's type alone
	}
	name := strings.ToLower(item[0].Text(query))
	if name != "cast" {
		return sqliteFixedResult[name]
	}
	// CAST(expr AS type-name): the type name is the words after the last
	// AS at the call's own depth; SQLite gives it an affinity by its
	// letters, and CAST to INTEGER, REAL or TEXT affinity yields that.
	depth, as := 0, -1
	for j := 2; j < closeAt; j++ {
		t := item[j]
		switch {
		case t.Kind == sqltoken.Punct && t.Text(query) == "(":
			depth++
		case t.Kind == sqltoken.Punct && t.Text(query) == ")":
			depth--
		case depth == 0 && t.Kind == sqltoken.Word && strings.EqualFold(t.Text(query), "as"):
			as = j
		}
	}
	if as < 0 {
		return ""
	}
	var typ strings.Builder
	for j := as + 1; j < closeAt; j++ {
		typ.WriteString(strings.ToUpper(item[j].Text(query)))
	}
	t := typ.String()
	switch {
	case strings.Contains(t, "INT"):
		return "INTEGER"
	case strings.Contains(t, "CHAR"), strings.Contains(t, "CLOB"), strings.Contains(t, "TEXT"):
		return "TEXT"
	case strings.Contains(t, "REAL"), strings.Contains(t, "FLOA"), strings.Contains(t, "DOUB"):
		return "REAL"
	}
	return "" // NUMERIC, BLOB: the value's own type
}
