package variable

import (
	"testing"
	"time"
)

// BenchmarkParseDate measures the grammar alone on each family of forms; a
// run request's Date values and every insight date bound pass through it.
func BenchmarkParseDate(b *testing.B) {
	now := time.Date(2025, 6, 1, 9, 30, 0, 0, time.UTC)
	for _, bc := range []struct{ name, in string }{
		{"day", "2025-05-01"},
		{"datetime", "2025-05-01 12:30:00"},
		{"RFC3339", "2025-05-01T12:30:00+02:00"},
		{"relative", "-7d"},
		{"relative/month", "-1mStart"},
		{"rejected", "yesterday"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, err := ParseDate(bc.in, now)
				if (err != nil) != (bc.name == "rejected") {
					b.Fatal(err)
				}
			}
		})
	}
}
