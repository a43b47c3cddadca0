//go:build long

package equivalence

// The full sweep: every case of the corpus on a larger demo data set.
const (
	long       = true
	demoEvents = 5000
	minCases   = 400
)
