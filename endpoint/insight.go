package endpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/insight"
)

// compileInsight checks an insight query (KindTrends, KindRetention,
// KindLifecycle): it is
// decoded once, here, and the decoded form is cached with the version, so
// that a run never decodes again. The query is also compiled once against
// the Service's clock, so that a saved date range that can never run (from
// after to, too many intervals) is refused now rather than on every run.
// The endpoint keeps the JSON as it was sent (compacted), not a
// re-encoding, so that a client reads back exactly what it saved.
func (s *Service) compileInsight(ctx context.Context, project string, q driver.Query) (*compiled, error) {
	if len(bytes.TrimSpace(q.Insight)) == 0 {
		return nil, invalidf(CodeInvalidInput, "query", "Query of kind '%s' holds no insight JSON.", q.Kind)
	}
	if err := s.checkLength(len(q.Insight)); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, q.Insight); err != nil {
		return nil, invalidf(CodeInvalidInput, "query", "Query is not valid JSON.")
	}
	iq, err := insight.Decode(buf.Bytes())
	if err != nil {
		return nil, s.insightQueryError(err)
	}
	if err := s.checkBreakdownLimit(iq); err != nil {
		return nil, err
	}
	if string(iq.Kind) != q.Kind {
		return nil, invalidf(CodeInvalidInput, "query.kind", "Query kind '%s' does not match its insight JSON, which is a %s.", q.Kind, iq.Kind)
	}
	sc, err := s.scopeOf(ctx, project)
	if err != nil {
		return nil, err
	}
	if iq.Tenant, err = sc.Tenant(); err != nil {
		return nil, accessError(err)
	}
	if _, err := insight.Compile(iq, s.cfg.Executor.Engine(), s.now()); err != nil {
		return nil, s.insightQueryError(err)
	}
	return &compiled{query: driver.Query{Kind: q.Kind, Insight: buf.Bytes()}, insight: iq, scope: sc}, nil
}

// breakdownLimitField is the JSON path of a trends query's breakdown
// limit, as insight.Error names it.
const breakdownLimitField = "breakdownFilter.breakdown_limit"

// checkBreakdownLimit gives a decoded trends query that names no
// breakdown_limit the Service's default, and refuses one above
// Config.MaxBreakdownLimit with a 400 naming the field and the limit. The
// decoded form is what runs and what a materialized read limits with, so
// a changed default applies to both alike.
func (s *Service) checkBreakdownLimit(iq *insight.Query) error {
	if iq.Kind != insight.Trends {
		return nil
	}
	if iq.BreakdownLimit == 0 {
		iq.BreakdownLimit = s.cfg.DefaultBreakdownLimit
	}
	if iq.BreakdownLimit > s.cfg.MaxBreakdownLimit {
		return s.breakdownLimitError(fmt.Sprintf("%d is more than the maximum", iq.BreakdownLimit), nil)
	}
	return nil
}

// breakdownLimitError is the 400 of a breakdown_limit out of range: its
// detail names the field and the most this Service allows, and it carries
// LimitMaxBreakdownLimit.
func (s *Service) breakdownLimitError(reason string, cause error) *Error {
	e := limited(invalidf(CodeInvalidInput, "query."+breakdownLimitField,
		"Invalid insight query: %s: %s; breakdown_limit may be 1 to %d (max_breakdown_limit).", breakdownLimitField, reason, s.cfg.MaxBreakdownLimit),
		LimitMaxBreakdownLimit, int64(s.cfg.MaxBreakdownLimit))
	if cause != nil {
		return withCause(e, cause)
	}
	return e
}

// insightQueryError is the package's insightQueryError, except that a
// refused breakdown_limit also names the maximum, as one above it does.
func (s *Service) insightQueryError(err error) *Error {
	var ie *insight.Error
	if errors.As(err, &ie) && ie.Field == breakdownLimitField {
		return s.breakdownLimitError(ie.Reason, err)
	}
	return insightQueryError(err)
}

// insightQueryError turns a refusal of a saved insight query into a 400
// whose attr points at the offending field ("query.series[0].math").
func insightQueryError(err error) *Error {
	var ie *insight.Error
	if errors.As(err, &ie) {
		attr := "query"
		if ie.Field != "" {
			attr += "." + ie.Field
		}
		reason := ie.Reason
		if ie.Field != "" {
			reason = ie.Field + ": " + reason
		}
		return withCause(invalidf(CodeInvalidInput, attr, "Invalid insight query: %s", reason), err)
	}
	return withCause(invalidf(CodeInvalidInput, "query", "Invalid insight query: %s", err), err)
}

// insightRunError turns a refusal of a run's values into a 400. An
// *insight.Error at run time comes from the date range the values made
// (date_from not before date_to, too many intervals), so it concerns the
// variables too.
func insightRunError(err error) *Error {
	var (
		uv *insight.UnknownVariablesError
		ve *insight.ValueError
		ie *insight.Error
	)
	switch {
	case errors.As(err, &uv):
		attr := "variables"
		if len(uv.Keys) > 0 {
			attr = variableAttr(uv.Keys[0])
		}
		return withCause(invalidf(CodeUnknownVariable, attr, "%s", uv.Error()), err)
	case errors.As(err, &ve):
		e := invalidf(CodeInvalidVariableValue, variableAttr(ve.Variable), "%s", ve.Error())
		e.Variable = ve.Variable
		return withCause(e, err)
	case errors.As(err, &ie):
		return withCause(invalidf(CodeInvalidVariableValue, "variables", "Invalid date range for this run: %s", ie.Reason), err)
	}
	return insightQueryError(err)
}
