package variable

import (
	"encoding/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"math"
	"strings"
	"testing"
	"time"
)

func TestDescribe(t *testing.T) {
	for _, tc := range []struct {
		raw  any
		want string
	}{
		{nil, "null"},
		{"a\"b", `"a\"b"`},
		{"", `""`},
		{"a\x00b", `"a\x00b"`},
		{json.RawMessage(`  {"a": 1}  `), `{"a": 1}`},
		{json.RawMessage("\"\xff\""), `"\"\xff\""`},
		{[]byte("ab"), `"ab"`},
		{12, "12"},
		{uint64(math.MaxUint64), "18446744073709551615"},
		{1.5, "1.5"},
		{1e21, "1e+21"},
		{math.NaN(), "NaN"},
		{math.Inf(-1), "-Inf"},
		{float32(0.1), "0.1"},
		{true, "true"},
		{[]any{"a", 1.0}, `["a",1]`},
		{map[string]any{"k": nil}, `{"k":null}`},
		{time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), "2025-01-02T03:04:05Z"},
		{day(2025, 1, 2), "2025-01-02"},
		{complex(1, 2), "(1+2i)"},
		{strings.Repeat("a", 100), `"` + strings.Repeat("a", 79) + "…"},
		{json.RawMessage(strings.Repeat("1", 100)), strings.Repeat("1", 80) + "…"},
	} {
		assert.Equal(t, tc.want, describe(tc.raw), "describe(%#v)", tc.raw)
	}
}

func TestFloatTextMatchesEncodingJSON(t *testing.T) {
	for _, f := range []float64{0, -0.0, 1, -1, 0.1, 1.5, 1e-6, 9.99e-7, 1e-7, 1.5e-10, 1e20, 1e21, 1.234e22, -1e21, math.MaxFloat64, math.SmallestNonzeroFloat64, 123456789.125} {
		b, err := json.Marshal(f)
		require.NoError(t, err)
		got := floatText(f)
		assert.Equal(t, string(b), got, "floatText(%v) = %s, encoding/json writes %s", f, got, b)
	}
}
