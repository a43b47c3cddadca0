package sqlstore

import (
	"errors"
	"math"
	"strconv"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

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
