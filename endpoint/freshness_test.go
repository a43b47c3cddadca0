package endpoint

import "testing"

// TestDataFreshnessValuesCannotBeChanged: what DataFreshnessValues returns
// is the caller's own; changing it changes neither the next call nor what
// validation accepts.
func TestDataFreshnessValuesCannotBeChanged(t *testing.T) {
	vals := DataFreshnessValues()
	if len(vals) == 0 || vals[0] != 900 {
		t.Fatalf("DataFreshnessValues() = %v, want 900 first", vals)
	}
	for i := range vals {
		vals[i] = 1
	}
	if again := DataFreshnessValues(); again[0] != 900 {
		t.Fatalf("DataFreshnessValues() after changing a returned slice = %v", again)
	}
	if err := checkDataFreshness(900); err != nil {
		t.Fatalf("900 refused after a caller changed its slice: %v", err)
	}
	if err := checkDataFreshness(1); err == nil {
		t.Fatal("1 accepted after a caller wrote it into its slice")
	}
}
