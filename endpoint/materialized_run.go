package endpoint

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/materialize"
	"github.com/endpointkit/endpointkit/sql/scope"
)

// fallback is why a run of a materialized endpoint went inline: a reason
// for the answer, and err when the database refused the stored table's
// read. A nil *fallback is a run that had no stored table to read.
type fallback struct {
	reason string
	err    error
}

// onto says in res why it ran inline; res may be nil (a failed run).
func (f *fallback) onto(res *RunResult) *RunResult {
	if f != nil && res != nil {
		res.InlineReason, res.fallbackErr = f.reason, f.err
	}
	return res
}

// inlineBecause is a fallback of reason.
func inlineBecause(format string, args ...any) *fallback {
	return &fallback{reason: fmt.Sprintf(format, args...)}
}

// olderVersion is the fallback of a run of another version than the
// materialized one.
func olderVersion(ep *driver.Endpoint, opts runOptions) *fallback {
	return inlineBecause("version %d is not the materialized version (%d)", opts.version, ep.CurrentVersion)
}

// noTable is the fallback of a run with no fresh stored table.
var noTable = &fallback{reason: "no stored table is fresh for the current version and settings"}

// storedRead is the decision whether the stored table answers a run,
// made from what is known before the run starts: the endpoint's record,
// the version asked and its compiled form, and the clock. The run path
// (readMaterializedSQL, runInsight) and admission (Service.Admit, which
// charges a run to the materialized budget only when the stored table
// answers it) both take it from storedReadOf, so that the two cannot
// disagree. What only the run can know (a read the database refuses, a
// value the table cannot answer) sends the run inline after it was
// charged as stored: admission counts on the decision, not on the
// outcome.
type storedRead struct {
	why   inlineWhy
	table string
	at    time.Time
	v     *verdict // a SQL endpoint's plan, when why is readsStored
}

// inlineWhy is why a run does not read the stored table; readsStored
// when it does.
type inlineWhy int

const (
	readsStored inlineWhy = iota
	notMaterialized
	notCurrentVersion
	noFreshTable
	cannotMaterialize
)

// storedReadOf decides whether the stored table of ep answers a run of
// opts.version (the current one when 0), compiled as c, at now: ep is
// materialized, the version is the current one, a table built from it is
// fresh (servingTable) and, for a SQL endpoint, its query can be
// materialized. It has no side effect.
func (s *Service) storedReadOf(ep *driver.Endpoint, c *compiled, opts runOptions, now time.Time) storedRead {
	version := opts.version
	if version == 0 {
		version = ep.CurrentVersion
	}
	switch {
	case !ep.IsMaterialized:
		return storedRead{why: notMaterialized}
	case version != ep.CurrentVersion:
		return storedRead{why: notCurrentVersion}
	}
	table, at, ok := servingTable(ep, c, now)
	if !ok {
		return storedRead{why: noFreshTable}
	}
	r := storedRead{table: table, at: at}
	if c.insight == nil {
		if r.v = s.verdict(c, ep.MaterializationBuckets, ep.MaterializationTailColumn); !r.v.ok {
			r.why = cannotMaterialize
		}
	}
	return r
}

// fallback is the fallback of a run that r sends inline (nil for one that
// reads the table or of an endpoint that is not materialized); for a run
// with no fresh table it wakes a hibernating materialization (noTable).
func (r storedRead) fallback(s *Service, ep *driver.Endpoint, opts runOptions, now time.Time) *fallback {
	switch r.why {
	case notCurrentVersion:
		return olderVersion(ep, opts)
	case noFreshTable:
		return s.noTable(ep, now)
	case cannotMaterialize:
		return inlineBecause("the query cannot be materialized: %s", r.v.reason)
	}
	return nil
}

// readMaterializedSQL answers a run of a materialized SQL endpoint from its
// stored table, with values bound and checked. It returns no result and no
// error when the run must go inline instead, with the reason: an older
// version, no fresh table for the current version and buckets, a value the
// table cannot answer exactly (materialize.ErrRunInline), or a read the
// database refused (the table being swapped by a refresh at that instant,
// or a defect, which is logged and counted). The read filters, orders and
// pages in SQL, as the inline run does: it fetches at most limit+1 rows,
// the one more telling whether there are more.
func (s *Service) readMaterializedSQL(ctx context.Context, ep *driver.Endpoint, c *compiled, values map[string]any, opts runOptions, now time.Time) (*RunResult, *fallback, error) {
	r := s.storedReadOf(ep, c, opts, now)
	if r.why != readsStored {
		return nil, r.fallback(s, ep, opts, now), nil
	}
	table, at, v := r.table, r.at, r.v
	trace := newRunTrace(opts.debug)
	if v.plan.Tail() {
		// The newer rows come from the source: those after the instant
		// the table was built at.
		values = maps.Clone(values)
		values[materialize.BuiltAtVariable] = at
	}
	st, err := v.scoped.ReadPage(table, values, int64(opts.limit)+1, int64(opts.offset))
	var ve *materialize.ValueError
	switch {
	case errors.As(err, &ve):
		return nil, nil, withCause(invalidf(CodeInvalidVariableValue, variableAttr(ve.Variable), "Invalid value for variable '%s': %s", ve.Variable, ve.Detail), err)
	case err != nil:
		return nil, s.readFailed(ep, err), nil
	}
	trace.rendered(st)
	res, fb, err := s.readStored(ctx, ep, st)
	if res == nil {
		return nil, fb, err
	}
	return sqlResult(ep, opts, &at, res, 0, &trace), nil, nil
}

// readStored executes a read of a stored table. A read the database
// refuses returns no result and no error but its fallback, so that the run
// goes inline: the table may be being swapped by a refresh at that
// instant. A timeout, a result over MaxResultBytes (inline would be as
// large), or a run whose context ended, is an error.
func (s *Service) readStored(ctx context.Context, ep *driver.Endpoint, st scope.Statement) (*driver.Result, *fallback, error) {
	res, err := s.execute(ctx, st)
	// A read whose rows were streamed out already cannot go inline.
	if err != nil && !errors.Is(err, ErrTimeout) && !errors.Is(err, driver.ErrResultTooLarge) && ctx.Err() == nil && !streamBegun(ctx) {
		return nil, s.readFailed(ep, err), nil
	}
	return res, nil, err
}

// readFailed records that the read of ep's stored table failed with err,
// for its materialization status, and returns the fallback that reports it
// with the run (logged and counted by the Observer).
func (s *Service) readFailed(ep *driver.Endpoint, err error) *fallback {
	s.readFailures.Store(ep.ID, readFailure{at: s.now(), table: tableOf(ep.MaterializationState), err: errorDetail(err)})
	var e *Error
	if errors.As(err, &e) && e.Err != nil {
		// The database's own words, for the log; never for the client.
		err = e.Err
	}
	return &fallback{reason: "the read of the stored table failed on the database; the run went inline", err: err}
}

// readFailure is the latest failed read of an endpoint's stored table:
// when, of which table (tableOf), and why, without engine internals.
type readFailure struct {
	at    time.Time
	table string
	err   string
}

// tableOf names the stored table a state serves: its key and build
// instant, which a refresh changes.
func tableOf(st driver.MaterializationState) string {
	if st.At == nil {
		return st.Built
	}
	return st.Built + "@" + st.At.Format(time.RFC3339Nano)
}

// checkMaterializedInsightVars checks the keys of a run of a materialized
// insight endpoint: only breakdown variables exist (date_from and date_to
// are refused, the data being computed for the saved range), and each is
// required unless the endpoint lists it as optional, because a materialized
// endpoint must not return all series by omission. The check is the same
// whether the run then reads the table or goes inline.
func checkMaterializedInsightVars(ep *driver.Endpoint, c *compiled, given map[string]any) error {
	props := c.insight.Variables(true)
	var unknown []string
	for k := range given {
		if !slices.Contains(props, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		return unknownVariables(unknown)
	}
	var missing []string
	for _, p := range props {
		if _, ok := given[p]; !ok && !slices.Contains(ep.OptionalBreakdowns, p) {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		return missingVariables(missing)
	}
	return nil
}

// readMaterializedInsight answers a run of a materialized insight endpoint
// from its stored table: exactly what the inline run would have answered
// when the table was built. Like readMaterializedSQL it returns no result
// and no error, but its fallback, when the run must go inline.
// r is storedReadOf's decision that the table answers.
func (s *Service) readMaterializedInsight(ctx context.Context, ep *driver.Endpoint, c *compiled, r storedRead, given map[string]any, opts runOptions) (*RunResult, *fallback, error) {
	table, at := r.table, r.at
	trace := newRunTrace(opts.debug)
	st, stmt, err := c.scope.InsightRead(c.insight, table, given, at)
	if err != nil {
		return nil, nil, insightRunError(err)
	}
	trace.rendered(st)
	res, fb, err := s.readStored(ctx, ep, st)
	if res == nil {
		return nil, fb, err
	}
	out, err := insightResult(ep, opts, &at, stmt, res, &trace)
	return out, nil, err
}
