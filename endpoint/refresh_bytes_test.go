package endpoint_test

import (
	"context"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/require"
)

// TestRefreshByteLimit: issue 25's materialization, one wide value per
// group (scaled down), is measured once built: the status reports its
// bytes; under a MaxMaterializedBytes below them the refresh fails naming
// the limit, drops what it built, and the last good table keeps serving;
// at the bound it completes. On SQLite, PostgreSQL and MariaDB (when their
// variables are set).
func TestRefreshByteLimit(t *testing.T) {
	// pad is a wide value per group; least the least size the table may
	// take (PostgreSQL compresses a repeated value).
	sizes := map[string]struct {
		pad   string
		least int64
	}{
		"sqlite":   {"printf('%.*c', 200000, page)", 4 * 200000},
		"postgres": {"repeat(md5(page), 6000)", 8192},
		"mysql":    {"REPEAT(MD5(page), 6000)", 4 * 192000},
	}
	for _, e := range hitsEngines() {
		size := sizes[e.name]
		t.Run(e.name, func(t *testing.T) {
			x := hitsExecutor(t, e, "('a', 1), ('b', 2), ('c', 3), ('d', 4)")
			ctx := context.Background()
			eps, vars := memstore.New(), variable.NewMemoryStore()
			svc := func(max int64) *endpoint.Service {
				s, err := endpoint.New(endpoint.Config{Endpoints: eps, Variables: vars, Executor: x, MaxMaterializedBytes: max})
				require.NoError(t, err)
				return s
			}
			def := svc(0)
			if _, err := def.Create(ctx, "1", endpoint.CreateRequest{Name: "padded", IsMaterialized: true, Query: &endpoint.Query{
				Kind: endpoint.KindSQL, SQL: "SELECT page, " + size.pad + " AS pad, count(*) AS n FROM hits GROUP BY page, pad",
			}}); err != nil {
				t.Fatal(err)
			}
			require.NoError(t, def.Materialize(ctx, "1", "padded"))
			rep, err := def.MaterializationStatus(ctx, "1", "padded")
			if err != nil || rep.Bytes == nil || *rep.Bytes < size.least {
				t.Fatalf("status after the refresh: %+v, %v; want the table's bytes, at least %d", rep, err, size.least)
			}
			size := *rep.Bytes
			t.Logf("the table takes %d bytes", size)

			err = svc(size/2).Materialize(ctx, "1", "padded")
			wantLimit(t, err, endpoint.LimitMaxMaterializedBytes, size/2)
			require.ErrorContains(t, err, "max_materialized_bytes", "over the limit")
			rep, err = def.MaterializationStatus(ctx, "1", "padded")
			if err != nil || rep.LastError == nil || !strings.Contains(*rep.LastError, "max_materialized_bytes") || rep.Version != 1 {
				t.Fatalf("status after the refused refresh: %+v, %v", rep, err)
			}
			res, err := def.Run(ctx, "1", "padded", endpoint.RunRequest{})
			if err != nil || !res.EndpointMaterialized || len(res.Results.([][]any)) != 4 {
				t.Fatalf("the last good table: %+v, %v", res, err)
			}
			require.NoError(t, svc(2*size).Materialize(ctx, "1", "padded"), "within the limit")
		})
	}
}
