// Package chfault tells which ClickHouse exceptions are faults of the
// query rather than of the server, for the two ClickHouse executors
// (endpoint/chexec and endpoint/chdb), and cleans their messages for the
// query's author.
package chfault

import (
	"regexp"
	"strconv"
	"strings"
)

// codes are ClickHouse's exception codes (src/Common/ErrorCodes.cpp) that
// the text of a query causes: its syntax, a name it uses, the types or
// number of a function's arguments, a value it cannot convert or divide,
// a value out of a function's or LIMIT's range (a string or array too
// large to build, a quantile level above 1, LIMIT 1.5).
var codes = map[int]string{
	6:   "CANNOT_PARSE_TEXT",
	10:  "NOT_FOUND_COLUMN_IN_BLOCK",
	12:  "PARAMETER_OUT_OF_BOUND",
	16:  "NO_SUCH_COLUMN_IN_TABLE",
	27:  "CANNOT_PARSE_INPUT_ASSERTION_FAILED",
	32:  "ATTEMPT_TO_READ_AFTER_EOF",
	36:  "BAD_ARGUMENTS",
	38:  "CANNOT_PARSE_DATE",
	41:  "CANNOT_PARSE_DATETIME",
	42:  "NUMBER_OF_ARGUMENTS_DOESNT_MATCH",
	43:  "ILLEGAL_TYPE_OF_ARGUMENT",
	44:  "ILLEGAL_COLUMN",
	46:  "UNKNOWN_FUNCTION",
	47:  "UNKNOWN_IDENTIFIER",
	50:  "UNKNOWN_TYPE",
	53:  "TYPE_MISMATCH",
	60:  "UNKNOWN_TABLE",
	62:  "SYNTAX_ERROR",
	69:  "ARGUMENT_OUT_OF_BOUND",
	70:  "CANNOT_CONVERT_TYPE",
	72:  "CANNOT_PARSE_NUMBER",
	81:  "UNKNOWN_DATABASE",
	128: "TOO_LARGE_ARRAY_SIZE",
	131: "TOO_LARGE_STRING_SIZE",
	153: "ILLEGAL_DIVISION",
	179: "MULTIPLE_EXPRESSIONS_FOR_ALIAS",
	184: "ILLEGAL_AGGREGATION",
	190: "SIZES_OF_ARRAYS_DONT_MATCH",
	215: "NOT_AN_AGGREGATE",
	352: "AMBIGUOUS_COLUMN_NAME",
	376: "CANNOT_PARSE_UUID",
	386: "NO_COMMON_TYPE",
	395: "FUNCTION_THROW_IF_VALUE_IS_NON_ZERO",
	407: "DECIMAL_OVERFLOW",
	427: "CANNOT_COMPILE_REGEXP",
	440: "INVALID_LIMIT_EXPRESSION",
}

// Query reports whether the exception code names a fault of the query.
func Query(code int) bool {
	_, ok := codes[code]
	return ok
}

// codeMemoryLimit is MEMORY_LIMIT_EXCEEDED, of a query past its own
// limit (max_memory_usage) or of a server past its total.
const codeMemoryLimit = 241

// Fault reports whether the exception of code and msg (as Parse returns
// them) is a fault of the query: a code of Query, or a query past its own
// memory limit (max_memory_usage, which the executors send with each
// query), not the server past its total.
func Fault(code int, msg string) bool {
	return Query(code) || code == codeMemoryLimit && queryMemory(msg)
}

// queryMemory reports whether msg is that of a query past its own memory
// limit ("Query memory limit exceeded", or "Memory limit (for query)
// exceeded" before ClickHouse 24).
func queryMemory(msg string) bool {
	return strings.HasPrefix(msg, "Query memory limit exceeded") || strings.HasPrefix(msg, "Memory limit (for query) exceeded")
}

var (
	// head is what chDB's text and a server's full text start with.
	head = regexp.MustCompile(`^Code: (\d+)\. DB::Exception: `)
	// tail is the code's name and the server's version at the end.
	tail = regexp.MustCompile(`(?s)(\. )?\s*\([A-Z_]+\)( \(version [^)]*(\([^)]*\))?[^)]*\))?\s*$`)
)

// Parse reads the exception code and message of text, an exception as
// chDB reports it ("Code: 62. DB::Exception: Syntax error: ...
// (SYNTAX_ERROR) (version 26.5.3.1 (official build))"); ok is false when
// text has no code.
func Parse(text string) (code int, msg string, ok bool) {
	m := head.FindStringSubmatch(text)
	if m == nil {
		return 0, "", false
	}
	code, err := strconv.Atoi(m[1])
	if err != nil {
		return 0, "", false
	}
	return code, text[len(m[0]):], true
}

// Message cleans an exception's message for the query's author (naming
// the setting of a query's memory limit): without
// the code's name and the version at its end, and without the copy of
// the statement ClickHouse appends after "in scope", "While processing"
// or "In scope" (the statement the Service ran, with its tenant scope,
// not the text the author wrote).
func Message(msg string) string {
	for _, cut := range []string{" in scope ", ". In scope ", ": In scope ", ": While processing ", ". While processing ", " While processing ", ": while executing ", ". Stack trace"} {
		if i := strings.Index(msg, cut); i >= 0 {
			msg = msg[:i]
		}
	}
	msg = tail.ReplaceAllString(msg, "")
	msg = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(msg), ":"))
	if queryMemory(msg) {
		msg += " (the query's memory limit, max_memory_usage)"
	}
	return msg
}
