package httpapi_test

import (
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
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		return strings.Fields(string(out))
	}
	const lib = "github.com/parquet-go/parquet-go"
	for _, d := range deps(".") {
		if strings.HasPrefix(d, lib) {
			t.Errorf("endpoint/httpapi imports %s", d)
		}
	}
	found := false
	for _, d := range deps("./parquet") {
		found = found || d == lib
	}
	if !found {
		t.Errorf("endpoint/httpapi/parquet does not import %s: the check above proves nothing", lib)
	}
}
