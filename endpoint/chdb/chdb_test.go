//go:build chdb

package chdb

import (
	"context"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/executortest"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/internal/stmt"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/require"
)

var (
	shared     *Executor
	sharedErr  error
	sharedOnce sync.Once
)

// executor returns the process's one chDB (in memory), kept open: chDB runs
// one engine per process and should not be restarted.
func executor(t testing.TB) *Executor {
	t.Helper()
	sharedOnce.Do(func() { shared, sharedErr = Open("") })
	require.NoError(t, sharedErr)
	return shared
}

func TestConformance(t *testing.T) {
	executortest.Run(t, func(t *testing.T) driver.Executor { return executor(t) })
}

// FuzzParamRoundTrip: every string bound as a parameter reads back as
// itself, whatever bytes it holds.
func FuzzParamRoundTrip(f *testing.F) {
	for _, s := range []string{"", "plain", `a\b`, "it's", "tab\tnl\nr\r", "nul\x00byte", `\'`, "{p1:String}", "é ’ 🙂", "\\N", "\b\f\v\a"} {
		f.Add(s)
	}
	x := executor(f)
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			t.Skip("the executor binds text")
		}
		res, err := x.Query(context.Background(), stmt.New("SELECT {p1:String} AS v, length({p1:String}) AS n", []any{s}), driver.Bounds{})
		require.NoError(t, err, "%q", s)
		require.Equal(t, s, res.Rows[0][0])
		got, want := res.Rows[0][1], int64(len(s))
		require.Equal(t, want, got, "%q: length", s)
	})
}

// TestReadStatistics: a query reports what the engine read, as a run's
// statistics show it.
func TestReadStatistics(t *testing.T) {
	res, err := executor(t).Query(context.Background(), stmt.New("SELECT count() AS n FROM numbers(12345)", nil), driver.Bounds{})
	require.NoError(t, err)
	require.NotNil(t, res.RowsRead, "res.RowsRead is nil")
	require.NotNil(t, res.BytesRead, "res.BytesRead is nil")
	got, want := *res.RowsRead, int64(12345)
	require.Equal(t, want, got, "*res.RowsRead")
	if got, want := *res.BytesRead, int64(12345*8); got != want {
		t.Fatalf("*res.BytesRead = %d, want %d", got, want)
	}
}

// TestRunStatistics: a run on ClickHouse answers rows_read and bytes_read
// as the engine counted them, where SQLite answers null; a cached answer
// keeps them.
func TestRunStatistics(t *testing.T) {
	x := executor(t)
	ctx := context.Background()
	svc, err := endpoint.New(endpoint.Config{Endpoints: memstore.New(), Variables: variable.NewMemoryStore(), Executor: x,
		ResultCache: memstore.NewResultCache(1 << 20)})
	require.NoError(t, err)
	_, err = svc.Create(ctx, "1", endpoint.CreateRequest{Name: "numbers", Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT count() AS n FROM numbers(5000)"}})
	require.NoError(t, err)
	for _, cached := range []bool{false, true} {
		res, err := svc.Run(ctx, "1", "numbers", endpoint.RunRequest{})
		require.NoError(t, err)
		require.Equal(t, cached, res.IsCached)
		require.NotNil(t, res.Statistics.RowsRead, "res.Statistics.RowsRead is nil")
		got, want := *res.Statistics.RowsRead, int64(5000)
		require.Equal(t, want, got, "*res.Statistics.RowsRead")
		if got, want := *res.Statistics.BytesRead, int64(5000*8); got != want {
			t.Fatalf("*res.Statistics.BytesRead = %d, want %d", got, want)
		}
	}
}
