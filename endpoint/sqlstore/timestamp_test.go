package sqlstore

import (
	"context"
	"database/sql"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTimeRoundTrip(t *testing.T) {
	paris := time.FixedZone("CEST", 2*60*60)
	tests := []struct {
		name string
		in   time.Time
		text string
	}{
		{"zero", time.Time{}, "0001-01-01T00:00:00.000000000Z"},
		{"nanoseconds", time.Date(2025, 6, 1, 12, 30, 45, 123456789, time.UTC), "2025-06-01T12:30:45.123456789Z"},
		{"whole second", time.Date(2025, 6, 1, 12, 30, 45, 0, time.UTC), "2025-06-01T12:30:45.000000000Z"},
		{"other zone becomes UTC", time.Date(2025, 6, 1, 14, 0, 0, 5, paris), "2025-06-01T12:00:00.000000005Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, err := formatTime(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.text, text)
			got, err := parseTime(text)
			require.NoError(t, err)
			assert.True(t, tt.in.Equal(got), "tt.in.Equal(got) is false")
			if got, want := got, tt.in.UTC(); !reflect.DeepEqual(got, want) {
				t.Errorf("comes back in UTC, equal as a value: got = %+v, want %+v", got, want)
			}
		})
	}
}

func TestTimeTextSortsInTimeOrder(t *testing.T) {
	a := time.Date(2025, 6, 1, 0, 0, 0, 999999999, time.UTC)
	b := time.Date(2025, 6, 1, 0, 0, 1, 0, time.UTC)
	ta, err := formatTime(a)
	require.NoError(t, err)
	tb, err := formatTime(b)
	require.NoError(t, err)
	if a, b := ta, tb; !(a < b) {
		t.Errorf("ta = %v, want < %v", a, b)
	}
}

func TestTimeOutsideRFC3339Years(t *testing.T) {
	for _, at := range []time.Time{
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 0, 0, 0, time.FixedZone("behind", -2*3600)), // UTC is in the next year
	} {
		_, err := formatTime(at)
		assert.ErrorContains(t, err, "outside the years", "%v", at)
	}
	_, err := formatTime(time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC))
	assert.NoError(t, err)

	s := openMemory(t)
	e, v := endpointFixture("p", "a")
	e.CreatedAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := s.Endpoints().Create(context.Background(), e, v); err == nil || !strings.Contains(err.Error(), "created_at") {
		t.Errorf("error %v does not contain %q", err, "created_at")
	}
	e, v = endpointFixture("p", "a")
	require.NoError(t, s.Endpoints().Create(context.Background(), e, v))
	err = s.Endpoints().MarkExecuted(context.Background(), "p", e.ID, time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC))
	assert.ErrorContains(t, err, "outside the years")
}

func TestNullTime(t *testing.T) {
	ns, err := formatNullTime(nil)
	require.NoError(t, err)
	assert.False(t, ns.Valid, "ns.Valid is true")
	got, err := parseNullTime(ns)
	require.NoError(t, err)
	assert.Nil(t, got)

	at := time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)
	ns, err = formatNullTime(&at)
	require.NoError(t, err)
	got, err = parseNullTime(ns)
	require.NoError(t, err)
	require.NotNil(t, got)
	if got, want := *got, at; !reflect.DeepEqual(got, want) {
		t.Errorf("*got = %+v, want %+v", got, want)
	}

	_, err = parseNullTime(sql.NullString{String: "yesterday", Valid: true})
	assert.Error(t, err)
}
