package chfault

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

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
