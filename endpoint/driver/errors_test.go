package driver_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/stretchr/testify/assert"
)

// TestSentinelsSayDriver: the errors of this package name it, as
// database/sql/driver's do, and stay comparable with errors.Is when an
// implementation wraps them.
func TestSentinelsSayDriver(t *testing.T) {
	for _, err := range []error{driver.ErrNotFound, driver.ErrConflict, driver.ErrBadCursor, driver.ErrResultTooLarge} {
		assert.True(t, strings.HasPrefix(err.Error(), "driver: "), "%q does not start with \"driver: \"", err)
		assert.ErrorIs(t, fmt.Errorf("sqlstore: get: %w", err), err)
	}
}
