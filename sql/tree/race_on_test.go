//go:build race

package tree_test

// raceEnabled tells whether the tests run under the race detector, under
// which sync.Pool drops what is put in it at random.
const raceEnabled = true
