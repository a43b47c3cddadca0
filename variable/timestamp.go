package variable

import "time"

// String formats t the way SQL engines read a literal date or date-time:
// "2006-01-02" for a whole day, otherwise "2006-01-02 15:04:05" with
// fractional seconds only when they are not zero. The time is shown in UTC.
func (t Timestamp) String() string {
	if t.DateOnly {
		return t.Time.UTC().Format(time.DateOnly)
	}
	return t.Time.UTC().Format("2006-01-02 15:04:05.999999999")
}
