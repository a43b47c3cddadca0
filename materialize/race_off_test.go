//go:build !race

package materialize

import "testing"

// skipUnderRace runs the sweep: see race_on_test.go.
func skipUnderRace(t *testing.T) {}
