//go:build !long

package equivalence

// The default run: a sample of the corpus that keeps every kind of case
// and every case a fixed defect shows in, on a small demo data set. The
// full sweep runs with -tags long.
const (
	long       = false
	demoEvents = 400
	minCases   = 400
)
