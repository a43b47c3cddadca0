package sqlexec

import (
	"context"
	"fmt"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

var _ driver.Explainer = (*Executor)(nil)

// Explain implements driver.Explainer: it returns the engine's plan of
// st, which must be a query as Query's are (checkQuery), without running
// it. The EXPLAIN is the executor's own, written before the checked text,
// so no statement but a query's plan runs.
func (e *Executor) Explain(ctx context.Context, st driver.Statement) (*driver.Result, error) {
	prefix, _ := e.engine.Explain()
	if prefix == "" {
		return nil, fmt.Errorf("sqlexec: no query plans on %s", e.engine.Name())
	}
	if err := checkQuery(e.lex, st.SQL()); err != nil {
		return nil, err
	}
	rows, err := e.runs.QueryContext(ctx, prefix+st.SQL(), e.driverArgs(st.Args())...)
	if err != nil {
		return nil, fmt.Errorf("sqlexec: explain: %w", err)
	}
	return e.read(ctx, rows, driver.Bounds{})
}
