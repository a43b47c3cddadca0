package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// entryV6Of is the stored form that versions up to 5 of this package
// wrote: json.Marshal of it, every field present.
func entryV6Of(e driver.RunLogEntry) entryV6 {
	return entryV6{
		ExecutionID: e.ExecutionID, At: e.At, Version: e.Version, DurationMS: e.DurationMS,
		Rows: e.Rows, RowsRead: e.RowsRead, BytesRead: e.BytesRead, Status: e.Status, ErrorCode: e.ErrorCode,
		Refresh: e.Refresh, Cached: e.Cached, Materialized: e.Materialized, Token: e.Token, TokenKeyID: e.TokenKeyID,
	}
}

// entryCases are entries that set, leave out or strain every field of the
// stored form: zero pointers and zero values kept apart, strings that need
// escaping or hold invalid UTF-8, floats from tiny to huge.
func entryCases() []driver.RunLogEntry {
	zero, rows, read, bytes, neg := 0, 12, int64(1)<<53+1, int64(math.MaxInt64), int64(-7)
	at := time.Date(2026, 11, 26, 12, 0, 0, 123456789, time.UTC)
	return []driver.RunLogEntry{
		{},
		{ExecutionID: "0192f1a2-7c3e-7d4a-9b1c-000000000001", At: at, Version: 3, DurationMS: 0.412,
			Rows: &rows, RowsRead: &read, BytesRead: &bytes, Status: 200, Refresh: "blocking"},
		{ExecutionID: "e", Version: -1, DurationMS: 1e-7, Rows: &zero, RowsRead: &neg, Status: 400,
			ErrorCode: "unknown_variable", Refresh: "force_blocking", Cached: true, Materialized: true, Token: true, TokenKeyID: "2026-11"},
		{ExecutionID: "quote\" back\\ slash\n tab\t nul\x00 del\x7f <&>", DurationMS: 1e21, ErrorCode: "é ü 日本 😀",
			TokenKeyID: "bad \xff\xfe utf8", Refresh: "\u2028\u2029"},
		{ExecutionID: "x", DurationMS: -123456.789e-3, Status: math.MaxInt32, Version: math.MaxInt64},
		{ExecutionID: "y", DurationMS: math.SmallestNonzeroFloat64, Token: true},
		{ExecutionID: "z", DurationMS: math.MaxFloat64, Materialized: true},
	}
}

// decoded is what a reader of the stored form (this package's List, or
// an older version's) takes from text: the fields of entryV6 but At,
// which List reads from the column at_ns.
func decoded(t testing.TB, text []byte) driver.RunLogEntry {
	t.Helper()
	var r entryV6
	require.NoError(t, json.Unmarshal(text, &r), "json.Unmarshal(%s)", text)
	e := r.entry()
	e.At = time.Time{}
	return e
}

// stored is e as far as its stored form holds it.
func stored(e driver.RunLogEntry) driver.RunLogEntry {
	e.At, e.ProjectID, e.EndpointID, e.Seq, e.KeyID = time.Time{}, "", "", 0, ""
	return e
}

// TestRunLogEntryEncoding: the hand-written stored form is valid JSON
// that decodes to every field written, exactly as json.Marshal's form of
// the same entry (what versions up to 5 wrote) decodes.
func TestRunLogEntryEncoding(t *testing.T) {
	for i, e := range entryCases() {
		text, err := appendEntry(nil, e)
		require.NoError(t, err, "case %d: appendEntry", i)
		require.True(t, json.Valid(text), "case %d: %s is not valid JSON", i, text)
		old, err := json.Marshal(entryV6Of(e))
		require.NoError(t, err)
		got, fromOld := decoded(t, text), decoded(t, old)
		assert.Equal(t, fromOld, got, "case %d: %s decodes to, json.Marshal's form %s to", i, text, old)
		if want := stored(e); !strings.Contains(e.ExecutionID+e.ErrorCode+e.TokenKeyID+e.Refresh, "\xff") && !reflect.DeepEqual(got, want) {
			t.Errorf("case %d: %s decodes to %+v, want %+v", i, text, got, want)
		}
		assert.NotContains(t, string(text), `"at"`, "case %d: %s holds the instant, which at_ns holds", i, text)
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		_, err := appendEntry(nil, driver.RunLogEntry{DurationMS: f})
		assert.ErrorContains(t, err, "duration_ms", "appendEntry with duration %v", f)
	}
}

// FuzzRunLogEntryEncoding: whatever the strings and numbers of an entry
// (a token's kid comes from a request), its stored form is valid JSON that
// decodes as json.Marshal's form of it does.
func FuzzRunLogEntryEncoding(f *testing.F) {
	for _, e := range entryCases() {
		f.Add(e.ExecutionID, e.ErrorCode, e.TokenKeyID, e.DurationMS, int64(e.Version), int64(e.Status))
	}
	f.Fuzz(func(t *testing.T, id, code, kid string, ms float64, version, status int64) {
		e := driver.RunLogEntry{ExecutionID: id, ErrorCode: code, TokenKeyID: kid, Refresh: code, DurationMS: ms,
			Version: int(version), Status: int(status), RowsRead: &version, Token: status%2 == 0}
		text, err := appendEntry(nil, e)
		old, oldErr := json.Marshal(entryV6Of(e))
		require.Equal(t, oldErr != nil, err != nil, "appendEntry error %v, json.Marshal error %v", err, oldErr)
		if err != nil {
			return
		}
		require.True(t, json.Valid(text), "%q is not valid JSON", text)
		got, want := decoded(t, text), decoded(t, old)
		require.Equal(t, want, got, "%s decodes to, json.Marshal's form %s to", text, old)
	})
}

// TestRunLogReadsTheOldStoredForm: rows that versions up to 5 wrote (every
// field, and the instant, in the JSON) list with every field, beside rows
// written now, in order.
func TestRunLogReadsTheOldStoredForm(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Store) {
		now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
		l := s.RunLog(RunLogOptions{Now: func() time.Time { return now }})
		ctx := context.Background()
		cases := entryCases()
		var want []driver.RunLogEntry
		for i, e := range cases {
			e.ProjectID, e.EndpointID = "1", "e"
			e.At = now.Add(-time.Duration(len(cases)-i) * time.Minute)
			if i%2 == 1 {
				e.KeyID = "key-1"
			}
			if i%2 == 0 {
				insertOldRow(t, s, e, int64(i))
			} else if err := l.Append(ctx, e); err != nil {
				t.Fatal(err)
			}
			want = append(want, e)
		}
		got, next, err := l.List(ctx, "1", "e", driver.LogPage{Limit: 100})
		if err != nil || next != "" || len(got) != len(want) {
			t.Fatalf("List = %d entries, next %q, error %v; want %d", len(got), next, err, len(want))
		}
		for i, g := range got {
			w := want[len(want)-1-i]
			g.Seq, w.Seq = 0, 0
			if strings.Contains(w.ExecutionID+w.ErrorCode+w.TokenKeyID+w.Refresh, "\xff") {
				continue // stored with U+FFFD in its place, by either form
			}
			assert.True(t, g.At.Equal(w.At), "entry %d: At %v, want %v", i, g.At, w.At)
			g.At, w.At = time.Time{}, time.Time{}
			assert.Equal(t, w, g, "entry %d", i)
		}
	})
}

// insertOldRow writes e as versions up to 5 of this package did.
func insertOldRow(t testing.TB, s *Store, e driver.RunLogEntry, seq int64) {
	t.Helper()
	text, err := json.Marshal(entryV6Of(e))
	require.NoError(t, err)
	var keyID any
	if e.KeyID != "" {
		keyID = e.KeyID
	}
	_, err = s.db.Exec(`INSERT INTO `+runLogTable+` (project, endpoint_id, at_ns, seq, entry, key_id) VALUES (?, ?, ?, ?, ?, ?)`,
		e.ProjectID, e.EndpointID, e.At.UnixNano(), seq, string(text), keyID)
	require.NoError(t, err)
}

// The JSON form of an entry that schema version 6 stored a row each
// (column entry), which List still reads (entryV6): tests write it as
// version 6 did, and check the blocks' form against it.

// appendEntry appends the stored form of e (column entry) to b: the JSON
// object that json.Marshal makes of entryV6, written by hand (a
// reflective json.Marshal was a tenth of the run log's write), without the
// fields that are zero (which decode as the zero they are) nor "at" (the
// column at_ns holds the instant, and List reads it from there). A reader
// of an older version of this package decodes it as it decoded its own.
func appendEntry(b []byte, e driver.RunLogEntry) ([]byte, error) {
	b = append(b, `{"execution_id":`...)
	b = appendJSONString(b, e.ExecutionID)
	if e.Version != 0 {
		b = append(b, `,"version":`...)
		b = strconv.AppendInt(b, int64(e.Version), 10)
	}
	if e.DurationMS != 0 {
		if math.IsNaN(e.DurationMS) || math.IsInf(e.DurationMS, 0) {
			return b, errors.New("run log entry: duration_ms " + strconv.FormatFloat(e.DurationMS, 'g', -1, 64) + " is not a finite number")
		}
		b = append(b, `,"duration_ms":`...)
		b = appendJSONFloat(b, e.DurationMS)
	}
	if e.Rows != nil {
		b = append(b, `,"rows":`...)
		b = strconv.AppendInt(b, int64(*e.Rows), 10)
	}
	if e.RowsRead != nil {
		b = append(b, `,"rows_read":`...)
		b = strconv.AppendInt(b, *e.RowsRead, 10)
	}
	if e.BytesRead != nil {
		b = append(b, `,"bytes_read":`...)
		b = strconv.AppendInt(b, *e.BytesRead, 10)
	}
	if e.Status != 0 {
		b = append(b, `,"status":`...)
		b = strconv.AppendInt(b, int64(e.Status), 10)
	}
	if e.ErrorCode != "" {
		b = append(b, `,"error_code":`...)
		b = appendJSONString(b, e.ErrorCode)
	}
	if e.Refresh != "" {
		b = append(b, `,"refresh":`...)
		b = appendJSONString(b, e.Refresh)
	}
	if e.Cached {
		b = append(b, `,"is_cached":true`...)
	}
	if e.Materialized {
		b = append(b, `,"endpoint_materialized":true`...)
	}
	if e.Token {
		b = append(b, `,"token":true`...)
	}
	if e.TokenKeyID != "" {
		b = append(b, `,"token_kid":`...)
		b = appendJSONString(b, e.TokenKeyID)
	}
	return append(b, '}'), nil
}

// appendJSONFloat appends the finite f as encoding/json writes a float64:
// the shortest decimal that reads back as f, in exponent form only below
// 1e-6 and from 1e21.
func appendJSONFloat(b []byte, f float64) []byte {
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 to e-9, as encoding/json does.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}
