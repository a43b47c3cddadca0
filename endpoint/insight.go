package endpoint

import "context"

// compileInsight checks an insight query (KindTrends, KindRetention). The
// insight package that decodes, validates and compiles these queries is not
// wired in yet, so such endpoints are refused with a message naming the
// kind rather than stored unrunnable. This file is the seam for it: replace
// compileInsight (setting compiled.insight) and runInsight.
func (s *Service) compileInsight(ctx context.Context, project string, q Query) (*compiled, error) {
	return nil, invalidf(CodeUnsupportedQuery, "query", "Query kind '%s' is not supported yet: insight endpoints are not available in this build.", q.Kind)
}

// runInsight runs an insight endpoint; compileInsight never returns one yet.
func (s *Service) runInsight(ctx context.Context, ep *Endpoint, c *compiled, req RunRequest, opts runOptions) (*RunResult, error) {
	return nil, invalidf(CodeUnsupportedQuery, "query", "Query kind '%s' is not supported yet.", c.query.Kind)
}
