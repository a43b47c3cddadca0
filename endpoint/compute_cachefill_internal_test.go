package endpoint

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCacheFillIsTheWholeEncoding: the rows a streamed run encodes for the
// result cache, one at a time, are the JSON encodeResults writes of them
// whole, byte for byte, by appendRowJSON or encoding/json: a float
// column's integral values as floats (256.0), an integer there as it is,
// HTML characters as they are, escapes, invalid UTF-8, NULL, booleans,
// bytes and times; and no rows is "[]".
func TestCacheFillIsTheWholeEncoding(t *testing.T) {
	s := &Service{cfg: Config{MaxCachedAnswerBytes: 1 << 20}}
	kinds := []ColumnKind{KindInteger, KindFloat, KindString, KindString, KindString}
	at := time.Date(2025, 1, 2, 3, 4, 5, 600, time.UTC)
	rows := [][]any{
		{int64(1), 256.0, "<b>&</b>", nil, []byte("xy")},
		{int64(-2), 2.5, "\"quoted\"", at, "é"},
		{int64(3), float32(4), "", nil, nil},
		{int64(4), int64(7), "tab\t\x00 \xff \u2028", true, 1e21},
		{int64(5), 1e-7, "日本", false, -0.0},
		{int64(math.MaxInt64), -3.0, nil, nil, 123456789.125},
	}
	f := s.newCacheFill("k", kinds)
	for _, r := range rows {
		f.add(r)
	}
	require.NoError(t, f.err)
	want, ok := encodeResults(rows, kinds)
	require.True(t, ok)
	assert.Equal(t, string(want), string(append(f.buf, ']')))
	assert.Equal(t, 256.0, rows[0][1], "the rows are left as they were")

	for _, r := range rows[3:] {
		_, ok := appendRowJSON(nil, r, kinds)
		assert.True(t, ok, "%v: written without encoding/json", r)
	}
	empty := s.newCacheFill("k", kinds)
	assert.Equal(t, "[]", string(append(empty.buf, ']')))
}

// TestCacheFillBounded: a fill holds at most MaxCachedAnswerBytes; past it,
// it lets go of what it held and says why (ErrAnswerNotCached); a value
// JSON cannot carry drops it too.
func TestCacheFillBounded(t *testing.T) {
	const limit = 1000
	s := &Service{cfg: Config{MaxCachedAnswerBytes: limit}}
	f := s.newCacheFill("k", []ColumnKind{KindInteger, KindString})
	for i := range 200 {
		f.add([]any{int64(i), "a value of some length"})
		if f.err != nil {
			break
		}
		assert.LessOrEqual(t, cap(f.buf), limit, "the buffer never grows past the bound")
	}
	require.ErrorIs(t, f.err, ErrAnswerNotCached)
	assert.Contains(t, f.err.Error(), "max_cached_answer_bytes (1000 bytes)")
	assert.Nil(t, f.buf)
	f.add([]any{int64(1), "x"})
	assert.Nil(t, f.buf, "a dropped fill stays dropped")

	nan := s.newCacheFill("k", []ColumnKind{KindFloat})
	nan.add([]any{math.NaN()})
	require.ErrorIs(t, nan.err, ErrAnswerNotCached)
	assert.True(t, errors.Is(nan.err, notCachedNotJSON))
}
