package materialize

import (
	"slices"
	"strings"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/tree"
)

// Summarized one-bucket tables
//
// A DISTINCT aggregate over a range keeps its argument in the stored
// table's grain (distinctOverGrain): a user seen on two days counts once,
// so the read counts the distinct users of the stored rows again, and the
// table holds a row per group, value of the variables and user. A
// one-bucket read (onebucket.go) of such a table reads every one of
// those rows, tens of thousands for thirty days of users per day.
//
// Without a live tail, a one-bucket plan reads no stored row but as part
// of a whole group of the query: each group lies in one bucket, which a
// range takes whole or not at all, every other variable is compared with
// one value (=), and the partial buckets are groups of their own computed
// from the source. The stored rows of a group the read selects are then
// exactly the source rows of that group inline, and the stored table can
// hold each aggregate computed whole over them, DISTINCT ones included:
// one row per group of the query and value of the variables' columns,
// with no grain. The read takes each aggregate's one stored value
// (max over the one row, the pass-through of an equality-only plan), and
// the rows it reads are the answer's rows.
//
// With a live tail the groups from the build instant's bucket on (the
// cut, see tailCut) hold stored rows and newer ones, which may be of the
// same users. A summarized table cannot merge those: its reads take every
// source row from the cut on (the tail's rows and the cut bucket's stored
// ones) as groups of their own, and the stored groups before it. That
// reads at most one bucket more of the source than the tail itself, so it
// is done where the tail column is bucketed by the day or finer; a week
// or a month keeps the grain, whose stored rows of the cut's bucket the
// read merges with the tail's. Plans with window functions, which read
// the groups' rows otherwise, keep it too.

// storedFrom are the printed parts of the pre-compute query: each
// variable's stored expression, the FROM clause, and the WHERE terms
// without variables (with the live tail's bound, where there is one).
type storedFrom struct {
	vcols   []string
	from    string
	bounded string
}

// passThrough returns the read of an aggregate whose stored part is its
// value over the whole group, text printed: the value of the one stored
// row of each group the read selects.
func (b *builder) passThrough(name, text string) (string, bool, error) {
	if countLike[name] {
		return "coalesce(max(" + b.part(text) + "), 0)", true, nil
	}
	return "max(" + b.part(text) + ")", true, nil
}

// summarizable reports whether a one-bucket plan can store its groups
// summarized (see above): a DISTINCT aggregate keeps a grain, there is no
// live tail and no window function (a one-bucket plan has no OR of
// variables, see oneBucketable).
func (b *builder) summarizable(plan *Plan) bool {
	if len(b.grain) == 0 || plan.Tail() && !tailSummarizable(plan) {
		return false
	}
	for _, it := range b.items {
		if hasWindow(it.Expr) {
			return false
		}
	}
	if b.sel.Having != nil && hasWindow(b.sel.Having) {
		return false
	}
	return !slices.ContainsFunc(b.sel.OrderBy, func(o *tree.Order) bool { return hasWindow(o.Expr) })
}

// tailSummarizable reports whether a plan with a live tail can store its
// groups summarized: some bucketed variable is compared with the tail
// column (so that a read has a cut, see tailCut), and each such one is
// bucketed by the day or a finer unit, so that what a read takes from the
// source beyond the tail's rows is at most one day of them.
func tailSummarizable(p *Plan) bool {
	cut := false
	for _, f := range p.bucketColumns() {
		if f.raw != p.source.tail {
			continue
		}
		if units[string(f.bucket)] > units[string(engine.Day)] {
			return false
		}
		cut = true
	}
	return cut
}

// TailCutBucket returns the bucket at whose start the runs of a plan with
// a live tail and a summarized table begin to read the source (the cut,
// see tailCut): the finest bucket of the variables compared with the tail
// column. Such runs read the source from the start of the build instant's
// bucket, so a table built just after a bucket starts has them read the
// tail alone. ok is false for every other plan, whose runs read the source
// from the build instant itself (or read no tail).
func (p *Plan) TailCutBucket() (bucket engine.Bucket, ok bool) {
	if !p.Tail() || !p.summarized {
		return "", false
	}
	for _, f := range p.bucketColumns() {
		if f.raw == p.source.tail && (!ok || units[string(f.bucket)] < units[string(bucket)]) {
			bucket, ok = f.bucket, true
		}
	}
	return bucket, ok
}

// summarize makes the one-bucket plan's stored table summarized: its
// pre-compute query groups by the group keys and the variables' columns
// only, each aggregate computed whole, and the one-bucket read takes the
// aggregates' values (passThrough). keys are the group keys; r printed
// the read's items. The partial buckets' source parts are left as they
// are: they are merged with one another only, never with stored rows.
// Where the summarized read cannot be printed, the plan keeps its grain.
func (b *builder) summarize(plan *Plan, keys []tree.Expr, r *readPrinter) error {
	stored, parts, names, grain, grainNames := b.stored, b.parts, b.storedNames, b.grain, b.grainNames
	defer func() {
		b.stored, b.parts, b.storedNames, b.grain, b.grainNames = stored, parts, names, grain, grainNames
		b.summarized = false
	}()
	b.stored, b.parts, b.storedNames, b.grain, b.grainNames = nil, map[string]string{}, nil, nil, map[string]string{}
	b.summarized = true
	read, having, err := b.readSelect(r)
	if err != nil || len(b.grain) > 0 {
		return nil
	}
	pre, err := b.keyColumns(keys)
	if err != nil {
		return err
	}
	pre = append(pre, b.stored...)
	sf := b.storedFrom
	for i := range b.vars {
		pre = append(pre, sf.vcols[i]+" AS "+b.q(b.varColumn(i)))
	}
	plan.precompute = "SELECT " + strings.Join(pre, ", ") + sf.from + sf.bounded
	if groups := b.precomputeGroups(keys, sf.vcols); len(groups) > 0 {
		plan.precompute += " GROUP BY " + strings.Join(groups, ", ")
	}
	plan.taken = b.storedColumns(len(keys))
	plan.oneBucket.head = "SELECT " + strings.Join(read, ", ") + " FROM "
	plan.oneBucket.having = having
	plan.summarized = true
	return nil
}
