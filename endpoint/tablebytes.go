package endpoint

import (
	"context"
	"fmt"

	"github.com/endpointkit/endpointkit/sql/scope"
)

// LimitMaxMaterializedBytes is Config.MaxMaterializedBytes, in bytes, as
// an *Error's Limit names it.
const LimitMaxMaterializedBytes = "max_materialized_bytes"

// checkBytes measures next (engine.Engine.TableBytes), a table a refresh built, and refuses it when
// it takes more than Config.MaxMaterializedBytes. It returns the size,
// nil when the engine cannot be measured (the refresh then goes on: the
// row bound still holds) or when there is no bound.
func (s *Service) checkBytes(ctx context.Context, next string) (*int64, error) {
	max := s.cfg.MaxMaterializedBytes
	prepare, q := s.cfg.Executor.Engine().TableBytes(next)
	if max <= 0 || q == "" {
		return nil, nil
	}
	if prepare != "" {
		// The statistics the measure reads, refreshed for a table just
		// built (engine.Engine.TableBytes).
		if err := s.execAll(ctx, []scope.Statement{scope.Own(prepare)}, false); err != nil {
			return nil, fmt.Errorf("endpoint: measuring %s: %w", next, err)
		}
	}
	res, err := s.queryOwn(ctx, scope.Own(q))
	if err != nil {
		return nil, fmt.Errorf("endpoint: measuring %s: %w", next, err)
	}
	if len(res.Rows) != 1 || len(res.Rows[0]) != 1 {
		return nil, fmt.Errorf("endpoint: measuring %s: %d rows", next, len(res.Rows))
	}
	n, ok := asInt64(res.Rows[0][0])
	if !ok {
		return nil, fmt.Errorf("endpoint: measuring %s: %v (%T) is not a size", next, res.Rows[0][0], res.Rows[0][0])
	}
	if n > max {
		return &n, limited(NewError(ErrExecution, CodeMaterializationFailed, "",
			fmt.Sprintf("the stored table took %d bytes, more than max_materialized_bytes (%d)", n, max)), LimitMaxMaterializedBytes, max)
	}
	return &n, nil
}
