package sqlstore

import (
	"database/sql"
	"fmt"
	"time"
)

// timeLayout is RFC 3339 in UTC with exactly nine fractional digits. Text
// rather than a native type keeps the DDL the same on every engine and the
// nanoseconds exact (MySQL's DATETIME stops at microseconds, and a BIGINT of
// Unix nanoseconds cannot hold the zero time.Time); the fixed width makes
// the text sort in time order.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

// formatTime returns the stored text of t. The location is not kept: times
// come back in UTC. Years outside 0 to 9999 have no RFC 3339 text and are
// refused rather than written in a form that could not be read back.
func formatTime(t time.Time) (string, error) {
	t = t.UTC()
	if y := t.Year(); y < 0 || y > 9999 {
		return "", fmt.Errorf("time %s is outside the years 0 to 9999", t)
	}
	return t.Format(timeLayout), nil
}

// parseTime decodes text written by formatTime.
func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(timeLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("decoding stored time %q: %w", s, err)
	}
	return t.UTC(), nil
}

// formatNullTime returns the stored form of an optional time.
func formatNullTime(t *time.Time) (sql.NullString, error) {
	if t == nil {
		return sql.NullString{}, nil
	}
	s, err := formatTime(*t)
	return sql.NullString{String: s, Valid: err == nil}, err
}

// parseNullTime decodes an optional time.
func parseNullTime(s sql.NullString) (*time.Time, error) {
	if !s.Valid {
		return nil, nil
	}
	t, err := parseTime(s.String)
	if err != nil {
		return nil, err
	}
	return &t, nil
}
