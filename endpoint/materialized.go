package endpoint

import "context"

// checkMaterialization decides whether next may be saved with its
// IsMaterialized flag; c is the compiled form of next's query. It runs
// after every other check of a create or update and before the write, so a
// refusal changes nothing. Materialization is not wired in yet, so asking
// for it is refused; this file is the seam for package materialize.
func (s *Service) checkMaterialization(ctx context.Context, next *Endpoint, c *compiled) error {
	if !next.IsMaterialized {
		return nil
	}
	return invalidf(CodeCannotMaterialize, "is_materialized", "Cannot materialize endpoint. Reason: materialization is not available")
}
