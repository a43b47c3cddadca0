package sqlexec

import (
	"context"
	"fmt"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/sql/engine"
)

var _ driver.Explainer = (*Executor)(nil)

// explainPrefix is the EXPLAIN of each engine that answers its plan in
// the form driver.Explainer documents; none of them runs the query.
func explainPrefix(e engine.Engine) string {
	switch e {
	case engine.SQLite:
		return "EXPLAIN QUERY PLAN "
	case engine.PostgreSQL:
		return "EXPLAIN (FORMAT JSON) "
	case engine.MySQL:
		return "EXPLAIN "
	}
	return ""
}

// Explain implements driver.Explainer: it returns the engine's plan of
// st, which must be a query as Query's are (checkQuery), without running
// it. The EXPLAIN is the executor's own, written before the checked text,
// so no statement but a query's plan runs.
func (e *Executor) Explain(ctx context.Context, st driver.Statement) (*driver.Result, error) {
	prefix := explainPrefix(e.engine)
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
