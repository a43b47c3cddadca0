package limit_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/limit"
)

// ExampleLimiter_Acquire admits runs until a project's rate is used up, then
// says which limit was reached and when to retry.
func ExampleLimiter_Acquire() {
	now := time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC)
	l, err := limit.New(limit.Config{
		ProjectPerMinute: 2,
		Now:              func() time.Time { return now },
	})
	if err != nil {
		panic(err)
	}
	for i := range 3 {
		release, err := l.Acquire("1")
		var e *limit.Error
		if errors.As(err, &e) {
			fmt.Printf("run %d refused by %s, retry after %s\n", i, e.Limit, e.RetryAfter.Round(time.Second))
			continue
		}
		fmt.Printf("run %d admitted\n", i)
		release() // when the run is over
	}
	// Output:
	// run 0 admitted
	// run 1 admitted
	// run 2 refused by project_runs_per_minute, retry after 1m30s
}
