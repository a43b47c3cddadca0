//go:build chdb

package chdb

import (
	"context"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/executortest"
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
	executortest.Run(t, func(t *testing.T) endpoint.Executor { return executor(t) })
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
		res, err := x.Query(context.Background(), "SELECT {p1:String} AS v, length({p1:String}) AS n", []any{s})
		require.NoError(t, err, "%q", s)
		require.Equal(t, s, res.Rows[0][0], "%q", s)
		require.EqualValues(t, len(s), res.Rows[0][1])
	})
}
