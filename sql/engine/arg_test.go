package engine

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/assert"
)

func TestConvert(t *testing.T) {
	at := time.Date(2025, 3, 4, 5, 6, 7, 800, time.UTC)
	day := time.Date(2025, 3, 4, 0, 0, 0, 0, time.UTC)
	paris := time.FixedZone("CET", 3600)
	tests := []struct {
		name       string
		in         any
		lite       any // SQLite, PostgreSQL and MySQL: times as UTC text
		ch, chType string
	}{
		{"string", "a'b", "a'b", "a'b", "String"},
		{"int64", int64(-42), int64(-42), "-42", "Int64"},
		{"float64", 2.5, 2.5, "2.5", "Float64"},
		{"large float", 1e21, 1e21, "1e+21", "Float64"},
		{"bool", true, true, "true", "Bool"},
		{"int", 7, int64(7), "7", "Int64"},
		{"int8", int8(-8), int64(-8), "-8", "Int64"},
		{"int16", int16(16), int64(16), "16", "Int64"},
		{"int32", int32(32), int64(32), "32", "Int64"},
		{"uint", uint(1), int64(1), "1", "Int64"},
		{"uint8", uint8(8), int64(8), "8", "Int64"},
		{"uint16", uint16(16), int64(16), "16", "Int64"},
		{"uint32", uint32(32), int64(32), "32", "Int64"},
		{"uint64", uint64(math.MaxInt64), int64(math.MaxInt64), "9223372036854775807", "Int64"},
		{"float32", float32(0.5), 0.5, "0.5", "Float64"},
		{"date", variable.Timestamp{Time: day, DateOnly: true}, "2025-03-04", "2025-03-04", "String"},
		{"date-time", variable.Timestamp{Time: at}, "2025-03-04 05:06:07", "2025-03-04 05:06:07", "String"},
		{"date-time not in UTC", variable.Timestamp{Time: at.In(paris)}, "2025-03-04 05:06:07", "2025-03-04 05:06:07", "String"},
		{"time.Time", at.In(paris), "2025-03-04 05:06:07", "2025-03-04 05:06:07", "String"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, d := range []Engine{SQLite, PostgreSQL, MySQL} {
				arg, chType, err := d.Arg(tt.in)
				assert.NoError(t, err)
				v := chType
				assert.True(t, (v == ""), "chType = %v, want it empty", v)
				got, want := arg, tt.lite
				assert.Equal(t, want, got, "%v: arg", d.Name())
			}
			arg, chType, err := ClickHouse.Arg(tt.in)
			assert.NoError(t, err)
			assert.Equal(t, tt.ch, arg)
			got, want := chType, tt.chType
			assert.Equal(t, want, got, "chType")
		})
	}
}

func TestConvertRejects(t *testing.T) {
	tests := []struct {
		in     any
		detail string
	}{
		{nil, "got null"},
		{[]int{1}, "got Go type []int"},
		{map[string]any{}, "got Go type map[string]interface {}"},
		{struct{}{}, "got Go type struct {}"},
		{[]any{"a"}, "got Go type []interface {}"},
		{uint64(math.MaxInt64) + 1, "does not fit a signed 64-bit integer"},
		{math.NaN(), "NaN is not a number"},
		{math.Inf(1), "+Inf is not a number"},
		{float32(math.Inf(-1)), "-Inf is not a number"},
	}
	for _, tt := range tests {
		for _, d := range All() {
			arg, _, err := d.Arg(tt.in)
			if v := arg; v != nil {
				t.Errorf("arg = %v, want nil", v)
			}
			var ae *ArgError
			if !errors.As(err, &ae) {
				t.Errorf("%s %#v: err = %v (%T), want an *ArgError", d.Name(), tt.in, err, err)
			} else if s, sub := ae.Detail, tt.detail; !strings.Contains(s, sub) {
				t.Errorf("%s %#v: %q does not contain %q", d.Name(), tt.in, s, sub)
			}
		}
	}
}
