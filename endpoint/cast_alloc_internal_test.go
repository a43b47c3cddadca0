package endpoint

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCastValueKeepsItsKindsValues: a value already of its column kind's
// Go type is cast without an allocation (every cell of every answer and
// export row is cast), and comes back equal.
func TestCastValueKeepsItsKindsValues(t *testing.T) {
	for _, tc := range []struct {
		k ColumnKind
		v any
	}{
		{KindInteger, int64(1_000_000)},
		{KindFloat, 1.25e6},
		{KindDecimal, "99220.50"},
		{KindString, "user-12345"},
		{KindBoolean, true},
		{KindTime, "2025-05-01 12:00:00"},
	} {
		var got any
		var ok bool
		allocs := testing.AllocsPerRun(100, func() { got, ok = castValue(tc.k, tc.v) })
		require.True(t, ok, "%s %v", tc.k, tc.v)
		require.Equal(t, tc.v, got, "%s", tc.k)
		require.Zero(t, allocs, "casting %T %v to %q allocates", tc.v, tc.v, tc.k)
	}
}
