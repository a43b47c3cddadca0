// Package parquet answers endpoint runs in Apache Parquet, with
// github.com/parquet-go/parquet-go. It lives apart from package
// endpoint/httpapi so that a host that does not serve Parquet does not link
// the library: a host that does registers it on its handler,
//
//	httpapi.New(svc, auth, httpapi.WithFormat(parquet.Format{}))
//
// and a run asks for it with {"format": "parquet"} or
// Accept: application/vnd.apache.parquet.
//
// The file has one optional (nullable) column per column of the answer, in
// order, named as httpapi.Table.Names names them (a repeated name gets
// "_2", ...). A column's type is its kind as the endpoint's version was
// described at save (httpapi.Table.Kinds), the same for every answer of
// the version, with rows or without, computed or cached: INT64 for an
// integer column, DOUBLE for a float, BOOLEAN, and a UTF-8 STRING for the
// others, decimals included (their exact text, as the JSON answer gives
// it). A column of no known kind (the editor's unsaved queries, a type of
// no kind) is typed by its values: INT64 when every value is an integer,
// DOUBLE when they are numbers and one is not an integer (or the database
// type is a floating one), BOOLEAN, else a STRING holding each value's
// JSON text without quotes (times in RFC 3339, bytes in base64), as the
// JSON answer writes it.
//
// A run's rows are written as the engine reads them (Format.Begin, for
// a streamed run, see httpapi.StreamFormat), gathered into row groups of
// RowGroupRows rows: memory holds one row group, not the answer, and the
// footer comes last. An answer cut by
// httpapi.WithMaxAnswerBytes is a file without its footer, which every
// reader refuses, with the trailer X-Endpointkit-Error saying why.
package parquet

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
)

// MediaType is the Content-Type of a Parquet answer, and the media type
// of Accept that asks for it.
const MediaType = "application/vnd.apache.parquet"

// Format is the Parquet answer format, for httpapi.WithFormat.
type Format struct {
	// RowGroupRows is how many rows a row group holds; 0 means 10,000.
	RowGroupRows int
}

var _ httpapi.Format = Format{}

// Name is "parquet", the body's format value.
func (Format) Name() string { return httpapi.FormatParquet }

// MediaType is MediaType.
func (Format) MediaType() string { return MediaType }

// kind is a column's Parquet type.
type kind int

const (
	kindNull kind = iota // no value but null yet
	kindInt
	kindFloat
	kindBool
	kindString
)

// Write writes the rows of t as one Parquet file.
func (f Format) Write(w io.Writer, t *httpapi.Table) error {
	names := t.Names()
	kinds := make([]kind, len(names))
	for row, err := range t.Rows() {
		if err != nil {
			return err
		}
		for i, v := range row {
			if i < len(kinds) {
				kinds[i] = widen(kinds[i], kindOf(v))
			}
		}
	}
	for i := range kinds {
		if i < len(t.Kinds) {
			if k, ok := kindOfColumn(t.Kinds[i]); ok {
				kinds[i] = k
				continue
			}
		}
		if kinds[i] == kindInt && i < len(t.Types) && floating(t.Types[i]) {
			kinds[i] = kindFloat
		}
	}
	rw := f.newRows(w, names, kinds)
	for row, err := range t.Rows() {
		if err != nil {
			return err
		}
		if err := rw.Row(row); err != nil {
			return err
		}
	}
	return rw.Close()
}

// Begin implements httpapi.StreamFormat: the rows are written as they
// come, a row group at a time (RowGroupRows), so that memory holds one
// row group, whatever the answer's rows. The columns are typed by t.Kinds,
// as Write types them; when a column has no known kind (typed by its
// values, see the package's doc), the rows are held and written whole at
// Close, as Write writes them.
func (f Format) Begin(w io.Writer, t *httpapi.Table) (httpapi.RowsWriter, error) {
	names := t.Names()
	kinds := make([]kind, len(names))
	for i := range kinds {
		k, ok := kindNull, false
		if i < len(t.Kinds) {
			k, ok = kindOfColumn(t.Kinds[i])
		}
		if !ok {
			return &heldRows{f: f, w: w, t: t}, nil
		}
		kinds[i] = k
	}
	return f.newRows(w, names, kinds), nil
}

var _ httpapi.StreamFormat = Format{}

// rowsWriter writes rows of known kinds to a Parquet file, a row group
// of f.RowGroupRows rows at a time.
type rowsWriter struct {
	pw      *pq.Writer
	names   []string
	kinds   []kind
	per     int
	batch   []pq.Row
	inGroup int
}

// newRows starts a file of columns names of kinds on w.
func (f Format) newRows(w io.Writer, names []string, kinds []kind) *rowsWriter {
	fields := make([]pq.Field, len(names))
	for i, n := range names {
		fields[i] = field{Node: pq.Optional(leaf(kinds[i])), name: n}
	}
	schema := pq.NewSchema("answer", group{fields: fields})
	per := f.RowGroupRows
	if per <= 0 {
		per = 10000
	}
	return &rowsWriter{
		pw:    pq.NewWriter(w, schema, pq.Compression(&pq.Snappy)),
		names: names, kinds: kinds, per: per,
		batch: make([]pq.Row, 0, 256),
	}
}

// flush writes the rows of the batch.
func (r *rowsWriter) flush() error {
	if len(r.batch) == 0 {
		return nil
	}
	if _, err := r.pw.WriteRows(r.batch); err != nil {
		return err
	}
	r.batch = r.batch[:0]
	return nil
}

// Row implements httpapi.RowsWriter.
func (r *rowsWriter) Row(row []any) error {
	if len(row) != len(r.names) {
		return fmt.Errorf("parquet: a row of %d values for %d columns", len(row), len(r.names))
	}
	n := len(r.batch)
	var out pq.Row
	if n < cap(r.batch) && cap(r.batch[:n+1][n]) >= len(row) {
		// A row of a batch written before: WriteRows copied its values.
		out = r.batch[:n+1][n][:len(row)]
	} else {
		out = make(pq.Row, len(row))
	}
	for i, v := range row {
		pv, err := value(r.kinds[i], v)
		if err != nil {
			return fmt.Errorf("parquet: column %q: %w", r.names[i], err)
		}
		if pv.IsNull() {
			out[i] = pv.Level(0, 0, i)
		} else {
			out[i] = pv.Level(0, 1, i)
		}
	}
	r.batch = append(r.batch, out)
	r.inGroup++
	if len(r.batch) == cap(r.batch) {
		if err := r.flush(); err != nil {
			return err
		}
	}
	if r.inGroup == r.per {
		if err := r.flush(); err != nil {
			return err
		}
		if err := r.pw.Flush(); err != nil {
			return err
		}
		r.inGroup = 0
	}
	return nil
}

// Close implements httpapi.RowsWriter: the last row group and the
// footer.
func (r *rowsWriter) Close() error {
	if err := r.flush(); err != nil {
		return err
	}
	return r.pw.Close()
}

// heldRows holds the rows of a streamed answer with a column typed by its
// values, and writes them whole at Close.
type heldRows struct {
	f    Format
	w    io.Writer
	t    *httpapi.Table
	rows [][]any
}

// Row implements httpapi.RowsWriter.
func (h *heldRows) Row(row []any) error {
	kept := make([]any, len(row))
	for i, v := range row {
		if b, ok := v.([]byte); ok {
			v = append([]byte(nil), b...)
		}
		kept[i] = v
	}
	h.rows = append(h.rows, kept)
	return nil
}

// Close implements httpapi.RowsWriter.
func (h *heldRows) Close() error {
	t := httpapi.NewTable(h.t.Columns, h.t.Types, h.rows, h.t.HasMore)
	t.Kinds = h.t.Kinds
	return h.f.Write(h.w, t)
}

// kindOfColumn is the Parquet kind of a column of kind k, false for a
// column typed by its values.
func kindOfColumn(k endpoint.ColumnKind) (kind, bool) {
	switch k {
	case endpoint.KindInteger:
		return kindInt, true
	case endpoint.KindFloat:
		return kindFloat, true
	case endpoint.KindBoolean:
		return kindBool, true
	case endpoint.KindDecimal, endpoint.KindString, endpoint.KindTime:
		return kindString, true
	}
	return kindNull, false
}

// kindOf is the kind of one value as the JSON answer holds it.
func kindOf(v any) kind {
	switch x := v.(type) {
	case nil:
		return kindNull
	case int64, int, int32, int16, int8, uint32, uint16, uint8:
		return kindInt
	case float64, float32:
		return kindFloat
	case bool:
		return kindBool
	case json.Number:
		if _, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return kindInt
		}
		return kindFloat
	}
	return kindString
}

// widen is the kind of a column holding a value of kind b after values
// of kind a.
func widen(a, b kind) kind {
	switch {
	case a == b, b == kindNull:
		return a
	case a == kindNull:
		return b
	case (a == kindInt && b == kindFloat) || (a == kindFloat && b == kindInt):
		return kindFloat
	}
	return kindString
}

// floating reports whether a database type name is a floating or decimal
// one, whose integral values a cached answer gives as integers.
func floating(t string) bool {
	t = strings.ToUpper(t)
	for _, s := range []string{"REAL", "FLOA", "DOUB", "NUMERIC", "DECIMAL"} {
		if strings.Contains(t, s) {
			return true
		}
	}
	return false
}

func leaf(k kind) pq.Node {
	switch k {
	case kindInt:
		return pq.Int(64)
	case kindFloat:
		return pq.Leaf(pq.DoubleType)
	case kindBool:
		return pq.Leaf(pq.BooleanType)
	}
	return pq.String()
}

// value is v as a Parquet value of kind k.
func value(k kind, v any) (pq.Value, error) {
	if v == nil {
		return pq.NullValue(), nil
	}
	switch k {
	case kindInt:
		switch x := v.(type) {
		case json.Number:
			n, err := strconv.ParseInt(string(x), 10, 64)
			return pq.Int64Value(n), err
		default:
			rv := reflect.ValueOf(v)
			switch {
			case rv.CanInt():
				return pq.Int64Value(rv.Int()), nil
			case rv.CanUint() && rv.Uint() <= math.MaxInt64:
				return pq.Int64Value(int64(rv.Uint())), nil
			case rv.CanFloat() && rv.Float() == math.Trunc(rv.Float()) && math.Abs(rv.Float()) < 1<<63:
				return pq.Int64Value(int64(rv.Float())), nil
			}
			return pq.Value{}, fmt.Errorf("the value %v of an integer column is not an integer", v)
		}
	case kindFloat:
		var f float64
		switch x := v.(type) {
		case json.Number:
			var err error
			if f, err = strconv.ParseFloat(string(x), 64); err != nil {
				return pq.Value{}, err
			}
		default:
			rv := reflect.ValueOf(v)
			switch {
			case rv.CanFloat():
				f = rv.Float()
			case rv.CanInt():
				f = float64(rv.Int())
			case rv.CanUint():
				f = float64(rv.Uint())
			default:
				return pq.Value{}, fmt.Errorf("the value %v of a float column is not a number", v)
			}
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return pq.Value{}, fmt.Errorf("unsupported value %v", f)
		}
		return pq.DoubleValue(f), nil
	case kindBool:
		b, ok := v.(bool)
		if !ok {
			return pq.Value{}, fmt.Errorf("the value %v of a boolean column is not a boolean", v)
		}
		return pq.BooleanValue(b), nil
	}
	s, err := text(v)
	return pq.ByteArrayValue([]byte(s)), err
}

// text is v's JSON text without the quotes of a JSON string.
func text(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case time.Time:
		return x.Format(time.RFC3339Nano), nil
	case []byte:
		return base64.StdEncoding.EncodeToString(x), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return "", fmt.Errorf("unsupported value %v", x)
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		err := json.Unmarshal(b, &s)
		return s, err
	}
	return string(b), nil
}

// group is the file's root: its columns in the answer's order
// (parquet.Group orders them by name).
type group struct {
	pq.Group
	fields []pq.Field
}

func (g group) Fields() []pq.Field          { return g.fields }
func (g group) String() string              { return "answer" }
func (g group) Encoding() encoding.Encoding { return nil }
func (g group) Compression() compress.Codec { return nil }
func (g group) GoType() reflect.Type        { return reflect.TypeFor[map[string]any]() }

// field is a named column of the root.
type field struct {
	pq.Node
	name string
}

func (f field) Name() string { return f.name }

func (f field) Value(base reflect.Value) reflect.Value {
	return base.MapIndex(reflect.ValueOf(f.name))
}
