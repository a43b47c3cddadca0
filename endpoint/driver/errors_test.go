package driver_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

// TestSentinelsSayDriver: the errors of this package name it, as
// database/sql/driver's do, and stay comparable with errors.Is when an
// implementation wraps them.
func TestSentinelsSayDriver(t *testing.T) {
	for _, err := range []error{driver.ErrNotFound, driver.ErrConflict, driver.ErrBadCursor, driver.ErrResultTooLarge} {
		if !strings.HasPrefix(err.Error(), "driver: ") {
			t.Errorf("%q does not start with \"driver: \"", err)
		}
		if wrapped := fmt.Errorf("sqlstore: get: %w", err); !errors.Is(wrapped, err) {
			t.Errorf("%q is not found in its wrapping", err)
		}
	}
}
