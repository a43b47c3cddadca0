package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
)

// appendRunResult appends r as encodeJSON writes it (its final newline
// included) when its results are rows ([][]any) or their JSON (a cached
// answer's json.RawMessage) and it asks for no debug: the answer of nearly
// every run, written without reflection. ok is false for anything else (an
// insight's results, debug, a value the rows' encoder leaves to
// encoding/json and that it refuses), for encodeJSON to write or refuse;
// buf may then hold part of the answer.
//
// TestAppendRunResult and FuzzAppendRunResult check it against encodeJSON.
func appendRunResult(buf []byte, r *endpoint.RunResult) (_ []byte, ok bool) {
	if r.Debug != nil {
		return buf, false
	}
	buf = append(buf, `{"name":`...)
	buf = appendJSONString(buf, r.Name)
	buf = append(buf, `,"endpoint_version":`...)
	buf = strconv.AppendInt(buf, int64(r.EndpointVersion), 10)
	buf = append(buf, `,"columns":`...)
	buf = appendStrings(buf, r.Columns)
	buf = append(buf, `,"types":`...)
	buf = appendStrings(buf, r.Types)
	buf = append(buf, `,"results":`...)
	switch res := r.Results.(type) {
	case [][]any:
		if res == nil {
			buf = append(buf, "null"...)
			break
		}
		buf = append(buf, '[')
		for i, row := range res {
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
				var err error
				if buf, err = appendValue(buf, v, true); err != nil {
					return buf, false
				}
			}
			buf = append(buf, ']')
		}
		buf = append(buf, ']')
	case json.RawMessage:
		if res == nil {
			buf = append(buf, "null"...)
			break
		}
		b := bytes.NewBuffer(buf)
		if json.Compact(b, res) != nil {
			return b.Bytes(), false
		}
		buf = b.Bytes()
	case nil:
		buf = append(buf, "null"...)
	default:
		return buf, false
	}
	buf = append(buf, `,"hasMore":`...)
	buf = strconv.AppendBool(buf, r.HasMore)
	buf = append(buf, `,"endpoint_materialized":`...)
	buf = strconv.AppendBool(buf, r.EndpointMaterialized)
	if r.EndpointMaterializedAt != nil {
		buf = append(buf, `,"endpoint_materialized_at":`...)
		if buf, ok = appendTime(buf, r.EndpointMaterializedAt); !ok {
			return buf, false
		}
	}
	if r.InlineReason != "" {
		buf = append(buf, `,"inline_reason":`...)
		buf = appendJSONString(buf, r.InlineReason)
	}
	buf = append(buf, `,"execution_id":`...)
	buf = appendJSONString(buf, r.ExecutionID)
	buf = append(buf, `,"endpoint_version_created_at":`...)
	if buf, ok = appendTime(buf, r.EndpointVersionCreatedAt); !ok {
		return buf, false
	}
	buf = append(buf, `,"is_cached":`...)
	buf = strconv.AppendBool(buf, r.IsCached)
	buf = append(buf, `,"last_refresh":`...)
	if buf, ok = appendTime(buf, r.LastRefresh); !ok {
		return buf, false
	}
	buf = append(buf, `,"statistics":`...)
	if st := r.Statistics; st == nil {
		buf = append(buf, "null"...)
	} else {
		var err error
		buf = append(buf, `{"elapsed_ms":`...)
		if buf, err = appendFloat(buf, st.ElapsedMS, 64); err != nil {
			return buf, false
		}
		buf = append(buf, `,"rows_read":`...)
		buf = appendInt64Pointer(buf, st.RowsRead)
		buf = append(buf, `,"bytes_read":`...)
		buf = appendInt64Pointer(buf, st.BytesRead)
		buf = append(buf, '}')
	}
	return append(buf, "}\n"...), true
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
		buf = appendJSONString(buf, s)
	}
	return append(buf, ']')
}

// appendTime appends t as time.Time's MarshalJSON writes it, nil as null;
// false for a time MarshalJSON refuses.
func appendTime(buf []byte, t *time.Time) ([]byte, bool) {
	if t == nil {
		return append(buf, "null"...), true
	}
	b, err := appendTimeText(buf, *t, true)
	return b, err == nil
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
// write it; false, having written nothing, when it cannot.
func replyRun(w http.ResponseWriter, r *endpoint.RunResult) bool {
	bp := answerBuffers.Get().(*[]byte)
	b, ok := appendRunResult((*bp)[:0], r)
	if ok {
		writeBytes(w, http.StatusOK, b)
	}
	if cap(b) <= maxPooledAnswer {
		*bp = b[:0]
		answerBuffers.Put(bp)
	}
	return ok
}

// answerBuffers recycles the buffers run answers are written in; one grown
// past maxPooledAnswer by a large answer is left to the collector.
var answerBuffers = sync.Pool{New: func() any { return new([]byte) }}

const maxPooledAnswer = 64 << 10
