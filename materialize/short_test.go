//go:build !long

package materialize

// long: the heavier sweeps run a sample of their values (see
// shape.sampled); -tags long runs them in full.
const long = false
