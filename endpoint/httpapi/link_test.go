package httpapi_test

import (
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"os/exec"
	"strings"
	"testing"
)

// TestParquetNotLinked: package httpapi does not import parquet-go, so
// that a host that does not register the Parquet format does not link it;
// its package endpoint/httpapi/parquet does.
func TestParquetNotLinked(t *testing.T) {
	deps := func(pkg string) []string {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		require.NoError(t, err, "go list -deps %s", pkg)
		return strings.Fields(string(out))
	}
	const lib = "github.com/parquet-go/parquet-go"
	for _, d := range deps(".") {
		assert.False(t, strings.HasPrefix(d, lib), "endpoint/httpapi imports %s", d)
	}
	found := false
	for _, d := range deps("./parquet") {
		found = found || d == lib
	}
	assert.True(t, found, "endpoint/httpapi/parquet does not import %s: the check above proves nothing", lib)
}
