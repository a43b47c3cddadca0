package variable

import (
	"github.com/stretchr/testify/assert"
	"testing"
	"time"
)

func TestTimestampString(t *testing.T) {
	for _, tc := range []struct {
		ts   Timestamp
		want string
	}{
		{day(2025, 1, 2), "2025-01-02"},
		{day(1, 1, 1), "0001-01-01"},
		{at(2025, 1, 2, 3, 4, 5, 0), "2025-01-02 03:04:05"},
		{at(2025, 1, 2, 0, 0, 0, 0), "2025-01-02 00:00:00"},
		{at(2025, 1, 2, 3, 4, 5, 500_000_000), "2025-01-02 03:04:05.5"},
		{at(2025, 1, 2, 3, 4, 5, 123_456_789), "2025-01-02 03:04:05.123456789"},
		{at(2025, 1, 2, 3, 4, 5, 1_000), "2025-01-02 03:04:05.000001"},
		// A DateOnly value shows only its day, whatever the clock says.
		{Timestamp{Time: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), DateOnly: true}, "2025-01-02"},
		// A Timestamp built by hand in another zone is still shown in UTC.
		{Timestamp{Time: time.Date(2025, 1, 2, 1, 0, 0, 0, time.FixedZone("X", 2*3600))}, "2025-01-01 23:00:00"},
	} {
		assert.Equal(t, tc.want, tc.ts.String(), "%#v.String()", tc.ts)
	}
}
