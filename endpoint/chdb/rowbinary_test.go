//go:build chdb

package chdb

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/internal/stmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBinaryValues: each ClickHouse type reads from the binary answer as
// the other executors answer it.
func TestBinaryValues(t *testing.T) {
	x := executor(t)
	cases := []struct {
		expr string
		want any
	}{
		{"toInt8(-5)", int64(-5)},
		{"toInt16(-300)", int64(-300)},
		{"toInt32(-70000)", int64(-70000)},
		{"toInt64(-9000000000)", int64(-9000000000)},
		{"toUInt8(200)", int64(200)},
		{"toUInt16(60000)", int64(60000)},
		{"toUInt32(4000000000)", int64(4000000000)},
		{"toUInt64(9223372036854775807)", int64(9223372036854775807)},
		{"toUInt64('18446744073709551615')", "18446744073709551615"},
		{"toInt128(-42)", int64(-42)},
		{"toInt128('-170141183460469231731687303715884105728')", "-170141183460469231731687303715884105728"},
		{"toUInt256('115792089237316195423570985008687907853269984665640564039457584007913129639935')", "115792089237316195423570985008687907853269984665640564039457584007913129639935"},
		{"toFloat32(0.1)", 0.1},
		{"toFloat64(-2.5)", -2.5},
		{"nan", nil},
		{"1 / 0", nil},
		{"toDecimal32(-12.34, 2)", -12.34},
		{"toDecimal64(12.345, 3)", 12.345},
		{"toDecimal128(-1.5, 10)", -1.5},
		{"toDecimal256(2.25, 20)", 2.25},
		{"true", true},
		{"'héllo'", "héllo"},
		{"toFixedString('ab', 3)", "ab\x00"},
		{"toLowCardinality('lc')", "lc"},
		{"toUUID('61f0c404-5cb3-11e7-907b-a6006ad3dba0')", "61f0c404-5cb3-11e7-907b-a6006ad3dba0"},
		{"toIPv4('1.2.3.4')", "1.2.3.4"},
		{"toIPv6('2001:db8::1')", "2001:db8::1"},
		{"CAST('b' AS Enum8('a' = 1, 'b' = -2))", "b"},
		{"CAST('it''s' AS Enum16('x' = 1000, 'it\\'s' = 2000))", "it's"},
		{"toDate('2025-05-01')", time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC)},
		{"toDate32('1960-01-02')", time.Date(1960, 1, 2, 0, 0, 0, 0, time.UTC)},
		{"toDateTime('2025-05-01 10:11:12', 'Asia/Tokyo')", time.Date(2025, 5, 1, 1, 11, 12, 0, time.UTC)},
		{"toDateTime64('1969-12-31 23:59:59.25', 2, 'UTC')", time.Date(1969, 12, 31, 23, 59, 59, 250e6, time.UTC)},
		{"toDateTime64('2025-05-01 00:00:00.123456789', 9, 'UTC')", time.Date(2025, 5, 1, 0, 0, 0, 123456789, time.UTC)},
		{"NULL", nil},
		{"toNullable(3)", int64(3)},
		{"CAST(NULL AS Nullable(String))", nil},
		{"[1, 2, 3]", []any{int64(1), int64(2), int64(3)}},
		{"[[], ['a', NULL]]", []any{[]any{}, []any{"a", nil}}},
		{"tuple(1, 'a')", []any{int64(1), "a"}},
		{"CAST((1, 'z') AS Tuple(n Int64, s String))", []any{int64(1), "z"}},
		{"map('k', 1, 'l', 2)", map[string]any{"k": int64(1), "l": int64(2)}},
		{"toIntervalDay(3)", int64(3)},
		{`'{"a": 1}'::JSON`, `{"a":1}`},
		{`'{"a": {"b": [1, 2]}}'::JSON(max_dynamic_paths = 2)`, `{"a":{"b":[1,2]}}`},
	}
	for _, c := range cases {
		res, err := x.Query(context.Background(), stmt.New("SELECT "+c.expr+" AS v", nil), driver.Bounds{})
		if !assert.NoError(t, err, "%s", c.expr) {
			continue
		}
		got, want := res.Rows[0][0], c.want
		assert.Equal(t, want, got, "%s (%s): res.Rows[0][0]", c.expr, res.Types[0])
	}
}

// TestBinaryUnknownType: a column of a type the decoder does not read
// fails naming the column and the type, never a wrong value.
func TestBinaryUnknownType(t *testing.T) {
	_, err := executor(t).Query(context.Background(), stmt.New("SELECT uniqState(1) AS v", nil), driver.Bounds{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "column v: type AggregateFunction(uniq, UInt8) is not one the executor reads")
}

// TestBinaryTruncated: an answer that ends inside a value is an error, not
// a short read.
func TestBinaryTruncated(t *testing.T) {
	// 1 column "n" of type Int64 and a value of 3 bytes.
	out := string([]byte{1, 1, 'n', 5, 'I', 'n', 't', '6', '4', 1, 2, 3})
	_, err := decode(out, driver.Bounds{}, 0)
	require.ErrorIs(t, err, errShort)
	_, err = decode(out[:4], driver.Bounds{}, 0)
	require.ErrorIs(t, err, errShort)
}

func TestSplitType(t *testing.T) {
	for typ, want := range map[string][]string{
		"String":                             nil,
		"Map(String, Array(Int64))":          {"String", "Array(Int64)"},
		"Enum8('a,(' = 1, 'b\\'' = 2)":       {"'a,(' = 1", "'b\\'' = 2"},
		"Tuple(a Nullable(String), b Int64)": {"a Nullable(String)", "b Int64"},
	} {
		_, args := splitType(typ)
		got, want := args, want
		assert.Equal(t, want, got, "%v: args", typ)
	}
}

// TestSettingsTravelWithTheQuery: the memory limits and the time zone
// (the session's, see TestRunCannotEscapeTheSession), the time limit and
// readonly (in its SETTINGS clause, no statement of their own) are a
// run's.
func TestSettingsTravelWithTheQuery(t *testing.T) {
	x := executor(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	res, err := x.Query(ctx, stmt.New("SELECT getSetting('max_memory_usage') AS m, getSetting('max_bytes_before_external_group_by') AS g, "+
		"getSetting('max_execution_time') AS t, getSetting('readonly') AS r, getSetting('session_timezone') AS z", nil), driver.Bounds{})
	require.NoError(t, err)
	assert.Equal(t, []any{int64(DefaultMaxMemoryUsage), int64(DefaultMaxBytesBeforeExternalGroupBy), 90.0, int64(1), "UTC"}, res.Rows[0])

	res, err = x.Read(context.Background(), "SELECT getSetting('max_memory_usage') AS m", nil)
	require.NoError(t, err)
	got, want := res.Rows[0][0], int64(DefaultMaxMemoryUsage)
	assert.Equal(t, want, got, "the host's reads carry the limits too: res.Rows[0][0]")

	// What a session statement would leave behind is not there.
	require.NoError(t, x.Exec(context.Background(), []driver.Statement{stmt.New("SELECT getSetting('max_memory_usage')", nil)}, driver.Write{Tx: false}))

	limits := limitsOf(sessionOf(options{maxMemory: 1 << 20, externalGroupBy: 1 << 19}))
	assert.Contains(t, limits, "max_memory_usage = 1048576, max_bytes_before_external_group_by = 524288")
}

// TestMemoryLimit: a query past its memory limit (the default, 1 GiB)
// fails with the engine's error, the query's fault, naming the setting;
// the engine refuses the allocation before it makes it.
func TestMemoryLimit(t *testing.T) {
	x := executor(t)
	_, err := x.Query(context.Background(), stmt.New("SELECT length(range(300000000)) AS n", nil), driver.Bounds{})
	require.Error(t, err)
	var qe *driver.QueryError
	require.ErrorAs(t, err, &qe)
	assert.Contains(t, qe.Message, "maximum: 1.00 GiB (the query's memory limit, max_memory_usage)")
	assert.NotContains(t, qe.Message, "SELECT", "not the statement it ran")
	assert.Contains(t, errors.Unwrap(qe).Error(), "MEMORY_LIMIT_EXCEEDED")

	// A statement without SETTINGS (a refresh's, the host's) has the
	// session's limit.
	err = x.Exec(context.Background(), []driver.Statement{stmt.New("CREATE TEMPORARY TABLE big AS SELECT length(range(300000000)) AS n", nil)}, driver.Write{Tx: false})
	require.ErrorAs(t, err, &qe)
	assert.Contains(t, qe.Message, "max_memory_usage")
}

// TestMaxRowsStopsTheEngine: a run's row bound stops the engine near it
// (max_result_rows with 'break'), as a LIMIT would, instead of computing
// every row for the executor to drop.
func TestMaxRowsStopsTheEngine(t *testing.T) {
	res, err := executor(t).Query(context.Background(), stmt.New("SELECT number AS n FROM numbers(10000000)", nil), driver.Bounds{MaxRows: 10})
	require.NoError(t, err)
	require.Len(t, res.Rows, 10)
	assert.Equal(t, int64(9), res.Rows[9][0])
	a, b := *res.RowsRead, int64(1000000)
	assert.True(t, (a < b), "the engine stopped early: *res.RowsRead = %v, want < %v", a, b)
	// The next statement runs (a result limit that throws hangs chDB's
	// next statement; 'break' does not).
	res, err = executor(t).Query(context.Background(), stmt.New("SELECT 1 AS one", nil), driver.Bounds{})
	require.NoError(t, err)
	assert.Equal(t, int64(1), res.Rows[0][0])
}

// TestFailedAnswerDoesNotLeak: what a statement that failed while it ran
// had written of its answer (chDB keeps it for the next statement) never
// reaches the next query's answer.
func TestFailedAnswerDoesNotLeak(t *testing.T) {
	x := executor(t)
	ctx := context.Background()
	for _, failing := range []string{
		"SELECT rank() AS r",
		"SELECT number AS secret, throwIf(number = 300000) AS t FROM numbers(400000)",
	} {
		_, err := x.Query(ctx, stmt.New(failing, nil), driver.Bounds{})
		require.Error(t, err, "%v: got no error, want one", failing)
		res, err := x.Query(ctx, stmt.New("SELECT 'next' AS v", nil), driver.Bounds{})
		require.NoError(t, err, "after %s", failing)
		got, want := res.Columns, ([]string{"v"})
		assert.Equal(t, want, got, "after %s: res.Columns", failing)
		if got, want := res.Rows, ([][]any{{"next"}}); !reflect.DeepEqual(got, want) {
			t.Errorf("after %s: res.Rows = %+v, want %+v", failing, got, want)
		}
	}
}

// TestBinaryManyRows: an answer of many rows of changing sizes, read in
// blocks sized by the rows read so far, comes back whole and in order,
// each row its own (a row never shares a value with the next), within
// b.MaxRows, and failing past b.MaxBytes.
func TestBinaryManyRows(t *testing.T) {
	x := executor(t)
	const n = 5000
	// Rows of 1 to ~400 bytes, short ones first: the block estimate from
	// the first rows is too small for the later ones.
	q := stmt.New("SELECT number AS i, repeat('x', intDiv(number * number, 62500)) AS s, toDateTime(number * 3600, 'UTC') AS t, "+
		"number / 4 AS f, -toInt64(number) * 1000 AS neg FROM numbers(5000) ORDER BY i", nil)
	for _, maxRows := range []int{0, 1, 17, 2500, n} {
		res, err := x.Query(context.Background(), q, driver.Bounds{MaxRows: maxRows})
		require.NoError(t, err, "MaxRows %d", maxRows)
		want := n
		if maxRows > 0 {
			want = maxRows
		}
		got := len(res.Rows)
		require.Equal(t, want, got, "MaxRows %d: len(res.Rows)", maxRows)
		for i, row := range res.Rows {
			u := uint64(i)
			wantRow := []any{int64(i), strings.Repeat("x", int(u*u/62500)), time.Unix(int64(i)*3600, 0).UTC(), float64(i) / 4, -int64(i) * 1000}
			require.Equal(t, wantRow, row, "MaxRows %d: row %d = %v (cap %d), want %v", maxRows, i, row, cap(row), wantRow)
			require.Len(t, row, cap(row), "MaxRows %d: row %d = %v (cap %d), want %v", maxRows, i, row, cap(row), wantRow)
		}
	}
	all, err := x.Query(context.Background(), q, driver.Bounds{})
	require.NoError(t, err)
	var size int64
	for _, row := range all.Rows {
		size += driver.RowBytes(row)
	}
	if _, err := x.Query(context.Background(), q, driver.Bounds{MaxBytes: size}); err != nil {
		t.Fatalf("MaxBytes %d, the answer's size: unexpected error: %v", size, err)
	}
	if _, err := x.Query(context.Background(), q, driver.Bounds{MaxBytes: size - 1}); !errors.Is(err, driver.ErrResultTooLarge) {
		t.Fatalf("MaxBytes %d: error %v is not %v", size-1, err, driver.ErrResultTooLarge)
	}
}

// TestBinaryAllocatesWhatTheRowsNeed: reading an answer allocates about
// what its rows hold (their values, the boxes of their strings and
// integers, the slice of rows), not blocks sized for a larger answer: a
// row of one value takes a few hundred bytes, not a block of 256 rows.
func TestBinaryAllocatesWhatTheRowsNeed(t *testing.T) {
	x := executor(t)
	for _, c := range []struct {
		query string
		rows  int
		// need is what the rows need: per row its slot in Rows (24 bytes),
		// its values (16 bytes each) and their boxes (a string's header
		// and its bytes, copied out of the answer).
		need int
	}{
		{"SELECT 'one' AS s", 1, 24 + 16 + 16 + 3},
		{"SELECT toString(number) AS s, number + 1000 AS n FROM numbers(5000)", 5000, 5000*(24+2*16+16+8) + 10 + 90*2 + 900*3 + 4000*4},
	} {
		out, st, err := x.run(context.Background(), c.query, resultFormat, nil)
		require.NoError(t, err, "%s", c.query)
		require.Equal(t, c.rows, st.answered, "%s: the engine says it answered", c.query)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		res, err := decode(out, driver.Bounds{MaxRows: 20_000}, st.answered)
		runtime.ReadMemStats(&after)
		require.NoError(t, err, "%s: %d rows, error %v; want %d rows", c.query, len(res.Rows), err, c.rows)
		require.Len(t, res.Rows, c.rows, "%s: %d rows, error %v; want %d rows", c.query, len(res.Rows), err, c.rows)
		// The header's names and types, the Result: a few hundred bytes.
		got, limit := int(after.TotalAlloc-before.TotalAlloc), c.need+c.need/8+512
		assert.LessOrEqual(t, got, limit, "%s: decode allocated", c.query)
	}
}

// TestBinaryHintSizesOnly: the rows the engine says it answered size
// what decode allocates and nothing else: with no hint, one too small,
// too large or absurd, the rows read are the same, within the same
// bounds.
func TestBinaryHintSizesOnly(t *testing.T) {
	x := executor(t)
	out, st, err := x.run(context.Background(), "SELECT toString(number) AS s, number * 1000 AS n, number AS small, "+
		"if(number % 3 = 0, '', repeat('y', number % 200)) AS e, toNullable(toString(number)) AS ns FROM numbers(3000)", resultFormat, nil)
	require.NoError(t, err)
	want, err := decode(out, driver.Bounds{}, st.answered)
	require.NoError(t, err, "%d rows, error %v; want 3000 rows", len(want.Rows), err)
	require.Len(t, want.Rows, 3000, "%d rows, error %v; want 3000 rows", len(want.Rows), err)
	var size int64
	for _, row := range want.Rows {
		size += driver.RowBytes(row)
	}
	for _, hint := range []int{0, 1, 2999, 3000, 3001, 1 << 30} {
		for _, b := range []driver.Bounds{{}, {MaxRows: 17}, {MaxRows: 3000}, {MaxBytes: size}} {
			res, err := decode(out, b, hint)
			require.NoError(t, err, "hint %d, %+v", hint, b)
			rows := want.Rows
			if b.MaxRows > 0 {
				rows = rows[:b.MaxRows]
			}
			require.Equal(t, rows, res.Rows, "hint %d, %+v: the rows differ from those read with the engine's count", hint, b)
		}
		_, err := decode(out, driver.Bounds{MaxBytes: size - 1}, hint)
		require.ErrorIs(t, err, driver.ErrResultTooLarge, "hint %d, MaxBytes %d", hint, size-1)
	}
}

// FuzzDecode: decode never panics on an answer cut or changed anywhere,
// the hint changes nothing of what it reads, and what it reads keeps
// nothing of the answer's memory.
func FuzzDecode(f *testing.F) {
	x := executor(f)
	for _, q := range []string{
		"SELECT toString(number) AS s, number * 1000 AS n, -toInt64(number) AS i, toNullable(toString(number)) AS ns FROM numbers(20)",
		"SELECT repeat('x', 200) AS long, '' AS empty, 300 AS n",
		"SELECT [1, 2] AS a, map('k', 'v') AS m, toDateTime(0, 'UTC') AS t, 1.5 AS f",
	} {
		out, st, err := x.run(context.Background(), q, resultFormat, nil)
		require.NoError(f, err, "%s", q)
		f.Add(out, st.answered, 0)
		f.Add(out[:len(out)-3], st.answered, 5)
	}
	f.Fuzz(func(t *testing.T, out string, hint, maxRows int) {
		b := driver.Bounds{MaxRows: max(maxRows, 0) % 100}
		want, wantErr := decode(out, b, 0)
		// Read from a buffer written over once decode returns, as chDB's
		// is freed: the rows are the same.
		buf := []byte(out)
		got, err := decode(unsafe.String(unsafe.SliceData(buf), len(buf)), b, hint)
		clear(buf)
		require.Equal(t, wantErr == nil, err == nil, "hint %d: error %v, without it %v", hint, err, wantErr)
		if err == nil && !reflect.DeepEqual(got.Rows, want.Rows) {
			t.Fatalf("hint %d: rows %v, without it %v", hint, got.Rows, want.Rows)
		}
	})
}

// TestStringsOutliveTheAnswer: decode copies every string it answers out
// of the answer (read decodes chDB's buffer, which is freed once decode
// returns): no string of the rows points into the answer, and each reads
// the same once the answer is written over and the collector has run,
// whether it is kept as the row's interface, as a string copied out of
// it, or only through Rows (the strings' chunks hide their headers'
// pointers from the collector; see strArena).
func TestStringsOutliveTheAnswer(t *testing.T) {
	x := executor(t)
	out, st, err := x.run(context.Background(), "SELECT toString(number) AS s, repeat('x', number % 300) AS long, "+
		"toFixedString(toString(number % 7), 2) AS fixed, [toString(number), ''] AS list, map(toString(number), 'v') AS m, "+
		"toUUID('61f0c404-5cb3-11e7-907b-a6006ad3dba0') AS u, toNullable(toString(number)) AS ns FROM numbers(3000)", resultFormat, nil)
	require.NoError(t, err)
	want, err := decode(out, driver.Bounds{}, st.answered)
	require.NoError(t, err, "%d rows, error %v; want 3000 rows", len(want.Rows), err)
	require.Len(t, want.Rows, 3000, "%d rows, error %v; want 3000 rows", len(want.Rows), err)
	buf := []byte(out)
	lo, hi := uintptr(unsafe.Pointer(unsafe.SliceData(buf))), uintptr(unsafe.Pointer(unsafe.SliceData(buf)))+uintptr(len(buf))
	res, err := decode(unsafe.String(unsafe.SliceData(buf), len(buf)), driver.Bounds{}, st.answered)
	require.NoError(t, err)
	var strs int
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			strs++
			if p := uintptr(unsafe.Pointer(unsafe.StringData(v))); len(v) > 0 && p >= lo && p < hi {
				t.Fatalf("%q points into the answer", v)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for k, e := range v {
				walk(k)
				walk(e)
			}
		}
	}
	for _, c := range append(res.Columns, res.Types...) {
		walk(c)
	}
	for _, row := range res.Rows {
		walk(row)
	}
	require.GreaterOrEqual(t, strs, int(3000*7), "walked")
	cell, text := res.Rows[2999][1], res.Rows[2999][1].(string)
	rows := res.Rows
	res = nil
	clear(buf)
	// The collector runs with only these kept, and what it freed is
	// allocated again.
	for range 3 {
		runtime.GC()
		garbage := make([][]byte, 0, 1000)
		for range 1000 {
			garbage = append(garbage, bytes.Repeat([]byte{0xff}, 512))
		}
		runtime.KeepAlive(garbage)
	}
	if wantText := strings.Repeat("x", 2999%300); cell != wantText || text != wantText {
		t.Fatalf("the kept value is %q and the copied string %q, want %q", cell, text, wantText)
	}
	require.Equal(t, want.Rows, rows, "the rows changed once the answer was written over and the collector ran")
}

// TestZeroWidthRows: an answer whose rows take no bytes (columns of
// FixedString(0) or Nothing) but that goes on is an error, not a loop
// that reads rows for ever, until memory runs out (as decode did before).
func TestZeroWidthRows(t *testing.T) {
	for _, typ := range []string{"FixedString(0)", "Nothing"} {
		out := string(append([]byte{1, 1, 'v', byte(len(typ))}, typ+"\x01"...))
		_, err := decode(out, driver.Bounds{}, 0)
		assert.ErrorIs(t, err, errEmptyRow, "%s", typ)
	}
}

// TestDecimalLen: decode weighs an integer as driver.RowBytes does.
func TestDecimalLen(t *testing.T) {
	for _, v := range []int64{0, 1, 9, 10, 99, 100, 255, 256, 999, 1000, -1, -9, -10, -99, 1<<63 - 1, -1 << 63, -(1<<63 - 1), 1234567890123} {
		got, want := decimalLen(v), driver.RowBytes([]any{v})-3
		assert.Equal(t, want, got, "decimalLen(%d)", v)
	}
}

// BenchmarkDecodeUsers decodes an answer of the shape of
// BenchmarkChDBRun/group10k (10,000 rows of a String, a UInt64 and a
// String) without the engine: library, with decode (the strings copied
// out, as from chDB's buffer); hand, as decodeUsers reads it. Both in
// turn, each iteration one of each, reporting the ratio of their medians
// (library/hand): what decode and the collector's work on what it
// allocates cost next to the leanest reading.
//
//	go test -tags chdb -run '^$' -bench BenchmarkDecodeUsers -benchtime 300x ./endpoint/chdb/
func BenchmarkDecodeUsers(b *testing.B) {
	out, st, err := executor(b).run(context.Background(), "SELECT concat('user-', leftPad(toString(number), 5, '0')) AS distinct_id, "+
		"toUInt64(number % 40) AS n, toString(toDateTime('2025-01-01 00:00:00', 'UTC') + number * 61) AS last FROM numbers(10000)", resultFormat, nil)
	require.NoError(b, err)
	var lib, hand []time.Duration
	for i := 0; b.Loop(); i++ {
		for k := range 2 {
			start := time.Now()
			if (i+k)%2 == 0 {
				res, err := decode(out, driver.Bounds{MaxRows: 20_001, MaxBytes: 10 << 20}, st.answered)
				require.NoError(b, err, "%d rows, error %v", len(res.Rows), err)
				require.Len(b, res.Rows, 10000, "%d rows, error %v", len(res.Rows), err)
				lib = append(lib, time.Since(start))
			} else {
				n, err := decodeUsers(out, 10000)
				require.NoError(b, err, "%d rows, error %v", n, err)
				require.Equal(b, 10000, n, "%d rows, error %v", n, err)
				hand = append(hand, time.Since(start))
			}
		}
	}
	l, h := median(lib), median(hand)
	b.ReportMetric(float64(l.Microseconds()), "library-us")
	b.ReportMetric(float64(h.Microseconds()), "hand-us")
	b.ReportMetric(float64(l)/float64(h), "library/hand")
}
