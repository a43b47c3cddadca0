package materialize

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/endpointkit/endpointkit/sql/tree"
	"github.com/endpointkit/endpointkit/variable"
)

// dateShift is a constant interval a Date variable is moved by before it
// is compared: timestamp >= {variables.to} - INTERVAL '7' DAY. The stored
// table keeps the column as for the variable alone; a read compares it
// with the value moved by the interval, which is exact as long as the
// interval is a fixed length of time (seconds to weeks): months and years
// are not, and engines part on a month's end.
type dateShift struct {
	by time.Duration
}

// name is the key under which a read finds the moved value of variable v:
// not a code name (it holds spaces), so it meets no variable's.
func (s *dateShift) name(v string) string {
	return fmt.Sprintf("%s %+ds", v, int64(s.by/time.Second))
}

// fixedUnits are the interval units of a fixed length, by each engine's
// spelling (singular; a trailing s is dropped first).
var fixedUnits = map[string]time.Duration{
	"second": time.Second, "minute": time.Minute, "hour": time.Hour, "day": 24 * time.Hour, "week": 7 * 24 * time.Hour,
}

// timestampCasts are the cast types that keep a date variable's instant
// as it is (a cast to a date would drop its time of day).
var timestampCasts = map[string]bool{"timestamp": true, "datetime": true}

// castType is the type a cast names, as the parser or the stand-ins put it
// back (AS timestamp, ::timestamp), lower-case.
func castType(t string) string {
	t = strings.ToLower(strings.TrimSpace(t))
	if rest, ok := strings.CutPrefix(t, "as "); ok {
		t = rest
	}
	return strings.TrimSpace(strings.TrimPrefix(t, "::"))
}

// passThrough are functions of one date argument that keep its instant:
// SQLite's datetime(x), ClickHouse's toDateTime(x) and toDateTime64(x, p
// [, 'UTC']).
var passThrough = map[string]bool{"datetime": true, "todatetime": true, "todatetime64": true}

// moved reports whether e is the bind variable index, as itself or moved
// by constant intervals (each engine's forms: x ± INTERVAL n unit,
// DATE_SUB and DATE_ADD, SQLite's datetime(x, '-n days'), ClickHouse's
// subtractDays(x, n) and addDays, through casts to a timestamp). The
// shift is nil when e is the variable itself; a reason says why an
// interval cannot be read (a month, a unit of no fixed length).
func moved(e tree.Expr, ph *tree.Placeholder) (*dateShift, *Reason, bool) {
	var by time.Duration
	e = unparen(e)
	for {
		if placeholderOf(e) == ph {
			if by == 0 {
				return nil, nil, true
			}
			return &dateShift{by: by}, nil, true
		}
		var (
			next tree.Expr
			d    time.Duration
			r    *Reason
		)
		switch x := e.(type) {
		case *tree.BinaryExpr:
			iv, ok := x.Right.(*tree.IntervalExpr)
			if !ok || iv.Unit == "" || x.Operator != "+" && x.Operator != "-" {
				return nil, nil, false
			}
			if d, r = intervalOf(iv.Expr, iv.Unit); r == nil && x.Operator == "-" {
				d = -d
			}
			next = x.Left
		case *tree.ConvertExpr:
			if x.Form != "CAST" && x.Form != "::" && x.Form != "CONVERT" || !timestampCasts[castType(x.Type)] {
				return nil, nil, false
			}
			next = x.Expr
		case *tree.FuncExpr:
			var ok bool
			next, d, r, ok = movedBy(x)
			if !ok {
				return nil, nil, false
			}
		default:
			return nil, nil, false
		}
		if r != nil {
			if fs := findBinds(next); len(fs) == 1 && fs[0].ph == ph {
				return nil, r, true
			}
			return nil, nil, false
		}
		by += d
		e = unparen(next)
	}
}

// movedBy reads a function that moves its first argument by a constant
// interval, or keeps it (passThrough): the argument, the interval, and a
// reason when the interval is not of a fixed length.
func movedBy(f *tree.FuncExpr) (tree.Expr, time.Duration, *Reason, bool) {
	name := lowered(f.Name)
	var args []tree.Expr
	for _, e := range f.Exprs {
		if _, ok := e.(*tree.StarExpr); ok {
			return nil, 0, nil, false
		}
		args = append(args, unparen(e))
	}
	if len(args) == 0 || f.Distinct || !plainCall(f) {
		return nil, 0, nil, false
	}
	switch {
	case passThrough[name] && name != "datetime":
		// toDateTime64(x, precision, 'UTC'): a zone other than UTC
		// would read the value elsewhere.
		if len(args) == 3 {
			if z, ok := textOf(args[2]); !ok || z != "UTC" {
				return nil, 0, nil, false
			}
		}
		if name == "todatetime" && len(args) > 1 || len(args) > 3 {
			return nil, 0, nil, false
		}
		return args[0], 0, nil, true
	case name == "datetime":
		// SQLite: each modifier '+n unit' or '-n units'; another (start
		// of day, localtime) changes the value otherwise.
		var by time.Duration
		for _, m := range args[1:] {
			text, ok := textOf(m)
			if !ok {
				return nil, 0, nil, false
			}
			fields := strings.Fields(text)
			if len(fields) != 2 {
				return nil, 0, nil, false
			}
			d, r := intervalOf(&tree.Literal{Kind: tree.NumVal, Text: fields[0]}, fields[1])
			if r != nil {
				return args[0], 0, r, true
			}
			by += d
		}
		return args[0], by, nil, true
	case (name == "date_sub" || name == "date_add" || name == "subdate" || name == "adddate") && len(args) == 2:
		iv, ok := args[1].(*tree.IntervalExpr)
		if !ok || iv.Unit == "" {
			return nil, 0, nil, false
		}
		d, r := intervalOf(iv.Expr, iv.Unit)
		if strings.Contains(name, "sub") {
			d = -d
		}
		return args[0], d, r, true
	case len(args) == 2 && (strings.HasPrefix(name, "subtract") || strings.HasPrefix(name, "add")):
		// ClickHouse: subtractDays(x, n), addHours(x, n), ...
		unit := strings.TrimPrefix(strings.TrimPrefix(name, "subtract"), "add")
		d, r := intervalOf(args[1], unit)
		if strings.HasPrefix(name, "subtract") {
			d = -d
		}
		return args[0], d, r, true
	}
	return nil, 0, nil, false
}

// intervalOf reads n units: n a whole number (or its text), unit one of
// fixedUnits; a reason otherwise.
func intervalOf(n tree.Expr, unit string) (time.Duration, *Reason) {
	text, ok := textOf(n)
	if !ok {
		return 0, &Reason{Code: CodeInExpression, Message: "is moved by an interval whose length is not a constant whole number"}
	}
	count, err := strconv.ParseInt(strings.TrimSpace(text), 10, 32)
	if err != nil {
		return 0, &Reason{Code: CodeInExpression, Message: fmt.Sprintf("is moved by an interval of %q units; only a whole number can be materialized", text)}
	}
	u := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(unit)), "s")
	d, ok := fixedUnits[u]
	if !ok {
		return 0, &Reason{Code: CodeInExpression, Message: fmt.Sprintf(
			"is moved by an interval in %s; only seconds, minutes, hours, days and weeks (fixed lengths of time) can be materialized; months and years end differently on each engine", strings.ToLower(unit))}
	}
	return time.Duration(count) * d, nil
}

// textOf returns the text of a number or string literal.
func textOf(e tree.Expr) (string, bool) {
	v, ok := e.(*tree.Literal)
	if !ok {
		return "", false
	}
	switch v.Kind {
	case tree.NumVal:
		if strings.ContainsAny(v.Text, ".eExX") {
			return "", false
		}
		return v.Text, true
	case tree.StrVal:
		return stringContent(v.Text)
	}
	return "", false
}

// stringContent returns the value of a string literal's source text when
// it needs no decoding beyond doubled quotes (no backslash, no prefix), for
// the few places the analysis reads a literal's value ('now', 'UTC', a
// date_trunc unit).
func stringContent(src string) (string, bool) {
	if len(src) < 2 || src[0] != src[len(src)-1] || src[0] != '\'' && src[0] != '"' || strings.ContainsRune(src, '\\') {
		return "", false
	}
	q := src[:1]
	return strings.ReplaceAll(src[1:len(src)-1], q+q, q), true
}

// stringLit returns the value of e when it is a string literal that needs
// no decoding (see stringContent).
func stringLit(e tree.Expr) (string, bool) {
	v, ok := e.(*tree.Literal)
	if !ok || v.Kind != tree.StrVal {
		return "", false
	}
	return stringContent(v.Text)
}

// plainCall reports whether f is a plain call: no parameters, ORDER BY,
// FILTER, OVER or keyword arguments.
func plainCall(f *tree.FuncExpr) bool {
	if f.HasParams || f.OrderBy != nil || f.Separator != nil || f.WithinGroup != nil || f.Filter != nil || f.Over != nil || f.NoParens {
		return false
	}
	for _, kw := range f.Keywords {
		if kw != "" {
			return false
		}
	}
	return true
}

// movedValues returns values with the value of every moved use of a
// variable under its shift's name (see dateShift.name), moved, and the
// values of every OR group under its name (orName): what the read's
// filters of those uses bind.
func (p *Plan) movedValues(values map[string]any) (map[string]any, error) {
	ors := 0
	for _, f := range p.filters {
		if f.or != nil {
			ors++
		}
	}
	if len(p.moves) == 0 && ors == 0 {
		return values, nil
	}
	out := make(map[string]any, len(values)+len(p.moves)+ors)
	for k, v := range values {
		out[k] = v
	}
	for _, f := range p.filters {
		if f.or != nil {
			vals, err := orValuesOf(f, values)
			if err != nil {
				return nil, err
			}
			out[f.variable] = vals
		}
	}
	for name, m := range p.moves {
		v, ok := values[m.variable]
		switch x := v.(type) {
		case variable.Timestamp:
			out[name] = variable.Timestamp{Time: x.Time.Add(m.by)}
		case time.Time:
			out[name] = x.Add(m.by)
		case nil:
			if !ok {
				return nil, &ValueError{Variable: m.variable, Detail: "no value; every variable of a materialized endpoint is required"}
			}
			return nil, &ValueError{Variable: m.variable, Detail: "null cannot be compared"}
		default:
			return nil, &ValueError{Variable: m.variable, Detail: fmt.Sprintf("want a date to move by an interval, got Go type %T", v)}
		}
	}
	return out, nil
}

// move is one moved use's value: variable's moved by by.
type move struct {
	variable string
	by       time.Duration
}
