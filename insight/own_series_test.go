package insight

import (
	"github.com/stretchr/testify/require"
	"testing"
)

// TestSeriesShareNothing: each series of an answer has its own days,
// labels and (lifecycle) action, so that a host writing to one series
// changes no other.
func TestSeriesShareNothing(t *testing.T) {
	trends := compiled(t, `{"kind":"TrendsQuery","series":[{"kind":"EventsNode","event":"a"}],"interval":"day",
		"dateRange":{"date_from":"2025-05-01","date_to":"2025-05-02"},"breakdownFilter":{"breakdown":"x"}}`)
	res, err := trends.Shape([][]any{{int64(0), "2025-05-01 00:00:00", "v", int64(2), int64(0)}, {int64(0), "2025-05-02 00:00:00", "w", int64(1), int64(0)}})
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(res.Series), 2)
	day, label := res.Series[1].Days[0], res.Series[1].Labels[0]
	res.Series[0].Days[0], res.Series[0].Labels[0] = "written", "written"
	require.Equal(t, day, res.Series[1].Days[0], "writing series 0 changed series 1")
	require.Equal(t, label, res.Series[1].Labels[0], "writing series 0 changed series 1")

	lifecycle := compiled(t, `{"kind":"LifecycleQuery","series":[{"kind":"EventsNode","event":"a"}],"interval":"day",
		"dateRange":{"date_from":"2025-05-03","date_to":"2025-05-04"}}`)
	res, err = lifecycle.Shape(nil)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(res.Lifecycle), 2, "lifecycle series %+v", res.Lifecycle)
	require.NotNil(t, res.Lifecycle[1].Action.ID, "lifecycle series %+v", res.Lifecycle)
	day, label, id := res.Lifecycle[1].Days[0], res.Lifecycle[1].Labels[0], *res.Lifecycle[1].Action.ID
	res.Lifecycle[0].Days[0], res.Lifecycle[0].Labels[0], *res.Lifecycle[0].Action.ID = "written", "written", "written"
	require.Equal(t, day, res.Lifecycle[1].Days[0], "writing series 0 changed series 1")
	require.Equal(t, label, res.Lifecycle[1].Labels[0], "writing series 0 changed series 1")
	require.Equal(t, id, *res.Lifecycle[1].Action.ID, "writing series 0 changed series 1")
}
