package materialize

import (
	"slices"
	"strings"
	"time"

	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/tree"
	"github.com/endpointkit/endpointkit/variable"
)

// One-bucket groups
//
// A read combines the stored rows of each group of the query again, over
// every bucket of its date range: that costs as much as the rows it reads,
// and more for a DISTINCT aggregate, whose values it must sort out. Most
// queries that aggregate over a date range group by the date itself,
// truncated (users per day over thirty days): then every group of the
// query lies in one bucket of each bucketed variable, and a read does less.
//
//   - Its stored part groups the stored rows by their own columns (the
//     variables' and the group keys), which an index holds in that order
//     (see engine.Engine.GroupsInIndexOrder), so the engine aggregates as
//     it reads.
//   - With every other variable compared with = (one value each) and one
//     DISTINCT argument kept in the grain, the stored rows of a group hold
//     each of its values once: count, sum and avg of DISTINCT x need no
//     DISTINCT there.
//   - The partial buckets of an unaligned range, and the rows of a live
//     tail, are groups of their own, so the stored part is answered
//     alone and the rest is merged after it, each group whole on one side.

// oneBucket is the read of a plan whose groups each lie in one bucket.
type oneBucket struct {
	head   string // SELECT list over the stored rows, with " FROM "
	group  string // " GROUP BY " the stored columns in index order, the keys
	having string // " HAVING ..." or ""
}

// setOneBucket sets plan.oneBucket when every group of the query lies in
// one bucket of each bucketed variable: some group key determines the
// bucket of each (see determines), every other variable is compared with =
// only, and the read's ORDER BY names output columns only (it orders the
// merged groups). keys are the group keys; r printed the read's items.
func (b *builder) setOneBucket(plan *Plan, keys []tree.Expr, r *readPrinter) error {
	if !b.oneBucketable(keys) {
		return nil
	}
	b.uniqueGrain = len(b.grain) == 1
	defer func() { b.uniqueGrain = false }()
	read, having, err := b.readSelect(r)
	if err != nil {
		return err
	}
	group := slices.Clone(plan.keyColumns())
	for j := range keys {
		group = append(group, b.gen('k', j))
	}
	for j, g := range group {
		group[j] = b.q(g)
	}
	plan.oneBucket = &oneBucket{head: "SELECT " + strings.Join(read, ", ") + " FROM ",
		group: " GROUP BY " + strings.Join(group, ", "), having: having}
	if b.summarizable(plan) {
		return b.summarize(plan, keys, r)
	}
	return nil
}

// oneBucketable reports whether every group of the query, with group
// keys keys, lies in one bucket of each bucketed variable, with every
// other variable compared with = and none under an OR (see setOneBucket).
func (b *builder) oneBucketable(keys []tree.Expr) bool {
	if len(keys) == 0 || b.sel.Distinct != "" || !b.bucketed() || b.expanded {
		return false
	}
	for _, o := range b.sel.OrderBy {
		if b.orderPosition(o.Expr) == 0 {
			return false
		}
	}
	zoned := b.d.ZonedTruncation()
	for i, v := range b.vars {
		if slices.ContainsFunc(b.uses[i], func(u use) bool { return u.group > 0 }) {
			// Under an OR, the rows of one group match through different
			// values of the OR's columns: a group spans several stored
			// rows, each holding its users.
			return false
		}
		if v.Bucket == "" {
			if slices.ContainsFunc(v.Operators, func(op string) bool { return op != "=" }) {
				return false
			}
			continue
		}
		if !slices.ContainsFunc(keys, func(k tree.Expr) bool { return determines(k, b.uses[i][0].expr, v.Bucket, zoned) }) {
			return false
		}
	}
	return true
}

// units orders the truncations: each determines the buckets of the units
// after it, but a week does not determine its month.
var units = map[string]int{"second": 0, string(engine.Minute): 1, string(engine.Hour): 2, string(engine.Day): 3, string(engine.Week): 4, string(engine.Month): 5}

// determines reports whether the value of the group key k determines the
// bucket of expr: k is expr itself, or expr truncated to the bucket or a
// finer unit in one of the forms the engines spell it (naming 'UTC' where
// zoned, see engine.Engine.ZonedTruncation).
func determines(k, expr tree.Expr, bucket engine.Bucket, zoned bool) bool {
	if canonical(k) == canonical(expr) {
		return true
	}
	arg, unit := truncation(k, zoned)
	if arg == nil || canonical(arg) != canonical(expr) {
		return false
	}
	u, b := units[unit], units[string(bucket)]
	return u == b || u < b && u <= units[string(engine.Day)]
}

// truncations are the functions of one argument that truncate a time to
// a unit: SQLite's, MySQL's and PostgreSQL's date(), ClickHouse's toDate
// and toStartOf*.
var truncations = map[string]string{
	"date": "day", "datetime": "second", "todate": "day", "tostartofday": "day",
	"tostartofhour": "hour", "tostartofminute": "minute", "tostartofmonth": "month", "tomonday": "week",
}

// truncation returns the argument and the unit of a truncating call: one
// of truncations, date_trunc('unit', x) (PostgreSQL, ClickHouse), or
// SQLite's strftime(format, x) whose format holds the year and month, and
// the day, hour and minute in turn; a nil argument otherwise. Where zoned,
// the call must end with the zone 'UTC' (toDate(x, 'UTC')), and must not
// name one elsewhere.
func truncation(e tree.Expr, zoned bool) (tree.Expr, string) {
	f, ok := e.(*tree.FuncExpr)
	if !ok || f.Distinct || !f.Qualifier.IsEmpty() || !plainCall(f) {
		return nil, ""
	}
	args := callArgs(f)
	if zoned {
		last := len(args) - 1
		if last < 1 || !isString(args[last], "UTC") {
			return nil, ""
		}
		args = args[:last]
	}
	name := lowered(f.Name)
	if unit, ok := truncations[name]; ok && len(args) == 1 {
		return args[0], unit
	}
	if len(args) != 2 {
		return nil, ""
	}
	lit, ok := stringLit(args[0])
	if !ok {
		return nil, ""
	}
	if unit := namedUnit(name, lit); unit != "" {
		return args[1], unit
	}
	return nil, ""
}

// namedUnit returns the unit a call of name truncates to with the string
// s first: date_trunc's unit, a strftime format's; "" for others.
func namedUnit(name, s string) string {
	switch name {
	case "date_trunc", "datetrunc":
		if _, ok := units[strings.ToLower(s)]; ok {
			return strings.ToLower(s)
		}
	case "strftime":
		return strftimeUnit(s)
	}
	return ""
}

// callArgs returns the arguments of f, nil when one is not an expression
// (a * or a qualified star).
func callArgs(f *tree.FuncExpr) []tree.Expr {
	args := make([]tree.Expr, 0, len(f.Exprs))
	for _, e := range f.Exprs {
		if _, ok := e.(*tree.StarExpr); ok {
			return nil
		}
		args = append(args, e)
	}
	return args
}

// isString reports whether e is the string literal s.
func isString(e tree.Expr, s string) bool {
	lit, ok := stringLit(e)
	return ok && lit == s
}

// strftimeUnit returns the finest unit a SQLite strftime format keeps
// whole: month with %Y and %m, then day with %d, hour with %H, minute
// with %M, second with %S; "" without the year and month, or with a
// literal %.
func strftimeUnit(format string) string {
	if strings.Contains(format, "%%") { // a literal %: %%Y is no year
		return ""
	}
	unit := ""
	for _, step := range []struct{ directive, unit string }{
		{"%m", "month"}, {"%d", "day"}, {"%H", "hour"}, {"%M", "minute"}, {"%S", "second"},
	} {
		if !strings.Contains(format, "%Y") || !strings.Contains(format, step.directive) {
			break
		}
		unit = step.unit
	}
	return unit
}

// tailCut is where the stored part of a one-bucket read ends on a plan
// with a live tail: at the bucket of the build instant, of each bucketed
// variable compared with the tail column. A tail row is newer than the
// build instant, so its group is at or after the cut in every one of those
// buckets: a stored row before the cut in any of them is in a group of its
// own, and only those at or after it in all of them share groups with the
// tail's rows and are merged with them. Variables with the same bucket
// store the same column twice (from and to of one range), so the cut keeps
// one filter per bucket.
type tailCut struct {
	filters []filter
	at      []time.Time
}

// tailCut returns the cut of a read with values: nil without a live tail,
// and false when no bucketed variable is compared with the tail column,
// so that the tail's rows may fall in any group.
func (p *Plan) tailCut(values map[string]any) (*tailCut, bool) {
	if !p.Tail() {
		return nil, true
	}
	var at time.Time
	switch x := values[BuiltAtVariable].(type) { // checked by checkValues
	case time.Time:
		at = x
	case variable.Timestamp:
		at = x.Time
	}
	c := &tailCut{}
	for _, f := range p.bucketColumns() {
		if f.raw == p.source.tail && !slices.ContainsFunc(c.filters, func(g filter) bool { return g.bucket == f.bucket }) {
			c.filters = append(c.filters, f)
			c.at = append(c.at, f.bucket.Floor(at))
		}
	}
	return c, len(c.filters) > 0
}

// last returns the latest of the cut's instants: a row before it is
// before the cut in some bucket (a stored group's), and one at or after it
// in none.
func (c *tailCut) last() *time.Time {
	last := c.at[0]
	for _, t := range c.at[1:] {
		if t.After(last) {
			last = t
		}
	}
	return &last
}

// narrow returns iv, the whole buckets of the stored column, narrowed to
// the cut: from it on when after, before it when the cut has this column
// alone (with more, the rows before the cut in any are an OR, which
// writeStoredFilters writes). One bound a column, not two, lets an index
// range over the narrower one on every engine.
func (c *tailCut) narrow(iv interval, column string, after bool) interval {
	if c == nil {
		return iv
	}
	i := slices.IndexFunc(c.filters, func(f filter) bool { return f.column == column })
	switch {
	case i < 0:
	case after && (iv.lo == nil || iv.lo.Before(c.at[i])):
		iv.lo = &c.at[i]
	case !after && len(c.filters) == 1 && (iv.hi == nil || c.at[i].Before(*iv.hi)):
		iv.hi = &c.at[i]
	}
	return iv
}

// writeOneBucketMerged writes the merged read of a one-bucket plan whose
// every bucketed expression has whole buckets, with a partial one or a
// live tail (cut): the groups of the stored
// rows (before the cut, with one), aggregated as they are read, then those
// of the partial buckets and the live tail, with the stored rows from the
// cut on, merged and aggregated again.
func (p *Plan) writeOneBucketMerged(b *placeholder.Builder, table string, values map[string]any, ivs map[string]interval, groups []group, cut *tailCut) error {
	ob := p.oneBucket
	p.text(b, "SELECT * FROM ("+ob.head, values)
	b.WriteIdent(table)
	if err := p.writeStoredFilters(b, values, ivs, cut, false); err != nil {
		return err
	}
	p.text(b, ob.group+ob.having+" UNION ALL "+p.readHead+"(", values)
	var from *time.Time
	switch {
	case cut != nil && p.summarized:
		// The stored groups from the cut on hold no users to merge with
		// the tail's: the source's rows from the cut on are read instead.
		from = cut.last()
	case cut != nil:
		b.WriteString("SELECT " + p.source.columnList(b) + " FROM ")
		b.WriteIdent(table)
		if err := p.writeStoredFilters(b, values, ivs, cut, true); err != nil {
			return err
		}
	}
	if err := p.writeSourceParts(b, values, groups, true, cut == nil || from != nil, from); err != nil {
		return err
	}
	b.WriteString(") AS ")
	b.WriteIdent("stored_parts")
	p.text(b, p.readGroup+") AS ", values)
	b.WriteIdent("stored_groups")
	return nil
}
