package endpoint

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/insight"
	"github.com/endpointkit/endpointkit/materialize"
)

// readMaterializedSQL answers a run of a materialized SQL endpoint from its
// stored table, with values bound and checked. It returns nil and no error
// when the run must go inline instead: an older version, no fresh table for
// the current version and buckets, a value the table cannot answer exactly
// (materialize.ErrRunInline), or a read the database refused (the table
// being swapped by a refresh at that instant). The read filters, orders
// and pages in SQL, as the inline run does: it fetches at most limit+1
// rows, the one more telling whether there are more.
func (s *Service) readMaterializedSQL(ctx context.Context, ep *Endpoint, c *compiled, values map[string]any, opts runOptions, now time.Time) (*RunResult, error) {
	if !ep.IsMaterialized || opts.version != ep.CurrentVersion {
		return nil, nil
	}
	table, at, ok := servingTable(ep, c, now)
	if !ok {
		return nil, nil
	}
	v := s.verdict(c, ep.MaterializationBuckets, ep.MaterializationTailColumn)
	if !v.ok {
		return nil, nil
	}
	trace := newRunTrace(opts.debug)
	if v.plan.Tail() {
		// The newer rows come from the source: those after the instant
		// the table was built at.
		values = maps.Clone(values)
		values[materialize.BuiltAtVariable] = at
	}
	query, args, err := v.plan.ReadPage(table, values, int64(opts.limit)+1, int64(opts.offset))
	var ve *materialize.ValueError
	switch {
	case errors.As(err, &ve):
		return nil, withCause(invalidf(CodeInvalidVariableValue, "variables", "Invalid value for variable '%s': %s", ve.Variable, ve.Detail), err)
	case err != nil:
		return nil, nil
	}
	trace.rendered(query, args)
	res, err := s.readStored(ctx, query, args)
	if res == nil {
		return nil, err
	}
	return sqlResult(ep, opts, &at, res, 0, &trace), nil
}

// readStored executes a read of a stored table. A read the database
// refuses returns no result and no error, so that the run goes inline: the
// table may be being swapped by a refresh at that instant. A timeout, a
// result over MaxResultBytes (inline would be as large), or a run whose
// context ended, is an error.
func (s *Service) readStored(ctx context.Context, query string, args []any) (*driver.Result, error) {
	res, err := s.execute(ctx, query, args)
	if err != nil && !errors.Is(err, ErrTimeout) && !errors.Is(err, driver.ErrResultTooLarge) && ctx.Err() == nil {
		return nil, nil
	}
	return res, err
}

// checkMaterializedInsightVars checks the keys of a run of a materialized
// insight endpoint: only breakdown variables exist (date_from and date_to
// are refused, the data being computed for the saved range), and each is
// required unless the endpoint lists it as optional, because a materialized
// endpoint must not return all series by omission. The check is the same
// whether the run then reads the table or goes inline.
func checkMaterializedInsightVars(ep *Endpoint, c *compiled, given map[string]any) error {
	props := c.insight.Variables(true)
	var unknown []string
	for k := range given {
		if !slices.Contains(props, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		return invalidf(CodeUnknownVariable, "variables", "Unknown variable(s): %s", joinSorted(unknown))
	}
	var missing []string
	for _, p := range props {
		if _, ok := given[p]; !ok && !slices.Contains(ep.OptionalBreakdowns, p) {
			missing = append(missing, "'"+p+"'")
		}
	}
	if len(missing) > 0 {
		return invalidf(CodeRequiredVariableMissing, "variables", "Required variable(s) %s not provided", strings.Join(missing, ", "))
	}
	return nil
}

// readMaterializedInsight answers a run of a materialized insight endpoint
// from its stored table: exactly what the inline run would have answered
// when the table was built. Like readMaterializedSQL it returns nil and no
// error when the run must go inline.
func (s *Service) readMaterializedInsight(ctx context.Context, ep *Endpoint, c *compiled, given map[string]any, opts runOptions, now time.Time) (*RunResult, error) {
	table, at, ok := servingTable(ep, c, now)
	if !ok {
		return nil, nil
	}
	trace := newRunTrace(opts.debug)
	stmt, err := insight.ReadMaterialized(c.insight, s.cfg.Executor.Engine(), table, given, at)
	if err != nil {
		return nil, insightRunError(err)
	}
	trace.rendered(stmt.SQL, stmt.Args)
	res, err := s.readStored(ctx, stmt.SQL, stmt.Args)
	if res == nil {
		return nil, err
	}
	return insightResult(ep, opts, &at, stmt, res, &trace)
}
