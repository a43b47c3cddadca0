package insight_test

import (
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/insight"
	"github.com/stretchr/testify/require"
)

// A reversed date range names each bound as the client sent it, then what
// the range resolved to (it named date_to by its end, 2025-05-02
// 00:00:00, although the client sent 2025-05-01).
func TestReversedRangeEchoesTheValuesAsSent(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		dateRange string
		values    map[string]any
		want      string
	}{
		{`{"date_from": "2025-05-03"}`, map[string]any{"date_to": "2025-05-01"},
			"dateRange: date_from '2025-05-03' is not before date_to '2025-05-01': the range would start at 2025-05-03 00:00:00 and end at 2025-05-02 00:00:00 (a date_to includes what it names)"},
		{`{"date_from": "-7d", "date_to": "-30d"}`, nil,
			"dateRange: date_from '-7d' is not before date_to '-30d': the range would start at 2025-05-25 00:00:00 and end at 2025-05-03 00:00:00 (a date_to includes what it names)"},
		{`{"date_from": "2025-07-01"}`, nil,
			"dateRange: date_from '2025-07-01' is not before date_to (not set): the range would start at 2025-07-01 00:00:00 and end at 2025-06-02 00:00:00 (a date_to includes what it names)"},
	} {
		_, err := days(t, tc.dateRange, tc.values, now)
		var e *insight.Error
		require.ErrorAs(t, err, &e, "%s", tc.dateRange)
		s, sub := err.Error(), tc.want
		require.Contains(t, s, sub)
	}
}
