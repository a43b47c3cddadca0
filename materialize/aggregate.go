package materialize

import (
	"strings"

	"github.com/endpointkit/endpointkit/sql/tree"
)

// aggregates are the aggregate functions the analysis knows, by lower-case
// name. A function not listed here is taken for a scalar one.
var aggregates = map[string]bool{
	"count": true, "sum": true, "total": true, "min": true, "max": true, "avg": true,
	"group_concat": true, "string_agg": true, "array_agg": true, "json_group_array": true,
	"json_group_object": true, "jsonb_group_array": true, "jsonb_group_object": true,
	"json_agg": true, "jsonb_agg": true, "json_object_agg": true, "json_arrayagg": true, "json_objectagg": true,
	"median": true, "mode": true, "percentile": true, "percentile_cont": true, "percentile_disc": true,
	"stddev": true, "stddev_pop": true, "stddev_samp": true, "std": true, "variance": true,
	"var_pop": true, "var_samp": true, "bit_and": true, "bit_or": true, "bit_xor": true,
	"bool_and": true, "bool_or": true, "every": true, "corr": true, "covar_pop": true, "covar_samp": true,
	"uniq": true, "uniqexact": true, "uniqcombined": true, "uniqcombined64": true, "uniqhll12": true,
	"uniqtheta": true, "count_distinct": true, "any": true, "anylast": true, "anyheavy": true,
	"argmin": true, "argmax": true, "grouparray": true, "groupuniqarray": true, "topk": true,
	"quantile": true, "quantiles": true, "quantileexact": true, "quantiletdigest": true,
	"countif": true, "sumif": true, "avgif": true, "minif": true, "maxif": true, "uniqif": true,
	"stddevpop": true, "stddevsamp": true, "varpop": true, "varsamp": true,
}

// countLike are the aggregates whose value over no rows is 0, not NULL.
var countLike = map[string]bool{
	"count": true, "count_distinct": true, "countif": true, "uniq": true, "uniqexact": true,
	"uniqcombined": true, "uniqcombined64": true, "uniqhll12": true, "uniqtheta": true, "uniqif": true,
}

// nullOnEmpty are the aggregates whose value over no rows is NULL in every
// dialect. (ClickHouse answers NaN or a default for many others, MySQL all
// bits set for BIT_AND.)
var nullOnEmpty = map[string]bool{
	"sum": true, "min": true, "max": true, "avg": true, "group_concat": true, "string_agg": true,
	"array_agg": true, "json_agg": true, "jsonb_agg": true, "bool_and": true, "bool_or": true, "every": true,
}

// isAggregate reports whether e is an aggregate call (at its top).
func isAggregate(e tree.Expr) bool {
	switch f := e.(type) {
	case *tree.FuncExpr:
		name := strings.ToLower(f.Name.Name)
		if (name == "min" || name == "max") && len(f.Exprs) != 1 {
			return false // the scalar min(a, b) and max(a, b)
		}
		return f.Qualifier.IsEmpty() && f.Over == nil && aggregates[name]
	}
	return false
}

// hasAggregate reports whether an aggregate call occurs in n, not counting
// subqueries, whose aggregates are their own.
func hasAggregate(n ...tree.Node) bool {
	found := false
	_ = tree.Walk(func(c tree.Node) (bool, error) {
		if found {
			return false, nil
		}
		if _, ok := c.(*tree.Subquery); ok {
			return false, nil
		}
		if e, ok := c.(tree.Expr); ok && isAggregate(e) {
			found = true
			return false, nil
		}
		return true, nil
	}, n...)
	return found
}

// hasNode reports whether a node satisfying pred occurs in n.
func hasNode(n tree.Node, pred func(tree.Node) bool) bool {
	found := false
	_ = tree.Walk(func(c tree.Node) (bool, error) {
		if found || pred(c) {
			found = true
			return false, nil
		}
		return true, nil
	}, n)
	return found
}
