package httpapi

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/internal/jsontext"
)

// appendRunResult appends r as encodeJSON writes it (its final newline
// included) when runEncodable(r): the answer of nearly every run, written
// without reflection. ok is false, with buf as it was, for anything else
// (an insight's results, debug, a value encoding/json refuses), for
// encodeJSON to write or refuse.
//
// TestAppendRunResult and FuzzAppendRunResult check it against encodeJSON.
func appendRunResult(buf []byte, r *endpoint.RunResult) (_ []byte, ok bool) {
	if !runEncodable(r) {
		return buf, false
	}
	return appendRun(buf, r, nil), true
}

// runEncodable reports whether appendRun can write r whole: results that
// are rows ([][]any) of values encoding/json encodes, or their JSON (a
// cached answer's json.RawMessage), no debug, and times and a duration
// that encoding/json writes. It is checked before anything is written, so
// that an answer streamed never stops half-way for a value it cannot
// write.
func runEncodable(r *endpoint.RunResult) bool {
	if r.Debug != nil {
		return false
	}
	for _, at := range [...]*time.Time{r.EndpointMaterializedAt, r.EndpointVersionCreatedAt, r.LastRefresh} {
		if at != nil && !timeEncodable(*at) {
			return false
		}
	}
	if st := r.Statistics; st != nil && !finite(st.ElapsedMS) {
		return false
	}
	switch res := r.Results.(type) {
	case nil:
		return true
	case json.RawMessage:
		return res == nil || json.Valid(res)
	case [][]any:
		for _, row := range res {
			for _, v := range row {
				if !cellEncodable(v) {
					return false
				}
			}
		}
		return true
	}
	return false
}

// cellEncodable reports whether appendValue writes v as JSON, writing
// the rare value it must write to find out.
func cellEncodable(v any) bool {
	switch x := v.(type) {
	case nil, string, int64, int, int32, bool:
		return true
	case json.Number:
		return x == "" || validNumber(string(x))
	case []byte:
		return true
	case float64:
		return finite(x)
	case float32:
		return finite(float64(x))
	case time.Time:
		return timeEncodable(x)
	}
	_, err := appendValue(nil, v, true)
	return err == nil
}

// timeEncodable reports whether appendTimeText writes t (MarshalJSON
// does): a year of four digits and an offset under 24 hours. It is checked
// without formatting t; FuzzAppendRunResult checks it agrees.
func timeEncodable(t time.Time) bool {
	if y := t.Year(); y < 0 || y > 9999 {
		return false
	}
	_, off := t.Zone()
	return -24*3600 < off && off < 24*3600
}

// validNumber reports whether s is a JSON number (RFC 8259), as
// encoding/json requires of a json.Number it writes.
func validNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i, n = i+1, n+1
		}
		return n
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

func finite(f float64) bool { return !math.IsInf(f, 0) && !math.IsNaN(f) }

// answerSink is where appendRun spills an answer as it goes: w, once buf
// holds flushAt bytes. A write that fails (the client went away) ends the
// answer: failed stops the rows.
type answerSink struct {
	w      http.ResponseWriter
	failed bool
	err    error // the write that failed
}

// spill writes buf to the sink when it holds flushAt bytes or more, and
// returns the buffer to go on with; a nil sink keeps everything.
func (s *answerSink) spill(buf []byte) []byte {
	if s == nil || len(buf) < flushAt {
		return buf
	}
	s.write(buf)
	return buf[:0]
}

func (s *answerSink) write(b []byte) {
	if !s.failed && len(b) > 0 {
		if _, err := s.w.Write(b); err != nil {
			s.failed, s.err = true, fmt.Errorf("%w: %w", errWrite, err)
		}
	}
}

// appendRun appends r, which must be runEncodable, as encodeJSON writes
// it, spilling to sink (when not nil) as it goes: what it returns is the
// rest, not yet written.
func appendRun(buf []byte, r *endpoint.RunResult, sink *answerSink) []byte {
	buf = append(buf, `{"name":`...)
	buf = jsontext.AppendString(buf, r.Name)
	buf = append(buf, `,"endpoint_version":`...)
	buf = strconv.AppendInt(buf, int64(r.EndpointVersion), 10)
	buf = append(buf, `,"columns":`...)
	buf = appendStrings(buf, r.Columns)
	buf = append(buf, `,"types":`...)
	buf = appendStrings(buf, r.Types)
	buf = append(buf, `,"results":`...)
	switch res := r.Results.(type) {
	case [][]any:
		if buf = appendRows(buf, res, r, sink); sink != nil && sink.failed {
			return buf[:0]
		}
	case json.RawMessage:
		if res == nil {
			buf = append(buf, "null"...)
			break
		}
		if buf = appendCompact(buf, res, sink); sink != nil && sink.failed {
			return buf[:0]
		}
	default:
		buf = append(buf, "null"...)
	}
	buf = append(buf, `,"hasMore":`...)
	buf = strconv.AppendBool(buf, r.HasMore)
	buf = append(buf, `,"endpoint_materialized":`...)
	buf = strconv.AppendBool(buf, r.EndpointMaterialized)
	if r.EndpointMaterializedAt != nil {
		buf = append(buf, `,"endpoint_materialized_at":`...)
		buf = appendTime(buf, r.EndpointMaterializedAt)
	}
	if r.InlineReason != "" {
		buf = append(buf, `,"inline_reason":`...)
		buf = jsontext.AppendString(buf, r.InlineReason)
	}
	buf = append(buf, `,"execution_id":`...)
	buf = jsontext.AppendString(buf, r.ExecutionID)
	buf = append(buf, `,"endpoint_version_created_at":`...)
	buf = appendTime(buf, r.EndpointVersionCreatedAt)
	buf = append(buf, `,"is_cached":`...)
	buf = strconv.AppendBool(buf, r.IsCached)
	buf = append(buf, `,"last_refresh":`...)
	buf = appendTime(buf, r.LastRefresh)
	buf = append(buf, `,"statistics":`...)
	if st := r.Statistics; st == nil {
		buf = append(buf, "null"...)
	} else {
		buf = append(buf, `{"elapsed_ms":`...)
		buf, _ = appendFloat(buf, st.ElapsedMS, 64) // finite: runEncodable
		buf = append(buf, `,"rows_read":`...)
		buf = appendInt64Pointer(buf, st.RowsRead)
		buf = append(buf, `,"bytes_read":`...)
		buf = appendInt64Pointer(buf, st.BytesRead)
		buf = append(buf, '}')
	}
	return append(buf, "}\n"...)
}

// appendRows appends rows, whose values are cellEncodable, of the columns
// of r (their kinds r.ColumnKind, KindOther when unknown), as a JSON
// array, spilling to sink after each row.
func appendRows(buf []byte, rows [][]any, r *endpoint.RunResult, sink *answerSink) []byte {
	if rows == nil {
		return append(buf, "null"...)
	}
	buf = append(buf, '[')
	for i, row := range rows {
		if i > 0 {
			buf = append(buf, ',')
		}
		if row == nil {
			buf = append(buf, "null"...)
			continue
		}
		buf = append(buf, '[')
		for j, v := range row {
			if j > 0 {
				buf = append(buf, ',')
			}
			buf, _ = appendCell(buf, v, r.ColumnKind(j), true) // cellEncodable
		}
		buf = append(buf, ']')
		if buf = sink.spill(buf); sink != nil && sink.failed {
			return buf
		}
	}
	return append(buf, ']')
}

// appendCompact appends src, which is valid JSON, as json.Compact writes
// it: without the spaces between its tokens. With a sink, a stretch
// without spaces of flushAt bytes or more (a cached answer is one) is
// written from src itself instead of copied.
func appendCompact(buf, src []byte, sink *answerSink) []byte {
	start, inString := 0, false
	for i := 0; i < len(src); i++ {
		c := src[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case ' ', '\t', '\n', '\r':
			buf = appendStretch(buf, src[start:i], sink)
			start = i + 1
		}
	}
	return appendStretch(buf, src[start:], sink)
}

// appendStretch appends b, or writes it to sink after what buf holds when
// it is large.
func appendStretch(buf, b []byte, sink *answerSink) []byte {
	if sink == nil || len(b) < flushAt {
		return sink.spill(append(buf, b...))
	}
	sink.write(buf)
	sink.write(b)
	return buf[:0]
}

// appendStrings appends ss as a JSON array, nil as null.
func appendStrings(buf []byte, ss []string) []byte {
	if ss == nil {
		return append(buf, "null"...)
	}
	buf = append(buf, '[')
	for i, s := range ss {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = jsontext.AppendString(buf, s)
	}
	return append(buf, ']')
}

// appendTime appends t as time.Time's MarshalJSON writes it, nil as null;
// t is one MarshalJSON accepts (runEncodable checked it).
func appendTime(buf []byte, t *time.Time) []byte {
	if t == nil {
		return append(buf, "null"...)
	}
	buf, _ = appendTimeText(buf, *t, true)
	return buf
}

// appendTimeText appends t in RFC 3339 with nanoseconds, quoted when
// quoted, and refuses what time.Time's MarshalJSON refuses: a year not of
// four digits, an offset of 24 hours or more (go.dev/issue/54580).
func appendTimeText(buf []byte, t time.Time, quoted bool) ([]byte, error) {
	if quoted {
		buf = append(buf, '"')
	}
	n0 := len(buf)
	buf = t.AppendFormat(buf, time.RFC3339Nano)
	switch {
	case len(buf)-n0 < len("2006-01-02T15:04:05Z") || buf[n0+len("2006")] != '-':
		return buf, fmt.Errorf("unsupported time %s: the year is outside [0,9999]", t)
	case buf[len(buf)-1] != 'Z':
		c := buf[len(buf)-len("Z07:00")]
		h := buf[len(buf)-len("07:00"):]
		if '0' <= c && c <= '9' || 10*(h[0]-'0')+(h[1]-'0') >= 24 {
			return buf, fmt.Errorf("unsupported time %s: the offset is outside [0,23] hours", t)
		}
	}
	if quoted {
		buf = append(buf, '"')
	}
	return buf, nil
}

func appendInt64Pointer(buf []byte, n *int64) []byte {
	if n == nil {
		return append(buf, "null"...)
	}
	return strconv.AppendInt(buf, *n, 10)
}

// replyRun answers r in JSON, as reply would, when appendRunResult can
// write it; ok false, having written nothing, when it cannot. A large
// answer is written in pieces as it is encoded (flushAt), so that what a
// client slow to read it keeps is its rows, not a second, encoded copy of
// them. werr is the write that failed (the client went away), which ended
// the answer.
func replyRun(w http.ResponseWriter, r *endpoint.RunResult) (ok bool, werr error) {
	if !runEncodable(r) {
		return false, nil
	}
	setJSONHeaders(w)
	w.WriteHeader(http.StatusOK)
	bp := answerBuffers.Get().(*[]byte)
	sink := answerSink{w: w}
	b := appendRun((*bp)[:0], r, &sink)
	sink.write(b)
	if cap(b) <= maxPooledAnswer {
		*bp = b[:0]
		answerBuffers.Put(bp)
	}
	return true, sink.err
}

// answerBuffers recycles the buffers run answers are written in; one grown
// past maxPooledAnswer by a large answer is left to the collector.
var answerBuffers = sync.Pool{New: func() any { return new([]byte) }}

const maxPooledAnswer = 64 << 10
