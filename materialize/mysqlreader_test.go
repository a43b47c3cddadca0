package materialize

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/xwb1989/sqlparser"
)

// TestMySQLStatementsReadByAnotherParser reads the statements the printer
// writes for MySQL with github.com/xwb1989/sqlparser, a MySQL grammar of
// its own that shares no code with sql/tree nor with this package's
// printer: every pre-compute, read and page query of the MySQL golden
// cases must be SQL that grammar reads (backquoted names, LIMIT ? OFFSET
// ?, the engine's operators). It is why the module keeps that parser, in
// tests only.
func TestMySQLStatementsReadByAnotherParser(t *testing.T) {
	// Constructs the 2018 grammar lacks, though MySQL 8 runs them.
	lacks := map[string]string{"mysql_json_forms/precompute.sql": "CAST(... AS DOUBLE)"}
	dirs, err := filepath.Glob("testdata/*/options.txt")
	require.NoError(t, err)
	read := 0
	for _, o := range dirs {
		opts, err := os.ReadFile(o)
		require.NoError(t, err)
		if !strings.Contains(string(opts), "dialect: mysql") {
			continue
		}
		dir := filepath.Dir(o)
		for _, name := range []string{"precompute.sql", "read.sql", "page.sql"} {
			data, err := os.ReadFile(filepath.Join(dir, name))
			if os.IsNotExist(err) {
				continue
			}
			require.NoError(t, err)
			key := filepath.Base(dir) + "/" + name
			_, err = sqlparser.Parse(strings.TrimSpace(string(data)))
			if why, ok := lacks[key]; ok {
				require.Error(t, err, "%s now reads %s: take it off the list", key, why)
				continue
			}
			require.NoError(t, err, "%s", key)
			read++
		}
	}
	require.GreaterOrEqual(t, read, 8, "too few MySQL statements read")
}
