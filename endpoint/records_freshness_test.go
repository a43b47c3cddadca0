package endpoint

import (
	"github.com/stretchr/testify/require"
	"testing"
)

// TestDataFreshnessValuesCannotBeChanged: what DataFreshnessValues returns
// is the caller's own; changing it changes neither the next call nor what
// validation accepts.
func TestDataFreshnessValuesCannotBeChanged(t *testing.T) {
	vals := DataFreshnessValues()
	require.NotEmpty(t, vals, "DataFreshnessValues() = %v, want 900 first", vals)
	require.Equal(t, 900, vals[0], "DataFreshnessValues() = %v, want 900 first", vals)
	for i := range vals {
		vals[i] = 1
	}
	again := DataFreshnessValues()
	require.Equal(t, 900, again[0], "DataFreshnessValues() after changing a returned slice = %v", again)
	require.NoError(t, checkDataFreshness(900), "900 refused after a caller changed its slice")
	require.Error(t, checkDataFreshness(1), "1 accepted after a caller wrote it into its slice")
}
