//go:build chdb

package chdb

import (
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/stretchr/testify/assert"
)

// TestZeroWidthRows: an answer whose rows take no bytes (columns of
// FixedString(0) or Nothing) but that goes on is an error, not a loop
// that reads rows for ever, until memory runs out (as decode did before).
func TestZeroWidthRows(t *testing.T) {
	for _, typ := range []string{"FixedString(0)", "Nothing"} {
		out := string(append([]byte{1, 1, 'v', byte(len(typ))}, typ+"\x01"...))
		_, err := decode(out, driver.Bounds{}, 0)
		assert.ErrorIs(t, err, errEmptyRow, "%s", typ)
	}
}

// TestDecimalLen: decode weighs an integer as driver.RowBytes does.
func TestDecimalLen(t *testing.T) {
	for _, v := range []int64{0, 1, 9, 10, 99, 100, 255, 256, 999, 1000, -1, -9, -10, -99, 1<<63 - 1, -1 << 63, -(1<<63 - 1), 1234567890123} {
		got, want := decimalLen(v), driver.RowBytes([]any{v})-3
		assert.Equal(t, want, got, "decimalLen(%d)", v)
	}
}
