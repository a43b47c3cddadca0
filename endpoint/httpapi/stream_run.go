package httpapi

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/endpointkit/endpointkit/endpoint"
)

// runLines answers a run in a line format (CSV, NDJSON) as the engine
// reads its rows (endpoint.Service.RunRows): the rows are written as they
// come, never held whole. The status and headers wait for the first
// flushAt bytes: an answer that ends before them (most answers) is sent
// as stream sends one, X-Endpointkit-Has-More a header, and a run that
// fails before them answers its error with its status, as a run that is
// not streamed does. A longer answer is sent before its end is known: its
// X-Endpointkit-Has-More is then a trailer, as X-Endpointkit-Error is, and
// a failure past its first byte (a limit of the run, the engine, the
// bound on the body) ends it with the format's error line and the
// X-Endpointkit-Error trailer. release is called once the run ends: a
// streamed run holds its slot while it writes (bounded by the write
// timeout).
//
// f is a lineFormat or a host format that streams (StreamFormat): the
// latter's Begin, Row and Close write into the same gathered bytes, and a
// cut answer ends where it was, with the trailer only (a Parquet file
// without its footer, which its readers refuse).
func (h *handler) runLines(w http.ResponseWriter, r *http.Request, project string, req endpoint.RunRequest, f answerFormat, release func()) error {
	lw := &linesWriter{h: h, w: w, r: r, f: f, limit: h.maxAnswer()}
	res, err := h.svc.RunRows(r.Context(), project, r.PathValue("name"), req, lw)
	release()
	if !lw.begun {
		if err != nil {
			return err
		}
		h.writeDeadline(w)
		return h.answer(w, r, f, res, res.Columns, res.Types, res.Results, res.HasMore, res.ExecutionID)
	}
	return lw.end(res, err)
}

// streamed reports whether a run answered in f is written as its rows
// come (runLines): the line formats, and a host's StreamFormat.
func streamed(f answerFormat) bool {
	switch f := f.(type) {
	case lineFormat:
		return true
	case hostFormat:
		_, ok := f.Format.(StreamFormat)
		return ok
	}
	return false
}

// linesWriter is the endpoint.RowWriter of runLines.
type linesWriter struct {
	h     *handler
	w     http.ResponseWriter
	r     *http.Request
	f     answerFormat
	limit int64 // the bound on the body, -1 for none
	begun bool
	sent  bool // status and headers sent
	head  *endpoint.RunResult
	t     *Table     // the head, for the format's lines
	lw    lineWriter // a line format's lines
	rw    RowsWriter // a StreamFormat's rows
	buf   []byte
	left  int64 // bytes left under limit
	rows  int
	cause error // the failure that ended the rows (not the run's)
}

// Begin implements endpoint.RowWriter.
func (l *linesWriter) Begin(head *endpoint.RunResult) error {
	l.begun, l.head = true, head
	l.t = &Table{Columns: head.Columns, Types: head.Types, Kinds: head.ColumnKinds(), rows: func(func([]any, error) bool) {}}
	l.left = l.limit
	l.h.writeDeadline(l.w)
	if hf, ok := l.f.(hostFormat); ok {
		l.buf = make([]byte, 0, flushAt+4096)
		rw, err := hf.Format.(StreamFormat).Begin(bodyWriter{l}, l.t)
		if err != nil {
			if l.cause == nil {
				l.cause = err
			}
			return l.cause
		}
		l.rw = rw
		return nil
	}
	l.lw = l.f.(lineFormat).lines(l.t.Names(), l.t.Kinds)
	l.buf = l.lw.head(make([]byte, 0, flushAt+4096), l.t)
	if l.limit >= 0 && int64(len(l.buf)) > l.limit {
		l.buf = l.buf[:0]
		l.cause = errAnswerTooLarge
		return l.cause
	}
	return nil
}

// bodyWriter is the io.Writer a StreamFormat writes its answer to: the
// bytes gather in l.buf, counted against the bound, and go out by
// flushAt as a line format's do.
type bodyWriter struct{ l *linesWriter }

// Write writes b whole or not at all.
func (b bodyWriter) Write(p []byte) (int, error) {
	l := b.l
	if l.cause != nil {
		return 0, l.cause
	}
	if l.limit >= 0 && int64(len(l.buf))+int64(len(p)) > l.left {
		l.cause = errAnswerTooLarge
		return 0, l.cause
	}
	l.buf = append(l.buf, p...)
	if len(l.buf) >= flushAt {
		if !l.sent {
			l.send(nil)
		}
		if err := l.flush(); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Row implements endpoint.RowWriter.
func (l *linesWriter) Row(row []any) error {
	if l.rw != nil {
		if err := l.rw.Row(row); err != nil {
			if l.cause == nil {
				l.cause = err
			}
			return l.cause
		}
		l.rows++
		return nil
	}
	mark := len(l.buf)
	var err error
	if l.buf, err = l.lw.row(l.buf, row); err == nil && l.limit >= 0 && int64(len(l.buf)) > l.left {
		err = errAnswerTooLarge
	}
	if err != nil {
		l.buf = l.buf[:mark]
		l.cause = err
		return err
	}
	l.rows++
	if len(l.buf) >= flushAt {
		if !l.sent {
			l.send(nil)
		}
		return l.flush()
	}
	return nil
}

// flush writes the rows gathered, counting them against the bound.
func (l *linesWriter) flush() error {
	if l.limit >= 0 {
		l.left -= int64(len(l.buf))
	}
	_, err := l.w.Write(l.buf)
	l.buf = l.buf[:0]
	if err != nil {
		l.cause = errors.Join(errWrite, err)
		return l.cause
	}
	return nil
}

// send writes the status and headers; more is the answer's HasMore when
// known (the rows ended before anything was sent), else nil: it is then
// a trailer.
func (l *linesWriter) send(more *bool) {
	l.sent = true
	hdr := l.w.Header()
	hdr.Set("Content-Type", l.f.mediaType())
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set(HeaderColumns, headerJSON(l.t.Names()))
	hdr.Set(HeaderTypes, headerJSON(l.t.Types))
	hdr.Set(HeaderRunID, l.head.ExecutionID)
	if more != nil {
		hdr.Set(HeaderHasMore, strconv.FormatBool(*more))
		hdr.Set("Trailer", HeaderError)
	} else {
		hdr.Set("Trailer", HeaderError+", "+HeaderHasMore)
	}
	l.w.WriteHeader(http.StatusOK)
}

// end ends the answer as the run ended: with res, or with runErr.
func (l *linesWriter) end(res *endpoint.RunResult, runErr error) error {
	if l.rw != nil && l.cause == nil && runErr == nil {
		if err := l.rw.Close(); err != nil && l.cause == nil {
			l.cause = err
		}
	}
	cause := l.cause
	if cause == nil {
		cause = runErr
	}
	if !l.sent {
		// A line format's own cut (the bound on the body, a value it
		// cannot write) ends the answer with its error line, as the
		// answer of a run held whole ends.
		cut := errors.Is(cause, errAnswerTooLarge) || l.lw != nil && l.cause != nil
		if cause != nil && !cut {
			// Nothing is out yet: the run's error answers with its status
			// (the format's own, met closing a whole run, as a failure).
			if runErr == nil {
				return cause
			}
			return runErr
		}
		more := res != nil && res.HasMore
		l.send(&more)
	}
	if cause == nil || l.cause == nil || !errors.Is(l.cause, errWrite) {
		if err := l.flush(); err != nil && cause == nil {
			cause = err
		}
	}
	if cause == nil {
		if hdr := l.w.Header(); hdr.Get(HeaderHasMore) == "" {
			hdr.Set(HeaderHasMore, strconv.FormatBool(res.HasMore))
		}
		return nil
	}
	code, detail := l.h.streamError(l.r, cause, l.limit, l.rows)
	var e *endpoint.Error
	if l.cause == nil && errors.As(runErr, &e) {
		code, detail = e.Code, e.Detail
	}
	if !errors.Is(cause, errWrite) && l.lw != nil {
		_, _ = l.w.Write(l.lw.fail(nil, l.t, code, detail))
	}
	l.w.Header().Set(HeaderError, trailerText(code, detail))
	l.h.logCut(l.r, nameOf(l.f), cause, "code", code, "detail", detail, "rows", l.rows)
	return nil
}
