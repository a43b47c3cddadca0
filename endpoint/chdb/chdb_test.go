//go:build chdb

package chdb

import (
	"context"
	"reflect"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/executortest"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/internal/stmt"
	"github.com/endpointkit/endpointkit/variable"
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
	if sharedErr != nil {
		t.Fatalf("unexpected error: %v", sharedErr)
	}
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
		if err != nil {
			t.Fatalf("%q: unexpected error: %v", s, err)
		}
		if got, want := res.Rows[0][0], s; !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: res.Rows[0][0] = %q, want %q", s, got, want)
		}
		if got, want := res.Rows[0][1], int64(len(s)); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: length = %#v, want %#v", s, got, want)
		}
	})
}

// TestReadStatistics: a query reports what the engine read, as a run's
// statistics show it.
func TestReadStatistics(t *testing.T) {
	res, err := executor(t).Query(context.Background(), stmt.New("SELECT count() AS n FROM numbers(12345)", nil), driver.Bounds{})
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if res.RowsRead == nil {
		t.Fatalf("res.RowsRead is nil")
	}
	if res.BytesRead == nil {
		t.Fatalf("res.BytesRead is nil")
	}
	if got, want := *res.RowsRead, int64(12345); got != want {
		t.Fatalf("*res.RowsRead = %d, want %d", got, want)
	}
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
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	_, err = svc.Create(ctx, "1", endpoint.CreateRequest{Name: "numbers", Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT count() AS n FROM numbers(5000)"}})
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	for _, cached := range []bool{false, true} {
		res, err := svc.Run(ctx, "1", "numbers", endpoint.RunRequest{})
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if got, want := res.IsCached, cached; got != want {
			t.Fatalf("res.IsCached = %v, want %v", got, want)
		}
		if res.Statistics.RowsRead == nil {
			t.Fatalf("res.Statistics.RowsRead is nil")
		}
		if got, want := *res.Statistics.RowsRead, int64(5000); got != want {
			t.Fatalf("*res.Statistics.RowsRead = %d, want %d", got, want)
		}
		if got, want := *res.Statistics.BytesRead, int64(5000*8); got != want {
			t.Fatalf("*res.Statistics.BytesRead = %d, want %d", got, want)
		}
	}
}
