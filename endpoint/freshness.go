package endpoint

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

// DefaultDataFreshness is the data_freshness_seconds of an endpoint that
// sets none: a day, as in PostHog.
const DefaultDataFreshness = 86400

// DataFreshnessValues are the values data_freshness_seconds may take, as in
// PostHog: 15 and 30 minutes, 1, 6, 12 and 24 hours, and a week.
var DataFreshnessValues = []int{900, 1800, 3600, 21600, 43200, 86400, 604800}

// checkDataFreshness refuses a data_freshness_seconds that is not one of
// DataFreshnessValues, naming them.
func checkDataFreshness(n int) error {
	if slices.Contains(DataFreshnessValues, n) {
		return nil
	}
	allowed := make([]string, len(DataFreshnessValues))
	for i, v := range DataFreshnessValues {
		allowed[i] = strconv.Itoa(v)
	}
	return invalidf(CodeInvalidInput, "data_freshness_seconds",
		"Invalid data_freshness_seconds %d. Expected one of: %s.", n, strings.Join(allowed, ", "))
}

// dataFreshness is how long an answer of e stays fresh: a cached answer is
// served while its data is younger, and the scheduler rebuilds e's stored
// table at that period. 0, as stores written before the field existed
// hold, means the default.
func dataFreshness(e *driver.Endpoint) time.Duration {
	if e.DataFreshnessSeconds <= 0 {
		return DefaultDataFreshness * time.Second
	}
	return time.Duration(e.DataFreshnessSeconds) * time.Second
}
