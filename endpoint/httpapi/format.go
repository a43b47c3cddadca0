package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/openapi"
)

// Names of the answer formats a run may ask for (the body's "format").
const (
	FormatJSON   = "json"
	FormatCSV    = "csv"
	FormatNDJSON = "ndjson"
	// FormatParquet is served only when the host registers it
	// (WithFormat(parquet.Format{}) from package endpoint/httpapi/parquet).
	FormatParquet = "parquet"
)

// Media types of the built-in formats, as Content-Type and as Accept.
const (
	MediaTypeCSV    = "text/csv"
	MediaTypeNDJSON = "application/x-ndjson"
)

// Headers of an answer in a format other than JSON. Columns and Types are
// JSON arrays of strings, every character outside printable ASCII
// escaped (\uXXXX), in column order. Error is a trailer, sent only when
// the answer was cut after its first byte.
const (
	HeaderColumns = "X-Endpointkit-Columns"
	HeaderTypes   = "X-Endpointkit-Types"
	HeaderHasMore = "X-Endpointkit-Has-More"
	HeaderRunID   = "X-Endpointkit-Execution-Id"
	HeaderError   = "X-Endpointkit-Error"
)

// CSVErrorMarker is the first field of the last record of a CSV answer
// that was cut after its first byte; the record has one field more than
// the header (the marker, "code: detail", then empty fields), so that a
// reader that checks field counts fails on it rather than take it as a
// row.
const CSVErrorMarker = "#endpointkit-error"

// LimitMaxAnswerBytes names the bound on the body of a streamed answer
// (WithMaxAnswerBytes) in the error of an answer cut at it.
const LimitMaxAnswerBytes = "max_answer_bytes"

// Format is an answer format that a host adds to JSON, CSV and NDJSON with
// WithFormat (package endpoint/httpapi/parquet is one). A run asks for it
// by its Name in the body's "format" field, or by its MediaType in Accept.
type Format interface {
	// Name is the body's "format" value that asks for this format.
	Name() string
	// MediaType is the Content-Type of the answer, and the media type of
	// Accept that asks for it.
	MediaType() string
	// Write writes the rows of t to w. The status and headers are sent
	// before; an error (including one of w: the answer passed
	// WithMaxAnswerBytes) ends the answer with the trailer X-Endpointkit-Error,
	// so Write must return it rather than write a well-formed but short
	// answer.
	Write(w io.Writer, t *Table) error
}

// StreamFormat is a Format that can also write an answer's rows as the
// engine reads them (a streamed run, endpoint.Service.RunRows), never
// holding them whole: package endpoint/httpapi/parquet is one. A run
// whose answer is streamed calls Begin and then Row for each row and
// Close; an answer held whole (a cached one, a run not streamed) is
// written with Write.
type StreamFormat interface {
	Format
	// Begin starts an answer of t's columns on w: t has the columns, the
	// types and the kinds, and no rows (HasMore is not known yet). The
	// status and headers are sent before the first byte written to w
	// goes out; an error of w (the answer passed WithMaxAnswerBytes, the
	// client went away) must be returned by the Row or Close that met it.
	Begin(w io.Writer, t *Table) (RowsWriter, error)
}

// RowsWriter writes the rows of one streamed answer (StreamFormat.Begin).
type RowsWriter interface {
	// Row writes one row, its values as Table.Rows yields a computed
	// run's. The slice and its values are the caller's again once Row
	// returns: copy what you keep. An error ends the answer with the
	// X-Endpointkit-Error trailer.
	Row(row []any) error
	// Close ends a whole answer (Parquet's footer). It is not called
	// when the rows were cut: the answer then ends where it was.
	Close() error
}

// Table is the rows of an answer as a Format reads them.
type Table struct {
	// Columns are the column names as the JSON answer gives them; Types
	// their database types.
	Columns, Types []string
	// Kinds are the JSON forms of the columns, as the endpoint's version
	// was described at save (endpoint.ColumnKindOf): a format types its
	// columns by them, so that an answer with no rows, or whose values
	// are all null, has the types of any other. nil when unknown (the
	// editor's unsaved queries): type the columns by their values then.
	Kinds []endpoint.ColumnKind
	// HasMore tells that rows past the page exist (the JSON's hasMore).
	HasMore bool
	rows    func(yield func([]any, error) bool)
}

// NewTable returns the Table of rows, for a Format's own tests and for a
// host that writes answers outside the handler.
func NewTable(columns, types []string, rows [][]any, hasMore bool) *Table {
	t, _ := tableOf(columns, types, rows, hasMore)
	return t
}

// Rows yields the rows in order, each as the JSON answer holds it: for a
// computed run, the executor's Go values (nil, string, int64, float64,
// bool, time.Time, []byte and other types encoding/json encodes); for an
// answer from the result cache or from an identical run under way (an
// answer whose is_cached is true), the JSON decoded with UseNumber (nil,
// string, json.Number, bool). The slice yielded is reused: copy it to keep
// it. An error ends the rows. Rows may be called more than once.
func (t *Table) Rows() iter.Seq2[[]any, error] { return t.rows }

// Names are the columns as unique names, for formats whose columns are
// keyed by name (NDJSON, Parquet): a name that repeats an earlier one gets
// "_2", "_3", ... (the first that is free).
func (t *Table) Names() []string { return openapi.ColumnNames(t.Columns) }

// formatConfig is what WithFormat, WithMaxAnswerBytes and
// WithCSVFormulaGuard set.
type formatConfig struct {
	extra     []Format
	maxAnswer int64
	// rawCSV turns the CSV formula guard off (WithCSVFormulaGuard(false)).
	rawCSV bool
}

// WithCSVFormulaGuard sets whether a CSV answer guards against formula
// injection (OWASP's CSV injection), which it does by default: a column
// name or a cell that begins with =, +, -, @, a tab or a carriage return
// is written with a leading ' so that a spreadsheet shows it as text
// rather than run it. A number is never guarded (-5 of a numeric column
// stays -5; the text "-5" becomes '-5). WithCSVFormulaGuard(false) writes
// every value as it is, for hosts whose CSV answers are read by machines
// only. NDJSON, Parquet and JSON are never changed.
func WithCSVFormulaGuard(enabled bool) Option {
	return func(c *config) { c.formats.rawCSV = !enabled }
}

// csv is the CSV format as the handler's settings make it.
func (h *handler) csv() csvFormat { return csvFormat{guard: !h.cfg.formats.rawCSV} }

// WithFormat adds f to the answer formats (the built-in ones are JSON,
// CSV and NDJSON). A later format of the same name replaces an earlier
// one; json, csv and ndjson cannot be replaced.
func WithFormat(f Format) Option {
	return func(c *config) {
		if f == nil || isBuiltin(f.Name()) {
			return
		}
		c.formats.extra = slices.DeleteFunc(c.formats.extra, func(g Format) bool { return g.Name() == f.Name() })
		c.formats.extra = append(c.formats.extra, f)
	}
}

// WithMaxAnswerBytes bounds the body of an answer in a format other than
// JSON (CSV, NDJSON, a registered one): past n bytes the rows stop and the
// answer ends with its error (see HeaderError and CSVErrorMarker). 0 keeps
// endpoint.DefaultMaxResultBytes, the default bound on what a run reads; a
// negative n sets none. The rows a run reads are bounded already
// (endpoint.Config.MaxResultBytes, MaxLimit); this bounds what their text
// weighs in the format, which differs from their JSON weight.
func WithMaxAnswerBytes(n int64) Option {
	return func(c *config) { c.formats.maxAnswer = n }
}

// openapiFormats are the formats beside JSON, for the OpenAPI document.
func (h *handler) openapiFormats() []openapi.Format {
	out := []openapi.Format{{Name: FormatCSV, MediaType: MediaTypeCSV}, {Name: FormatNDJSON, MediaType: MediaTypeNDJSON}}
	for _, f := range h.cfg.formats.extra {
		out = append(out, openapi.Format{Name: f.Name(), MediaType: f.MediaType(), Binary: !strings.HasPrefix(f.MediaType(), "text/")})
	}
	return out
}

func isBuiltin(name string) bool {
	return name == FormatJSON || name == FormatCSV || name == FormatNDJSON
}

// answerFormat is the format a run answers in: nil for JSON.
type answerFormat interface {
	mediaType() string
}

// runBody is a run's request body: the run request and its format.
type runBody struct {
	endpoint.RunRequest
	Format string `json:"format"`
}

// queryBody is the query route's request body: the query request and its
// format.
type queryBody struct {
	endpoint.QueryRequest
	Format string `json:"format"`
}

// UnmarshalJSON decodes the request and the format apart, so that an
// error names a field as the request's own decoding names it ("debug",
// not "RunRequest.debug").
func (b *runBody) UnmarshalJSON(data []byte) error {
	return decodeWithFormat(data, &b.RunRequest, &b.Format)
}

// UnmarshalJSON is as runBody's.
func (b *queryBody) UnmarshalJSON(data []byte) error {
	return decodeWithFormat(data, &b.QueryRequest, &b.Format)
}

func decodeWithFormat(data []byte, req any, format *string) error {
	var f struct {
		Format string `json:"format"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return err
	}
	*format = f.Format
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(req)
}

// chooseFormat picks the answer's format: the body's format field when
// given, else the first media type of Accept (by q) that a format serves,
// else JSON. An Accept that names nothing served answers JSON, as before
// formats existed, rather than 406. debug answers only in JSON.
func (h *handler) chooseFormat(r *http.Request, field string, debug bool) (answerFormat, error) {
	var f answerFormat
	if field != "" {
		var err error
		if f, err = h.formatNamed(field); err != nil {
			return nil, err
		}
	} else {
		f = h.formatAccepted(r.Header.Values("Accept"))
	}
	if f != nil && debug {
		return nil, &endpoint.Error{
			Status: http.StatusBadRequest, Code: endpoint.CodeInvalidInput, Attr: "debug",
			Detail: "debug answers in JSON only: ask for format 'json' to see the executed SQL.",
			Err:    endpoint.ErrInvalid,
		}
	}
	return f, nil
}

// formatNamed is the format of a body's format field.
func (h *handler) formatNamed(name string) (answerFormat, error) {
	switch name {
	case FormatJSON:
		return nil, nil
	case FormatCSV:
		return h.csv(), nil
	case FormatNDJSON:
		return ndjsonFormat{}, nil
	}
	for _, f := range h.cfg.formats.extra {
		if f.Name() == name {
			return hostFormat{f}, nil
		}
	}
	if name == FormatParquet {
		return nil, &endpoint.Error{
			Status: http.StatusBadRequest, Code: endpoint.CodeInvalidInput, Attr: "format",
			Detail: "Format 'parquet' is not served here: the server's host did not register it (httpapi.WithFormat).",
			Err:    endpoint.ErrInvalid,
		}
	}
	known := []string{FormatJSON, FormatCSV, FormatNDJSON}
	for _, f := range h.cfg.formats.extra {
		known = append(known, f.Name())
	}
	return nil, &endpoint.Error{
		Status: http.StatusBadRequest, Code: endpoint.CodeInvalidInput, Attr: "format",
		Detail: fmt.Sprintf("Unknown format '%s': expected one of %s.", clip(name, maxEchoRunes), strings.Join(known, ", ")),
		Err:    endpoint.ErrInvalid,
	}
}

// formatAccepted reads Accept: the served media type of highest q, the
// earliest among equals; application/json, application/*, */* and an
// absent or unreadable Accept are JSON.
func (h *handler) formatAccepted(values []string) answerFormat {
	var best answerFormat
	bestQ := 0.0
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			q := 1.0
			if s, ok := params["q"]; ok {
				if q, err = strconv.ParseFloat(s, 64); err != nil || q < 0 || q > 1 {
					continue
				}
			}
			if q <= bestQ {
				continue
			}
			f, ok := h.formatOfMedia(mt)
			if !ok {
				continue
			}
			best, bestQ = f, q
		}
	}
	return best
}

// formatOfMedia is the format served as media type mt; ok is false when
// none is.
func (h *handler) formatOfMedia(mt string) (answerFormat, bool) {
	switch mt {
	case "application/json", "application/*", "*/*":
		return nil, true
	case MediaTypeCSV:
		return h.csv(), true
	case MediaTypeNDJSON:
		return ndjsonFormat{}, true
	}
	for _, f := range h.cfg.formats.extra {
		if strings.EqualFold(f.MediaType(), mt) {
			return hostFormat{f}, true
		}
	}
	return nil, false
}

// answer writes a run's (or a query's) answer v in f: JSON when f is nil,
// else the rows of columns, types and results, streamed.
func (h *handler) answer(w http.ResponseWriter, r *http.Request, f answerFormat, v any, columns, types []string, results any, hasMore bool, runID string) error {
	if f == nil {
		if rr, ok := v.(*endpoint.RunResult); ok {
			if ok, werr := replyRun(w, rr); ok {
				if werr != nil {
					h.logCut(r, "json", werr, "code", "write_failed")
				}
				return nil
			}
		}
		return h.reply(w, r, http.StatusOK, v)
	}
	if len(columns) == 0 {
		return errNotRows(nameOf(f))
	}
	t, err := tableOf(columns, types, results, hasMore)
	if err != nil {
		return err
	}
	if rr, ok := v.(*endpoint.RunResult); ok {
		t.Kinds = rr.ColumnKinds()
	}
	h.stream(w, r, f, t, runID)
	return nil
}

// errNotRows is the answer of an insight asked for in a format of rows.
func errNotRows(format string) error { return endpoint.NotRowsError(format) }

// nameOf is the body's name of f.
func nameOf(f answerFormat) string {
	switch f := f.(type) {
	case csvFormat:
		return FormatCSV
	case ndjsonFormat:
		return FormatNDJSON
	case hostFormat:
		return f.Name()
	}
	return FormatJSON
}

// tableOf is the Table of an answer's rows: [][]any as a run computes
// them, or the JSON of the rows as the result cache gives them back. An
// answer without columns (an insight's) has no rows to give.
func tableOf(columns, types []string, results any, hasMore bool) (*Table, error) {
	t := &Table{Columns: columns, Types: types, HasMore: hasMore}
	switch res := results.(type) {
	case [][]any:
		t.rows = func(yield func([]any, error) bool) {
			for _, row := range res {
				if !yield(row, nil) {
					return
				}
			}
		}
	case json.RawMessage:
		t.rows = func(yield func([]any, error) bool) { decodeRows(res, len(columns), yield) }
	default:
		return nil, fmt.Errorf("httpapi: answer rows of type %T", results)
	}
	return t, nil
}

// decodeRows yields the rows of raw, a JSON array of arrays of n values,
// one at a time.
func decodeRows(raw []byte, n int, yield func([]any, error) bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		yield(nil, fmt.Errorf("httpapi: cached rows are not a JSON array (%v)", err))
		return
	}
	row := make([]any, 0, n)
	for dec.More() {
		row = row[:0]
		if err := dec.Decode(&row); err != nil {
			yield(nil, fmt.Errorf("httpapi: cached rows: %w", err))
			return
		}
		if !yield(row, nil) {
			return
		}
	}
}

// errAnswerTooLarge is the cause of an answer cut at WithMaxAnswerBytes.
var errAnswerTooLarge = errors.New("httpapi: answer larger than max_answer_bytes")

// maxAnswer is the bound on a streamed body, -1 for none.
func (h *handler) maxAnswer() int64 {
	switch n := h.cfg.formats.maxAnswer; {
	case n == 0:
		return endpoint.DefaultMaxResultBytes
	case n < 0:
		return -1
	default:
		return n
	}
}

// headerJSON is ss as a JSON array in printable ASCII, fit for a header.
func headerJSON(ss []string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, s := range ss {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		for _, c := range s {
			switch {
			case c == '"' || c == '\\':
				b.WriteByte('\\')
				b.WriteRune(c)
			case c >= 0x20 && c < 0x7f:
				b.WriteRune(c)
			case c > 0xffff:
				r1, r2 := utf16Pair(c)
				fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
			default:
				fmt.Fprintf(&b, `\u%04x`, c)
			}
		}
		b.WriteByte('"')
	}
	b.WriteByte(']')
	return b.String()
}

// utf16Pair is the surrogate pair of c (> U+FFFF).
func utf16Pair(c rune) (rune, rune) {
	c -= 0x10000
	return 0xd800 + (c>>10)&0x3ff, 0xdc00 + c&0x3ff
}

// trailerText is an error for the X-Endpointkit-Error trailer: printable
// ASCII, at most 300 bytes.
func trailerText(code, detail string) string {
	s := code + ": " + detail
	var b strings.Builder
	for _, c := range s {
		if b.Len() >= 300 {
			break
		}
		if c >= 0x20 && c < 0x7f {
			b.WriteRune(c)
		} else {
			b.WriteByte('?')
		}
	}
	return b.String()
}
