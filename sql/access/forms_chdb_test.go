//go:build chdb

package access

import (
	"context"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/chdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
)

func init() {
	formEngines["clickhouse"] = func(t *testing.T) *formEngine {
		x, err := chdb.Open("")
		require.NoError(t, err)
		t.Cleanup(func() { x.Close() })
		ctx := context.Background()
		for _, s := range []string{
			`CREATE TABLE events (project_id String, event String, n Int64, ts DateTime, tags Array(Int64), props Map(String, Int64)) ENGINE = Memory`,
			`INSERT INTO events VALUES ('1', 'a', 7, '2025-05-01 10:07:00', [7, 1], {'k': 1}), ('1', 'b', 13, '2025-05-01 10:13:00', [13], {'k': 2}),
			('2', 'x', 1, '2025-05-01 00:00:00', [1], {'k': 3}), ('2', 'y', 2, '2025-05-01 00:00:00', [2], {'k': 4}), ('2', 'z', 3, '2025-05-01 00:00:00', [3], {'k': 5})`,
			// A table no rules list, for TestRecursiveCTEReadsTheTableOnClickHouse.
			`CREATE TABLE secrets (v String) ENGINE = Memory`,
			`INSERT INTO secrets VALUES ('SECRET')`,
		} {
			require.NoError(t, x.Load(ctx, s, nil), "%s", s)
		}
		return &formEngine{engine.ClickHouse, func(q string, args []any) (int, error) {
			res, err := x.Read(ctx, q, args)
			if err != nil {
				return 0, err
			}
			return len(res.Rows), nil
		}}
	}
}
