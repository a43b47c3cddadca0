package endpoint

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/sql/engine"
)

// ColumnKind is the JSON form of a column's values, decided by the
// column's database type (ColumnKindOf): every value of the column has
// this form, whatever row it is in, and null.
type ColumnKind string

// The column kinds.
const (
	// KindInteger columns hold whole numbers, JSON integers (Go int64).
	KindInteger ColumnKind = "integer"
	// KindFloat columns hold floating-point numbers: Go float64 in every
	// row, DOUBLE in Parquet, and in every JSON answer numbers written as
	// floats, 256.0 beside 256.83 (never 256, which decoders read as an
	// integer), the OpenAPI document's "number".
	KindFloat ColumnKind = "number"
	// KindDecimal columns hold the exact decimals of PostgreSQL NUMERIC,
	// MySQL and MariaDB DECIMAL and ClickHouse Decimal: JSON strings of
	// the engine's decimal text ("99220", "12.50"), so that no digit is
	// lost to a float. SQLite has no decimal type: its NUMERIC is
	// KindFloat.
	KindDecimal ColumnKind = "decimal"
	// KindString columns hold text, JSON strings.
	KindString ColumnKind = "string"
	// KindBoolean columns hold JSON true or false.
	KindBoolean ColumnKind = "boolean"
	// KindTime columns hold instants and dates, JSON strings (RFC 3339
	// when the engine gives a time).
	KindTime ColumnKind = "date-time"
	// KindOther is a type of no other kind (arrays, JSON, bytes, a type
	// the engine left unnamed): its values are as the engine gives them.
	KindOther ColumnKind = ""
)

// ColumnKindOf is the kind of a column of database type typ on engine e
// (nil: an engine whose columns hold values of their declared types).
func ColumnKindOf(e engine.Engine, typ string) ColumnKind {
	t := strings.ToUpper(strings.TrimSpace(typ))
	for _, wrap := range []string{"NULLABLE(", "LOWCARDINALITY("} {
		for strings.HasPrefix(t, wrap) && strings.HasSuffix(t, ")") {
			t = strings.TrimSpace(t[len(wrap) : len(t)-1])
		}
	}
	if i := strings.IndexAny(t, "( "); i > 0 {
		t = t[:i]
	}
	switch t {
	case "INT", "INTEGER", "INT2", "INT4", "INT8", "BIGINT", "SMALLINT", "TINYINT", "MEDIUMINT",
		"INT16", "INT32", "INT64", "UINT8", "UINT16", "UINT32", "UINT64",
		"UNSIGNED", "SERIAL", "BIGSERIAL", "OID", "YEAR":
		return KindInteger
	case "REAL", "FLOAT", "FLOAT4", "FLOAT8", "DOUBLE", "FLOAT32", "FLOAT64":
		return KindFloat
	case "NUMERIC", "DECIMAL", "DECIMAL32", "DECIMAL64", "DECIMAL128", "DECIMAL256",
		"INT128", "INT256", "UINT128", "UINT256":
		if e != nil && !e.TypedAsDeclared() {
			return KindFloat // SQLite's NUMERIC affinity: doubles
		}
		return KindDecimal
	case "TEXT", "VARCHAR", "CHAR", "BPCHAR", "NAME", "STRING", "FIXEDSTRING", "CLOB",
		"NVARCHAR", "NCHAR", "TINYTEXT", "MEDIUMTEXT", "LONGTEXT", "UUID", "CITEXT", "ENUM", "ENUM8", "ENUM16":
		return KindString
	case "BOOL", "BOOLEAN":
		return KindBoolean
	case "TIMESTAMP", "TIMESTAMPTZ", "DATETIME", "DATETIME64", "DATE", "DATE32":
		return KindTime
	}
	return KindOther
}

// shape is what a version's answers are: its columns, their types and
// kinds.
type shape struct {
	columns, types []string
	kinds          []ColumnKind
}

// newShape is the shape of columns and types on engine eng.
func newShape(eng engine.Engine, columns, types []string) *shape {
	sh := &shape{columns: nonNil(columns), types: nonNil(types), kinds: make([]ColumnKind, len(types))}
	for i, t := range types {
		sh.kinds[i] = ColumnKindOf(eng, t)
	}
	return sh
}

// shapeSlot holds a compiled version's shape once known.
type shapeSlot struct{ p atomic.Pointer[shape] }

// engine is the executor's engine.
func (s *Service) engine() engine.Engine { return s.cfg.Executor.Engine() }

// recordColumns sets the columns and types of v, a SQL version about to
// be saved, to res, the engine's description of c made by the check at
// save (checkQuery, a run with LIMIT 0 that reads no row), and keeps them
// with c for its runs. A nil res (an insight, or a check that the engine
// failed on a value) leaves them unset: the version is described again at
// its first run (see versionShape).
func (s *Service) recordColumns(c *compiled, v *driver.Version, res *driver.Result) {
	if c == nil || c.insight != nil || res == nil {
		return
	}
	v.Columns, v.Types = nonNil(res.Columns), s.describedTypes(c, nonNil(res.Types))
	c.shape.p.Store(newShape(s.engine(), v.Columns, v.Types))
}

// versionShape returns the shape of version n of ep, compiled as c: the
// one kept with c, or the version's stored columns and types, or, for a
// version saved before versions kept them, the engine's description of it
// now, which is stored with the version. nil (the answer then keeps the
// engine's types) when the version is an insight or cannot be described;
// the run itself will say why.
func (s *Service) versionShape(ctx context.Context, ep *driver.Endpoint, c *compiled, n int) *shape {
	if c.insight != nil {
		return nil
	}
	if sh := c.shape.p.Load(); sh != nil {
		return sh
	}
	v, err := s.cfg.Endpoints.Version(ctx, ep.ProjectID, ep.ID, n)
	if err != nil {
		return nil
	}
	if v.Columns == nil {
		res, err := s.describe(ctx, ep, c)
		if err != nil {
			return nil
		}
		v.Columns, v.Types = nonNil(res.Columns), s.describedTypes(c, nonNil(res.Types))
		// Stored so that the next Service (or this one, once the compiled
		// version leaves its cache) need not describe it again; a failed
		// write is described again then.
		_ = s.cfg.Endpoints.SetVersionColumns(context.WithoutCancel(ctx), ep.ProjectID, ep.ID, n, v.Columns, v.Types)
	}
	sh := newShape(s.engine(), v.Columns, s.describedTypes(c, v.Types))
	c.shape.p.Store(sh)
	return sh
}

// describedTypes are types, those the engine described a version's
// columns with, and on SQLite, for an expression it leaves untyped whose
// result SQLite types the same whatever the values, that type (see
// sqliteFixedTypes): never a type learned from one answer's values.
func (s *Service) describedTypes(c *compiled, types []string) []string {
	if s.engine().TypedAsDeclared() {
		return types
	}
	return sqliteFixedTypes(c.query.SQL, types)
}

// conform makes out, an answer of a SQL version computed now, have the
// version's columns and types, and each value the form of its column's
// kind: a re-aggregated sum that a stored table's read answers as NUMERIC
// is cast back to the integer the inline run answers, an integral float of
// a float column stays a float, and so on. A value that its column's kind
// cannot hold exactly is left as the engine gave it; the error returned
// names the first one (the run reports it to the Observer).
func conform(out *RunResult, sh *shape) error {
	if sh == nil {
		return nil
	}
	if len(out.Columns) != len(sh.columns) {
		return fmt.Errorf("the answer has %d columns where version %d was saved with %d (%s)",
			len(out.Columns), out.EndpointVersion, len(sh.columns), strings.Join(sh.columns, ", "))
	}
	sh.onto(out)
	rows, ok := out.Results.([][]any)
	if !ok {
		return nil
	}
	var first error
	for _, row := range rows {
		for i, v := range row {
			if i >= len(sh.kinds) {
				break
			}
			w, ok := castValue(sh.kinds[i], v)
			if !ok {
				if first == nil {
					first = fmt.Errorf("column %q of type %s has a value of Go type %T", sh.columns[i], sh.types[i], v)
				}
				continue
			}
			row[i] = w
		}
	}
	return first
}

// onto gives out, an answer of as many columns as sh, sh's names, types
// and kinds; the names and types are out's own, as an answer's are (its
// caller may write to them).
func (sh *shape) onto(out *RunResult) {
	if len(out.Types) != len(sh.types) {
		out.Types = make([]string, len(sh.types))
	}
	copy(out.Columns, sh.columns)
	copy(out.Types, sh.types)
	out.kinds = sh.kinds
}

// castValue is v in the form of kind k, and whether it could be cast
// exactly. nil is null in every kind.
func castValue(k ColumnKind, v any) (any, bool) {
	if v == nil {
		return nil, true
	}
	switch k {
	case KindInteger:
		switch x := v.(type) {
		case int64:
			return x, true
		case int:
			return int64(x), true
		case int32:
			return int64(x), true
		case int16:
			return int64(x), true
		case int8:
			return int64(x), true
		case uint8:
			return int64(x), true
		case uint16:
			return int64(x), true
		case uint32:
			return int64(x), true
		case uint64:
			if x <= math.MaxInt64 {
				return int64(x), true
			}
		case float64:
			if x == math.Trunc(x) && math.Abs(x) < 1<<63 {
				return int64(x), true
			}
		case float32:
			if f := float64(x); f == math.Trunc(f) && math.Abs(f) < 1<<63 {
				return int64(f), true
			}
		case bool:
			if x {
				return int64(1), true
			}
			return int64(0), true
		case string:
			if n, err := strconv.ParseInt(x, 10, 64); err == nil {
				return n, true
			}
			// A decimal's text with a zero fraction ("99220.00").
			if whole, frac, ok := strings.Cut(x, "."); ok && strings.Trim(frac, "0") == "" {
				if n, err := strconv.ParseInt(whole, 10, 64); err == nil {
					return n, true
				}
			}
		case fmt.Stringer:
			return castValue(k, x.String())
		}
		return v, false
	case KindFloat:
		switch x := v.(type) {
		case float64:
			return x, true
		case float32:
			return float64(x), true
		case int64:
			return float64(x), true
		case int:
			return float64(x), true
		case int32:
			return float64(x), true
		case string:
			if f, err := strconv.ParseFloat(x, 64); err == nil {
				return f, true
			}
		case fmt.Stringer:
			return castValue(k, x.String())
		}
		return v, false
	case KindDecimal:
		switch x := v.(type) {
		case string:
			return x, true
		case int64:
			return strconv.FormatInt(x, 10), true
		case int:
			return strconv.Itoa(x), true
		case int32:
			return strconv.FormatInt(int64(x), 10), true
		case float64:
			return strconv.FormatFloat(x, 'f', -1, 64), true
		case float32:
			return strconv.FormatFloat(float64(x), 'f', -1, 32), true
		case fmt.Stringer:
			return x.String(), true
		}
		return v, false
	case KindString:
		switch x := v.(type) {
		case string:
			return x, true
		case int64:
			// SQLite's text affinity: a number in a text column reads as
			// its text.
			return strconv.FormatInt(x, 10), true
		case float64:
			return strconv.FormatFloat(x, 'g', -1, 64), true
		}
		return v, false
	case KindBoolean:
		switch x := v.(type) {
		case bool:
			return x, true
		case int64:
			if x == 0 || x == 1 {
				return x == 1, true
			}
		}
		return v, false
	case KindTime:
		switch v.(type) {
		case time.Time, string:
			return v, true
		}
		return v, false
	}
	return v, true
}

// ColumnsChangedError is a refresh refused because the engine now
// describes the query of the endpoint's version with other columns, or
// other types, than the version was saved with (a table or view it reads
// was changed since): the stored table would answer in another shape
// than the version's inline runs. The refresh fails, the last good table
// stays, and the endpoint's materialization state says why; saving the
// endpoint again makes a version of the new shape.
type ColumnsChangedError struct {
	// Version is the endpoint's version.
	Version int
	// SavedColumns and SavedTypes are the version's, as saved; Columns and
	// Types the engine's description of its query now.
	SavedColumns, SavedTypes, Columns, Types []string
}

// Error names the first column that differs.
func (e *ColumnsChangedError) Error() string {
	col := func(cols, types []string, i int) string {
		if types[i] == "" {
			return cols[i]
		}
		return cols[i] + " " + types[i]
	}
	if len(e.Columns) != len(e.SavedColumns) {
		return fmt.Sprintf("the query now answers %d columns (%s) where version %d was saved with %d (%s); save the endpoint again to keep the new columns",
			len(e.Columns), strings.Join(e.Columns, ", "), e.Version, len(e.SavedColumns), strings.Join(e.SavedColumns, ", "))
	}
	for i := range e.Columns {
		if e.Columns[i] != e.SavedColumns[i] || e.Types[i] != e.SavedTypes[i] {
			return fmt.Sprintf("column %d of the query is now %s where version %d was saved with %s; save the endpoint again to keep the new columns",
				i+1, col(e.Columns, e.Types, i), e.Version, col(e.SavedColumns, e.SavedTypes, i))
		}
	}
	return fmt.Sprintf("the columns of version %d changed", e.Version)
}

// checkColumns describes the query of e's current version, compiled as c,
// again, as a refresh starts, and refuses (ColumnsChangedError) a
// description whose columns differ from the version's in number or name,
// or whose types differ where both name one (SQLite names none for an
// expression). An insight, or a query the engine cannot describe, is left
// to the build, which says why it fails.
func (s *Service) checkColumns(ctx context.Context, e *driver.Endpoint, c *compiled) error {
	if c.insight != nil {
		return nil
	}
	sh := s.versionShape(ctx, e, c, e.CurrentVersion)
	if sh == nil {
		return nil
	}
	res, err := s.describe(ctx, e, c)
	if err != nil {
		return nil
	}
	cols, types := nonNil(res.Columns), nonNil(res.Types)
	if len(types) != len(cols) {
		types = make([]string, len(cols))
	}
	changed := len(cols) != len(sh.columns)
	for i := 0; !changed && i < len(cols); i++ {
		changed = cols[i] != sh.columns[i] || types[i] != "" && sh.types[i] != "" && types[i] != sh.types[i]
	}
	if !changed {
		return nil
	}
	return &ColumnsChangedError{Version: e.CurrentVersion, SavedColumns: slices.Clone(sh.columns), SavedTypes: slices.Clone(sh.types),
		Columns: cols, Types: types}
}
