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

// dataFreshnessValues are the values data_freshness_seconds may take, as in
// PostHog: 15 and 30 minutes, 1, 6, 12 and 24 hours, and a week. An array,
// so that no caller can change what validation reads.
var dataFreshnessValues = [...]int{900, 1800, 3600, 21600, 43200, 86400, 604800}

// DataFreshnessValues returns the values data_freshness_seconds may take,
// in increasing order, as in PostHog: 15 and 30 minutes, 1, 6, 12 and 24
// hours, and a week. The slice is the caller's own.
func DataFreshnessValues() []int {
	return slices.Clone(dataFreshnessValues[:])
}

// checkDataFreshness refuses a data_freshness_seconds that is not one of
// dataFreshnessValues, naming them.
func checkDataFreshness(n int) error {
	if slices.Contains(dataFreshnessValues[:], n) {
		return nil
	}
	allowed := make([]string, len(dataFreshnessValues))
	for i, v := range dataFreshnessValues {
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
