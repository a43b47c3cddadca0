package driver_test

import (
	"fmt"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

// A RunLog pages with the cursor of the last entry it returned; a List
// given that cursor continues after the entry.
func ExampleCursor() {
	last := driver.RunLogEntry{At: time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC), Seq: 3}
	next := driver.Cursor(last)
	at, seq, err := driver.ParseCursor(next)
	fmt.Println(time.Unix(0, at).UTC(), seq, err)
	_, _, err = driver.ParseCursor("not a cursor")
	fmt.Println(err == driver.ErrBadCursor)
	// Output:
	// 2025-05-01 12:00:00 +0000 UTC 3 <nil>
	// true
}

// An Executor weighs every row its Query reads with RowBytes and stops once
// the rows weigh more than Bounds.MaxBytes.
func ExampleRowBytes() {
	row := []any{int64(42), "DE", nil, true}
	// About the 20 bytes of [42,"DE",null,true]: a comma more, counted per value.
	fmt.Println(driver.RowBytes(row))
	// Output:
	// 21
}
