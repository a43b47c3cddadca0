package materialize

import (
	"fmt"
	"strings"

	"github.com/endpointkit/endpointkit/sql/tree"
)

// rowExprReason returns nil when e, the expression a variable is compared
// with, can be a key of the stored table: an expression over the columns
// of one row whose value is the same on every evaluation (a column, JSON
// property extraction, lower(), date truncation, coalesce, a cast, ...).
// Otherwise it says why not: the stored key would not be the value the
// inline query compares with.
//
// Functions are judged by name against a list of those known to be
// deterministic on every engine; a function not on it is refused rather
// than trusted, since a user-defined function may be anything.
func rowExprReason(e tree.Expr) *Reason {
	if placeholderOf(e) != nil {
		return &Reason{Code: CodeNotColumn, Message: "is compared to another variable, not to a column"}
	}
	var reason *Reason
	columns := 0
	_ = tree.Walk(func(n tree.Node) (bool, error) {
		if reason != nil {
			return false, nil
		}
		if _, ok := n.(*tree.ColName); ok {
			columns++
		}
		reason = nodeReason(n)
		return reason == nil, nil
	}, e)
	if reason == nil && columns == 0 {
		reason = &Reason{Code: CodeNotColumn, Message: "is compared to a constant, not to a column or an expression over the row's columns"}
	}
	return reason
}

// nodeReason judges one node of a key expression.
func nodeReason(n tree.Node) *Reason {
	switch x := n.(type) {
	case *tree.Subquery, *tree.ExistsExpr:
		return &Reason{Code: CodeNotRowExpression, Message: "is compared to a subquery; only an expression over one row's columns can be stored"}
	case *tree.Placeholder:
		return &Reason{Code: CodeNotColumn, Message: "is compared to an expression holding another variable"}
	case *tree.FuncExpr:
		if strings.EqualFold(x.Name.Name, "group_concat") && x.Qualifier.IsEmpty() {
			return &Reason{Code: CodeNotRowExpression, Message: "is compared to an aggregate; only an expression over one row's columns can be stored"}
		}
		if x.Over != nil || x.Filter != nil || x.WithinGroup != nil || x.HasParams {
			return &Reason{Code: CodeNotRowExpression, Message: fmt.Sprintf("is compared to %s(...) with %s, which cannot be stored", x.Name.Name, callExtra(x))}
		}
		return funcReason(x)
	case *tree.LambdaExpr, *tree.BindMarker:
		return &Reason{Code: CodeNotRowExpression, Message: fmt.Sprintf("is compared to %s, which cannot be stored", nodeName(n))}
	}
	return nil
}

// callExtra names what follows a call's arguments.
func callExtra(f *tree.FuncExpr) string {
	switch {
	case f.Over != nil:
		return "OVER"
	case f.Filter != nil:
		return "FILTER"
	case f.WithinGroup != nil:
		return "WITHIN GROUP"
	}
	return "parameters"
}

// funcReason judges a function call of a key expression.
func funcReason(f *tree.FuncExpr) *Reason {
	name := strings.ToLower(f.Name.Name)
	text := name + "()"
	switch {
	case isAggregate(f):
		return &Reason{Code: CodeNotRowExpression, Message: fmt.Sprintf("is compared to the aggregate %s; only an expression over one row's columns can be stored", text)}
	case !f.Qualifier.IsEmpty():
		return &Reason{Code: CodeNotDeterministic, Message: fmt.Sprintf("is compared to an expression using %s.%s(), which is not known to be deterministic", f.Qualifier.Name, f.Name.Name)}
	case volatile[name]:
		return &Reason{Code: CodeNotDeterministic, Message: fmt.Sprintf("is compared to an expression using %s, whose value changes from one evaluation to the next", text)}
	case !deterministic[name]:
		return &Reason{Code: CodeNotDeterministic, Message: fmt.Sprintf("is compared to an expression using %s, which is not known to be deterministic", text)}
	case timeFunctions[name] && readsClock(f):
		return &Reason{Code: CodeNotDeterministic, Message: fmt.Sprintf("is compared to an expression using %s of the current time, whose value changes from one evaluation to the next", text)}
	case name == "unix_timestamp" && len(f.Exprs) == 0:
		return &Reason{Code: CodeNotDeterministic, Message: "is compared to an expression using unix_timestamp() of the current time, whose value changes from one evaluation to the next"}
	}
	return nil
}

// readsClock reports whether a call of an SQLite date function reads the
// current time: its time value is 'now' (or a modifier is, which SQLite
// allows), as in date('now').
func readsClock(f *tree.FuncExpr) bool {
	for _, e := range f.Exprs {
		if _, ok := e.(*tree.StarExpr); ok {
			return true
		}
		if v, ok := stringLit(e); ok && strings.EqualFold(strings.TrimSpace(v), "now") {
			return true
		}
	}
	return len(f.Exprs) == 0
}

// volatile are functions known to give a different value on each call, for
// a precise refusal; any function not in deterministic is refused anyway.
var volatile = setOf("random", "rand", "randomblob", "now", "now64", "nowinblock", "current_timestamp",
	"current_date", "current_time", "localtime", "localtimestamp", "sysdate", "utc_timestamp", "utc_date",
	"utc_time", "curdate", "curtime", "uuid", "uuid_short", "gen_random_uuid", "uuid_generate_v4",
	"generateuuidv4", "generateuuidv7", "rand64", "randconstant", "randuniform", "today", "yesterday",
	"clock_timestamp", "statement_timestamp", "transaction_timestamp", "timeofday", "nextval", "currval",
	"lastval", "setval", "setseed", "changes", "total_changes", "last_insert_rowid", "last_insert_id",
	"row_number", "rank", "dense_rank", "rownumberinallblocks", "rownumberinblock", "sleep", "benchmark",
	"connection_id", "pg_backend_pid")

// timeFunctions are SQLite's date functions, deterministic unless asked
// for the current time.
var timeFunctions = setOf("date", "time", "datetime", "julianday", "unixepoch", "strftime", "timediff")

// deterministic are the scalar functions a key expression may call: their
// value depends on their arguments only, on every engine that has them.
var deterministic = setOf(
	// strings
	"lower", "upper", "lcase", "ucase", "trim", "ltrim", "rtrim", "btrim", "substr", "substring",
	"left", "right", "length", "char_length", "character_length", "octet_length", "replace",
	"concat", "concat_ws", "lpad", "rpad", "reverse", "instr", "position", "locate", "split_part",
	"lowerutf8", "upperutf8", "trimboth", "trimleft", "trimright", "substring_index",
	// conditionals and null handling
	"coalesce", "ifnull", "nullif", "isnull", "if", "iif", "greatest", "least", "assumenotnull", "tonullable",
	// numbers
	"abs", "round", "floor", "ceil", "ceiling", "sign", "mod", "trunc", "truncate", "div", "intdiv",
	// dates and times (SQLite's only with a time value: see timeFunctions)
	"date", "time", "datetime", "julianday", "unixepoch", "strftime", "timediff",
	"date_trunc", "date_part", "to_char", "to_date", "to_timestamp", "date_format", "timestamp",
	"unix_timestamp", "from_unixtime", "year", "month", "day", "dayofmonth", "dayofweek", "dayofyear",
	"hour", "minute", "second", "week", "weekday", "quarter", "yearweek", "extract", "str_to_date",
	"todate", "todatetime", "todatetime64", "tostartofminute", "tostartoffiveminutes",
	"tostartoffifteenminutes", "tostartofhour", "tostartofday", "tostartofweek", "tostartofmonth",
	"tostartofquarter", "tostartofyear", "tostartofinterval", "tomonday", "toyear", "tomonth",
	"todayofmonth", "todayofweek", "tohour", "tominute", "toyyyymm", "toyyyymmdd",
	"parsedatetimebesteffort", "parsedatetime64besteffort", "formatdatetime",
	// JSON
	"json_extract", "json_unquote", "json_value", "json_type", "json_valid", "json_array_length",
	"json_extract_path", "json_extract_path_text", "jsonb_extract_path", "jsonb_extract_path_text",
	"jsonb_typeof", "json_typeof", "json_contains", "json_length", "json_quote",
	"jsonextract", "jsonextractstring", "jsonextractint", "jsonextractuint", "jsonextractfloat",
	"jsonextractbool", "jsonextractraw", "jsonhas", "jsontype", "jsonlength",
	"visitparamextractstring", "simplejsonextractstring",
	// conversions
	"cast", "convert", "tostring", "toint64", "toint32", "touint64", "tofloat64", "todecimal64",
	"toint64ornull", "tofloat64ornull", "tostringornull", "hex", "typeof",
)

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}
