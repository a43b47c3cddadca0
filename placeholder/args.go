package placeholder

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/endpointkit/endpointkit/variable"
)

// Text layouts of dates bound as text. The demo data and many SQLite and
// MySQL schemas keep UTC timestamps as such text, which sorts and compares
// correctly as text.
const (
	dateLayout     = "2006-01-02"
	dateTimeLayout = "2006-01-02 15:04:05"
)

// convert returns the driver argument for the scalar value v on dialect
// d, and for ClickHouse the parameter type of its marker. Values that the
// driver takes as they are come back as the same interface, which costs
// no allocation. A failure returns a detail for a *VariableError.
func (d Dialect) convert(v any) (arg any, chType string, detail string) {
	switch x := v.(type) {
	case string:
		return d.text(v, x, "String")
	case int64:
		return d.integer(v, x)
	case float64:
		return d.float(v, x)
	case bool:
		if d.kind == kindClickHouse {
			return strconv.FormatBool(x), "Bool", ""
		}
		return v, "", ""
	case variable.Timestamp:
		return d.time(x.Time, x.DateOnly)
	case time.Time:
		return d.time(x, false)
	case int:
		return d.integer(nil, int64(x))
	case int8:
		return d.integer(nil, int64(x))
	case int16:
		return d.integer(nil, int64(x))
	case int32:
		return d.integer(nil, int64(x))
	case uint:
		return d.unsigned(uint64(x))
	case uint8:
		return d.integer(nil, int64(x))
	case uint16:
		return d.integer(nil, int64(x))
	case uint32:
		return d.integer(nil, int64(x))
	case uint64:
		return d.unsigned(x)
	case float32:
		return d.float(nil, float64(x))
	case nil:
		return nil, "", "got null"
	}
	return nil, "", fmt.Sprintf("got Go type %T", v)
}

// text returns a string argument; boxed is s already in an interface.
func (d Dialect) text(boxed any, s, chType string) (any, string, string) {
	if d.kind == kindClickHouse {
		return s, chType, ""
	}
	if boxed == nil {
		return s, "", ""
	}
	return boxed, "", ""
}

func (d Dialect) integer(boxed any, n int64) (any, string, string) {
	if d.kind == kindClickHouse {
		return strconv.FormatInt(n, 10), "Int64", ""
	}
	if boxed == nil {
		return n, "", ""
	}
	return boxed, "", ""
}

func (d Dialect) unsigned(n uint64) (any, string, string) {
	if n > math.MaxInt64 {
		return nil, "", fmt.Sprintf("%d does not fit a signed 64-bit integer", n)
	}
	return d.integer(nil, int64(n))
}

func (d Dialect) float(boxed any, f float64) (any, string, string) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, "", fmt.Sprintf("%v is not a number SQL can compare", f)
	}
	if d.kind == kindClickHouse {
		return strconv.FormatFloat(f, 'g', -1, 64), "Float64", ""
	}
	if boxed == nil {
		return f, "", ""
	}
	return boxed, "", ""
}

// time binds a point in time: as text on SQLite and MySQL, a time.Time on
// PostgreSQL, and a Date or DateTime('UTC') parameter on ClickHouse so
// that the server does not read the text in its own time zone.
func (d Dialect) time(t time.Time, dateOnly bool) (any, string, string) {
	t = t.UTC()
	switch d.kind {
	case kindPostgreSQL:
		return t, "", ""
	case kindClickHouse:
		if dateOnly {
			return t.Format(dateLayout), "Date", ""
		}
		return t.Format(dateTimeLayout), "DateTime('UTC')", ""
	}
	if dateOnly {
		return t.Format(dateLayout), "", ""
	}
	return t.Format(dateTimeLayout), "", ""
}
