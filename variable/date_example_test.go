package variable_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/endpointkit/endpointkit/variable"
)

func ExampleParseDate() {
	// The last day of a month: a month step clamps to February's last day.
	now := time.Date(2025, 3, 31, 15, 47, 0, 0, time.UTC)
	for _, s := range []string{
		"2025-05-01",
		"2025-05-01 10:30:00",
		"2025-05-01T10:30:00+02:00",
		"-7d",
		"-1m",
		"-1mStart",
		"-24h",
		"yStart",
	} {
		ts, err := variable.ParseDate(s, now)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%-26s %s\n", s, ts)
	}

	_, err := variable.ParseDate("2025-02-30", now)
	var de *variable.DateError
	fmt.Println(errors.As(err, &de), de.Expected)
	// Output:
	// 2025-05-01                 2025-05-01
	// 2025-05-01 10:30:00        2025-05-01 10:30:00
	// 2025-05-01T10:30:00+02:00  2025-05-01 08:30:00
	// -7d                        2025-03-24
	// -1m                        2025-02-28
	// -1mStart                   2025-02-01
	// -24h                       2025-03-30 15:00:00
	// yStart                     2025-01-01
	// true a day from 01 to 28 (2025-02 has 28 days)
}

func ExampleParseDateExpr() {
	// Check a saved bound once, without a clock; resolve it on each run.
	e, err := variable.ParseDateExpr("-1mStart")
	if err != nil {
		panic(err)
	}
	for _, now := range []time.Time{
		time.Date(2025, 3, 31, 12, 0, 0, 0, time.UTC),
		time.Date(2025, 6, 15, 12, 0, 0, 0, time.UTC),
	} {
		ts, _ := e.Resolve(now)
		// An upper bound includes the whole day: it ends Precision later.
		fmt.Println(ts, "to", ts.Time.Add(e.Precision()).Format(time.DateOnly))
	}
	// Output:
	// 2025-02-01 to 2025-02-02
	// 2025-05-01 to 2025-05-02
}
