package chfault

import (
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"testing"
)

func TestParseAndMessage(t *testing.T) {
	for _, tc := range []struct {
		text  string
		code  int
		query bool
		msg   string
	}{
		{"Code: 62. DB::Exception: Syntax error: failed at position 8 (FROMM): FROMM events. Expected one of: token. (SYNTAX_ERROR) (version 26.5.3.1 (official build))",
			62, true, "Syntax error: failed at position 8 (FROMM): FROMM events. Expected one of: token"},
		{"Code: 47. DB::Exception: Unknown expression identifier `nope` in scope SELECT nope FROM (SELECT * FROM events WHERE project_id = {p1:String}) AS events. (UNKNOWN_IDENTIFIER) (version 26.5.3.1 (official build))",
			47, true, "Unknown expression identifier `nope`"},
		{"Code: 153. DB::Exception: Division by zero: while executing 'FUNCTION intDiv(count(), 0)'. (ILLEGAL_DIVISION)",
			153, true, "Division by zero"},
		{"Code: 241. DB::Exception: Memory limit (total) exceeded. (MEMORY_LIMIT_EXCEEDED)", 241, false, "Memory limit (total) exceeded"},
	} {
		code, msg, ok := Parse(tc.text)
		if !ok || code != tc.code || Query(code) != tc.query {
			t.Errorf("Parse(%q) = %d, %v; Query %v; want %d, query %v", tc.text, code, ok, Query(code), tc.code, tc.query)
		}
		assert.Equal(t, tc.msg, Message(msg), "Message(%q)", msg)
	}
	_, _, ok := Parse("chdb: the query returned no result")
	assert.False(t, ok, "Parse read a code in text without one")
}

// TestMemoryLimitIsTheQuerys: a query past its own memory limit is its
// fault, named by the setting; the server past its total is not.
func TestMemoryLimitIsTheQuerys(t *testing.T) {
	text := "Code: 241. DB::Exception: Query memory limit exceeded: would use 1.12 GiB (attempt to allocate chunk of 1.12 GiB), maximum: 1.00 GiB: In scope SELECT length(range(300000000)) AS n SETTINGS max_memory_usage = 1073741824. (MEMORY_LIMIT_EXCEEDED)"
	code, msg, ok := Parse(text)
	require.True(t, ok, "Fault(%d, %q) = false", code, msg)
	require.True(t, Fault(code, msg), "Fault(%d, %q) = false", code, msg)
	want := "Query memory limit exceeded: would use 1.12 GiB (attempt to allocate chunk of 1.12 GiB), maximum: 1.00 GiB (the query's memory limit, max_memory_usage)"
	assert.Equal(t, want, Message(msg), "Message")
	total := "Code: 241. DB::Exception: Memory limit (total) exceeded: would use 30.00 GiB, maximum: 28.00 GiB. (MEMORY_LIMIT_EXCEEDED)"
	if code, msg, _ := Parse(total); Fault(code, msg) {
		t.Errorf("the server's total limit is not the query's fault")
	}
}

// TestValueFaultsAreTheQuerys: exceptions that a query's values cause on
// ClickHouse (chDB 26.5's texts), a variable's value among them (LIMIT
// {variables.n} with 1.5, toUUID({variables.s}), repeat('x',
// {variables.n})), were not faults of the query: the run answered 502
// "query execution failed" for a client's bad input instead of a 400
// naming the fault.
func TestValueFaultsAreTheQuerys(t *testing.T) {
	for _, tc := range []struct{ text, msg string }{
		{"Code: 440. DB::Exception: The value 1.5 of LIMIT expression is not representable as UInt64 or Int64 or Float64 in the range (0, 1). (INVALID_LIMIT_EXPRESSION) (version 26.5.3.1 (official build))",
			"The value 1.5 of LIMIT expression is not representable as UInt64 or Int64 or Float64 in the range (0, 1)"},
		{"Code: 131. DB::Exception: Too large string size (1000000000000) in function repeat, maximum is: 1073741824: In scope SELECT length(repeat('x', 1000000000000)). (TOO_LARGE_STRING_SIZE)",
			"Too large string size (1000000000000) in function repeat, maximum is: 1073741824"},
		{"Code: 128. DB::Exception: Too large array size: 10000000000, maximum: 1073741824: In scope SELECT arrayResize([1], 10000000000). (TOO_LARGE_ARRAY_SIZE)",
			"Too large array size: 10000000000, maximum: 1073741824"},
		{"Code: 376. DB::Exception: Cannot parse uuid x: Cannot parse UUID from String: In scope SELECT toUUID('x'). (CANNOT_PARSE_UUID)",
			"Cannot parse uuid x: Cannot parse UUID from String"},
		{"Code: 12. DB::Exception: Quantile level is out of range [0..1]. (PARAMETER_OUT_OF_BOUND)",
			"Quantile level is out of range [0..1]"},
		{"Code: 50. DB::Exception: Unknown data type family: NotAType: In scope SELECT JSONExtract('{}', 'a', 'NotAType'). (UNKNOWN_TYPE)",
			"Unknown data type family: NotAType"},
	} {
		code, msg, ok := Parse(tc.text)
		if assert.True(t, ok, "Parse(%q)", tc.text) {
			assert.True(t, Fault(code, msg), "code %d is the query's fault: %s", code, tc.text)
			assert.Equal(t, tc.msg, Message(msg))
		}
	}
}
