//go:build !long

package budgettest_test

// everyFlaw: without -tags long, TestSuiteCatchesBrokenCounters runs the
// suite on a sample of the flawed counters (sampledFlaws), about 4 s
// each; .ci/run's long step runs them all.
const everyFlaw = false
