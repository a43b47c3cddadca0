package endpoint_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/stretchr/testify/require"
)

// TestSecondsJSON: materialization_freshness reads seconds or a duration.
func TestSecondsJSON(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{`3600`, time.Hour, true}, {`"90m"`, 90 * time.Minute, true}, {`1`, time.Second, true},
		{`0`, 0, false}, {`-5`, 0, false}, {`1.5`, 0, false}, {`"1ms"`, 0, false}, {`"soon"`, 0, false},
		{`true`, 0, false}, {`"1500ms"`, 0, false}, {`null`, 0, true}, {`99999999999999999999`, 0, false},
	} {
		var s endpoint.Seconds
		err := json.Unmarshal([]byte(tc.in), &s)
		if tc.ok != (err == nil) || (tc.ok && time.Duration(s) != tc.want) {
			t.Errorf("%s: %v, %v", tc.in, time.Duration(s), err)
		}
		if !tc.ok && asError(t, err).Attr != "materialization_freshness" {
			t.Errorf("%s: %v", tc.in, err)
		}
	}
	b, _ := json.Marshal(endpoint.Seconds(2 * time.Hour))
	require.Equal(t, "7200", string(b), "marshal = %s", b)
}

// FuzzSecondsJSON: materialization_freshness never panics, and what it
// accepts is a positive whole number of seconds that marshals back to the
// same period.
func FuzzSecondsJSON(f *testing.F) {
	for _, seed := range []string{`3600`, `"90m"`, `"1h30m"`, `0`, `-1`, `1e3`, `"1.5h"`, `null`, `"`, `{}`, `9223372036`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var s endpoint.Seconds
		err := s.UnmarshalJSON([]byte(in))
		if err != nil {
			var e *endpoint.Error
			if !errors.As(err, &e) || e.Status != 400 || e.Attr != "materialization_freshness" {
				t.Fatalf("%q: %v is not a 400 naming the field", in, err)
			}
			return
		}
		d := time.Duration(s)
		if d == 0 && strings.TrimSpace(in) != "null" {
			t.Fatalf("%q: accepted as zero", in)
		}
		require.GreaterOrEqual(t, d, time.Duration(0), "%q: accepted as %v", in, d)
		require.Equal(t, time.Duration(0), d%time.Second, "%q: accepted as %v", in, d)
		b, _ := json.Marshal(s)
		var back endpoint.Seconds
		if err := json.Unmarshal(b, &back); d > 0 && (err != nil || back != s) {
			t.Fatalf("%q: %s reads back as %v, %v", in, b, time.Duration(back), err)
		}
	})
}
