//go:build long

package materialize

// long: the heavier sweeps run in full (go test -tags long).
const long = true
