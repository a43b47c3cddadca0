package httpapi

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/internal/jsontext"
)

// lineFormat is a format written a row per line (CSV, NDJSON): the stream
// checks the bound on the body at each row, and ends a cut answer with the
// format's own error line.
type lineFormat interface {
	answerFormat
	lines(names []string, kinds []endpoint.ColumnKind) lineWriter
}

// lineWriter writes the lines of one table.
type lineWriter interface {
	// head is what comes before the rows (CSV's header record).
	head(buf []byte, t *Table) []byte
	// row appends one row; an error is a value the format cannot write.
	row(buf []byte, row []any) ([]byte, error)
	// fail appends the line that ends a cut answer.
	fail(buf []byte, t *Table, code, detail string) []byte
}

// csvFormat writes RFC 4180 CSV: a header record of the column names,
// then a record per row. null is an empty field and the empty string a
// quoted empty field (""), values are as their JSON text (numbers, true,
// false, times in RFC 3339, bytes in base64) without JSON's quotes. With
// guard (the default, WithCSVFormulaGuard), a column name or a cell that is
// not a number and begins with a character a spreadsheet reads as the
// start of a formula (see formulaStart) is written with a leading '.
type csvFormat struct{ guard bool }

func (csvFormat) mediaType() string { return MediaTypeCSV + "; charset=utf-8; header=present" }

func (f csvFormat) lines(_ []string, kinds []endpoint.ColumnKind) lineWriter {
	return csvLines{guard: f.guard, kinds: kinds}
}

// csvLines writes the records of one table, whose columns are of kinds
// (nil when unknown): each value is its JSON text (appendCell), guarded
// against formulas when guard is set (csvFormat's).
type csvLines struct {
	guard bool
	kinds []endpoint.ColumnKind
}

func (l csvLines) head(buf []byte, t *Table) []byte {
	for i, c := range t.Columns {
		if i > 0 {
			buf = append(buf, ',')
		}
		start := len(buf)
		buf = appendCSVField(buf, c, false)
		if l.guard {
			buf = guardFormula(buf, start)
		}
	}
	return append(buf, '\n')
}

func (l csvLines) row(buf []byte, row []any) ([]byte, error) {
	var err error
	for i, v := range row {
		if i > 0 {
			buf = append(buf, ',')
		}
		start := len(buf)
		if buf, err = appendCell(buf, v, kindAt(l.kinds, i), false); err != nil {
			return buf, err
		}
		if l.guard && !isNumber(v) {
			buf = guardFormula(buf, start)
		}
	}
	return append(buf, '\n'), nil
}

// formulaStart reports whether a CSV cell beginning with c is read by a
// spreadsheet as a formula (OWASP's CSV injection: =, +, -, @, tab and
// carriage return).
func formulaStart(c byte) bool {
	switch c {
	case '=', '+', '-', '@', '\t', '\r':
		return true
	}
	return false
}

// guardFormula puts a ' before the text of the CSV field written from
// buf[start:] when that text begins as a formula (formulaStart), inside
// the quotes of a quoted field. A field's text cannot begin with '"' (it
// would be quoted, its quote doubled), so the byte after an opening quote
// is the text's first.
func guardFormula(buf []byte, start int) []byte {
	at := start
	if at < len(buf) && buf[at] == '"' {
		at++
	}
	if at >= len(buf) || !formulaStart(buf[at]) {
		return buf
	}
	return slices.Insert(buf, at, '\'')
}

// isNumber reports whether v is written as a JSON number (or true, false,
// null), which a spreadsheet reads as a value, never a formula: a negative
// number of a numeric column is written as it is, -5, while the text
// "-5" is guarded. A value of another type is a number when its JSON is
// not a string, an object or an array.
func isNumber(v any) bool {
	switch v.(type) {
	case nil, int64, int, int32, float64, float32, bool, json.Number:
		return true
	case string, []byte, time.Time:
		return false
	}
	b, err := encodeJSON(v)
	return err == nil && len(b) > 0 && b[0] != '"' && b[0] != '{' && b[0] != '['
}

func (csvLines) fail(buf []byte, t *Table, code, detail string) []byte {
	buf = append(buf, CSVErrorMarker...)
	buf = append(buf, ',')
	buf = appendQuoted(buf, code+": "+detail)
	for range max(len(t.Columns)-1, 0) {
		buf = append(buf, ',')
	}
	return append(buf, '\n')
}

// ndjsonFormat writes a JSON object per row, keyed by column (Table.Names)
// in column order, each value as in the JSON answer. A cut answer ends
// with {"error": {"code", "detail"}}.
type ndjsonFormat struct{}

func (ndjsonFormat) mediaType() string { return MediaTypeNDJSON }

func (ndjsonFormat) lines(names []string, kinds []endpoint.ColumnKind) lineWriter {
	keys := make([][]byte, len(names))
	for i, n := range names {
		k := []byte{','}
		if i == 0 {
			k[0] = '{'
		}
		k = jsontext.AppendString(k, n)
		keys[i] = append(k, ':')
	}
	return ndjsonLines{keys: keys, kinds: kinds}
}

// ndjsonLines holds the keys of one table: `{"a":`, `,"b":`, ..., and
// the kinds of its columns (nil when unknown).
type ndjsonLines struct {
	keys  [][]byte
	kinds []endpoint.ColumnKind
}

func (ndjsonLines) head(buf []byte, _ *Table) []byte { return buf }

func (n ndjsonLines) row(buf []byte, row []any) ([]byte, error) {
	if len(row) != len(n.keys) {
		return buf, fmt.Errorf("httpapi: a row of %d values for %d columns", len(row), len(n.keys))
	}
	var err error
	for i, v := range row {
		buf = append(buf, n.keys[i]...)
		if buf, err = appendCell(buf, v, kindAt(n.kinds, i), true); err != nil {
			return buf, err
		}
	}
	if len(row) == 0 {
		buf = append(buf, '{')
	}
	return append(buf, "}\n"...), nil
}

func (ndjsonLines) fail(buf []byte, _ *Table, code, detail string) []byte {
	buf = append(buf, `{"error":{"code":`...)
	buf = jsontext.AppendString(buf, code)
	buf = append(buf, `,"detail":`...)
	buf = jsontext.AppendString(buf, detail)
	return append(buf, "}}\n"...)
}

// hostFormat is a Format the host registered.
type hostFormat struct{ Format }

func (f hostFormat) mediaType() string { return f.MediaType() }

// flushAt is how many bytes of rows the stream, and a JSON answer
// (replyRun), gather before they write: a large answer goes out in pieces
// of about this size (a row is never split) instead of being held whole,
// encoded, beside its rows until the client has read it.
const flushAt = 16 << 10

// stream writes t in f: the status and headers, then the rows. Once the
// first byte is out no status can say that something failed, so a failure
// (a value the format cannot write, the bound on the body, a cached answer
// that does not decode) ends the answer with the format's error line and
// the X-Endpointkit-Error trailer, and is logged.
func (h *handler) stream(w http.ResponseWriter, r *http.Request, f answerFormat, t *Table, runID string) {
	names := t.Names()
	hdr := w.Header()
	hdr.Set("Content-Type", f.mediaType())
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set(HeaderColumns, headerJSON(names))
	hdr.Set(HeaderTypes, headerJSON(t.Types))
	hdr.Set(HeaderHasMore, strconv.FormatBool(t.HasMore))
	if runID != "" {
		hdr.Set(HeaderRunID, runID)
	}
	hdr.Set("Trailer", HeaderError)
	h.writeDeadline(w)
	w.WriteHeader(http.StatusOK)
	limit := h.maxAnswer()
	bw := bufio.NewWriterSize(w, 32<<10)
	cw := &capWriter{w: bw, left: limit}
	var cause error
	rows := -1
	switch lf := f.(type) {
	case lineFormat:
		rows, cause = writeLines(cw, lf.lines(names, t.Kinds), t)
		if cause != nil && !errors.Is(cause, errWrite) {
			code, detail := h.streamError(r, cause, limit, rows)
			_, _ = bw.Write(lf.lines(names, t.Kinds).fail(nil, t, code, detail))
		}
	case hostFormat:
		if err := lf.Write(cw, t); err != nil {
			cause = err
			if cw.err != nil {
				cause = cw.err
			}
		}
	}
	if err := bw.Flush(); err != nil && cause == nil {
		cause = fmt.Errorf("%w: %w", errWrite, err)
	}
	if cause != nil {
		code, detail := h.streamError(r, cause, limit, rows)
		hdr.Set(HeaderError, trailerText(code, detail))
		h.logCut(r, nameOf(f), cause, "code", code, "detail", detail, "rows", rows)
	}
}

// writeLines writes the head and rows of t through lw to cw, whole rows
// only: the rows that fit under cw's bound, then the error that stopped
// them (nil when every row was written). n is how many rows were written.
func writeLines(cw *capWriter, lw lineWriter, t *Table) (n int, err error) {
	buf := lw.head(make([]byte, 0, flushAt+4096), t)
	if cw.left >= 0 && int64(len(buf)) > cw.left {
		return 0, errAnswerTooLarge
	}
	for row, rerr := range t.Rows() {
		mark := len(buf)
		if rerr == nil {
			buf, rerr = lw.row(buf, row)
		}
		if rerr == nil && cw.left >= 0 && int64(len(buf)) > cw.left {
			rerr = errAnswerTooLarge
		}
		if rerr != nil {
			err = rerr
			buf = buf[:mark]
			break
		}
		n++
		if len(buf) >= flushAt {
			if werr := cw.write(buf); werr != nil {
				return n, werr
			}
			buf = buf[:0]
		}
	}
	if werr := cw.write(buf); werr != nil {
		return n, werr
	}
	return n, err
}

// logCut logs an answer cut after its first byte, when no status can say
// so any more: by cause, in format, with what else is known of it.
func (h *handler) logCut(r *http.Request, format string, cause error, attrs ...any) {
	h.cfg.logger.WarnContext(r.Context(), "httpapi: answer cut after its first byte",
		append(attrs, "cause", cause, "format", format, "request_id", RequestID(r.Context()), "path", r.URL.Path)...)
}

// streamError is the code and detail of a failure after the first byte.
// rows is how many rows were written, -1 when not known.
func (h *handler) streamError(r *http.Request, err error, limit int64, rows int) (string, string) {
	var unsupported *json.UnsupportedValueError
	var nonFinite nonFiniteError
	var invalidNumber invalidNumberError
	switch {
	case errors.Is(err, errAnswerTooLarge):
		after := ""
		if rows >= 0 {
			after = fmt.Sprintf(" after %d rows", rows)
		}
		return endpoint.CodeResultTooLarge, fmt.Sprintf("The answer is larger than %s (%d bytes): it ends here%s; ask for fewer rows (limit) or narrow the query.", LimitMaxAnswerBytes, limit, after)
	case errors.As(err, &nonFinite), errors.As(err, &unsupported), errors.As(err, &invalidNumber):
		return CodeResultNotEncodable, "The query result cannot be encoded: " + err.Error() + "."
	case errors.Is(err, errWrite):
		return "write_failed", "The answer could not be written."
	}
	return CodeServerError, withRequestID("Internal server error.", RequestID(r.Context()))
}

// errWrite marks a failure to write to the client, after which no error
// line can reach it.
var errWrite = errors.New("httpapi: write failed")

// capWriter counts the bytes of a body against a bound (left < 0: none).
// A write that would pass it writes nothing and fails with
// errAnswerTooLarge; err keeps the first failure, whatever a Format makes
// of it.
type capWriter struct {
	w    io.Writer
	left int64
	err  error
}

func (c *capWriter) write(b []byte) error {
	_, err := c.Write(b)
	return err
}

// Write writes b whole or not at all.
func (c *capWriter) Write(b []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if c.left >= 0 {
		if int64(len(b)) > c.left {
			c.err = errAnswerTooLarge
			return 0, c.err
		}
		c.left -= int64(len(b))
	}
	n, err := c.w.Write(b)
	if err != nil {
		c.err = fmt.Errorf("%w: %w", errWrite, err)
		return n, c.err
	}
	return n, nil
}

// nonFiniteError is a NaN or an infinity, which JSON cannot hold; the
// other formats refuse it too, so that every format answers the same rows.
type nonFiniteError float64

func (e nonFiniteError) Error() string {
	return "unsupported value " + strconv.FormatFloat(float64(e), 'g', -1, 64)
}

// invalidNumberError is a json.Number that is not a number, which
// encoding/json refuses too ("json: invalid number literal").
type invalidNumberError string

func (e invalidNumberError) Error() string {
	return "invalid number literal " + strconv.Quote(string(e))
}

// appendValue appends v as its JSON text (inJSON) or as a CSV field with
// the same text, unquoted where JSON quotes it (strings, times, bytes).
func appendValue(buf []byte, v any, inJSON bool) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		if inJSON {
			return append(buf, "null"...), nil
		}
		return buf, nil
	case string:
		if inJSON {
			return jsontext.AppendString(buf, x), nil
		}
		return appendCSVField(buf, x, true), nil
	case int64:
		return strconv.AppendInt(buf, x, 10), nil
	case int:
		return strconv.AppendInt(buf, int64(x), 10), nil
	case int32:
		return strconv.AppendInt(buf, int64(x), 10), nil
	case float64:
		return appendFloat(buf, x, 64)
	case float32:
		return appendFloat(buf, float64(x), 32)
	case bool:
		return strconv.AppendBool(buf, x), nil
	case json.Number:
		// As encoding/json: "" is 0, and what is not a number is refused
		// rather than written as it is (it would be JSON of its own).
		if x == "" {
			return append(buf, '0'), nil
		}
		if !validNumber(string(x)) {
			return buf, invalidNumberError(x)
		}
		return append(buf, x...), nil
	case time.Time:
		return appendTimeText(buf, x, inJSON)
	case []byte:
		if x == nil {
			if inJSON {
				return append(buf, "null"...), nil
			}
			return buf, nil
		}
		if inJSON {
			buf = append(buf, '"')
		}
		buf = base64.StdEncoding.AppendEncode(buf, x)
		if inJSON {
			buf = append(buf, '"')
		}
		return buf, nil
	}
	b, err := encodeJSON(v)
	if err != nil {
		return buf, err
	}
	b = b[:len(b)-1] // the encoder's newline
	if !inJSON && len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return buf, err
		}
		return appendCSVField(buf, s, true), nil
	}
	if !inJSON && len(b) > 0 && (b[0] == '{' || b[0] == '[') {
		return appendCSVField(buf, string(b), true), nil
	}
	return append(buf, b...), nil
}

// kindAt is the kind of column i of kinds, KindOther when unknown.
func kindAt(kinds []endpoint.ColumnKind, i int) endpoint.ColumnKind {
	if i < len(kinds) {
		return kinds[i]
	}
	return endpoint.KindOther
}

// appendCell appends v, a value of a column of kind k, as appendValue
// does (its JSON text, or the CSV field of that text), and a number of a
// float column as a float's text (256.0 where appendValue writes 256), so
// that a column's values are of one JSON kind whatever the row; a cached
// answer's json.Number of an integer's text in a float column too.
func appendCell(buf []byte, v any, k endpoint.ColumnKind, inJSON bool) ([]byte, error) {
	if k != endpoint.KindFloat {
		return appendValue(buf, v, inJSON)
	}
	from := len(buf)
	buf, err := appendValue(buf, v, inJSON)
	if err != nil {
		return buf, err
	}
	switch v.(type) {
	case float64, float32, json.Number, int64, int, int32:
		for _, c := range buf[from:] {
			if c == '.' || c == 'e' || c == 'E' {
				return buf, nil
			}
		}
		buf = append(buf, ".0"...)
	}
	return buf, nil
}

// appendFloat appends f as encoding/json writes it.
func appendFloat(buf []byte, f float64, bits int) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return buf, nonFiniteError(f)
	}
	abs := math.Abs(f)
	fmtc := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			fmtc = 'e'
		}
	}
	buf = strconv.AppendFloat(buf, f, fmtc, -1, bits)
	if fmtc == 'e' {
		n := len(buf)
		if n >= 4 && buf[n-4] == 'e' && buf[n-3] == '-' && buf[n-2] == '0' {
			buf[n-2] = buf[n-1]
			buf = buf[:n-1]
		}
	}
	return buf, nil
}

// appendCSVField appends s as a CSV field, quoted when it must be (as
// encoding/csv quotes), and when it is empty and emptyQuoted, so that an
// empty string differs from null.
func appendCSVField(buf []byte, s string, emptyQuoted bool) []byte {
	if s == "" {
		if emptyQuoted {
			return append(buf, `""`...)
		}
		return buf
	}
	if !csvNeedsQuotes(s) {
		return append(buf, s...)
	}
	return appendQuoted(buf, s)
}

// appendQuoted appends s as a quoted CSV field.
func appendQuoted(buf []byte, s string) []byte {
	buf = append(buf, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			buf = append(buf, '"')
		}
		buf = append(buf, s[i])
	}
	return append(buf, '"')
}

func csvNeedsQuotes(s string) bool {
	if s == `\.` {
		return true
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ',', '"', '\r', '\n':
			return true
		}
	}
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsSpace(r)
}
