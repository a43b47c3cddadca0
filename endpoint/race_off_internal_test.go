//go:build !race

package endpoint

// raceEnabled tells whether the tests run under the race detector, whose
// instrumentation makes some values escape to the heap that do not
// otherwise: allocation counts are checked without it only.
const raceEnabled = false
