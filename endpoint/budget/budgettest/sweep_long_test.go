//go:build long

package budgettest_test

// everyFlaw: with -tags long, TestSuiteCatchesBrokenCounters runs the
// suite on every flawed counter.
const everyFlaw = true
