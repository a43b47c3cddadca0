package endpoint_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/stretchr/testify/require"
)

// BenchmarkSave2K is Create of the 2 KB query sql/access's BenchmarkSave2K
// and sql/tree's BenchmarkParse2K read, on SQLite, without the engine's
// check (an executor that answers at once): the library's whole share of
// a save (read, check, confine, the paged wrapper, storing). Its
// placeholders are written as literals, so that the benchmark needs no
// variables and runs unchanged on older versions for a before and after:
//
//	go test ./endpoint -run '^$' -bench 'BenchmarkSave2K$' -benchmem -benchtime 2000x -count 3
func BenchmarkSave2K(b *testing.B) {
	data, err := os.ReadFile("../sql/sqltoken/testdata/bench2k.sql")
	require.NoError(b, err)
	src := strings.NewReplacer(
		"{variables.since}", "'2025-01-01'",
		"{variables.plans}", "('pro', 'team')",
		"{variables.min_amount}", "10",
		"{variables.browser}", "'Chrome'",
		"{variables.ignored}", "ignored",
		"{ variables.until }", "'2026-01-01'",
	).Replace(string(data))
	svc := checkServiceOn(b, checkEngines[0], func(x driver.Executor) driver.Executor { return answersAtOnce{x} })
	ctx := context.Background()
	q := &endpoint.Query{Kind: endpoint.KindSQL, SQL: src}
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "e" + strconv.Itoa(i), Query: q})
		require.NoError(b, err)
	}
}
