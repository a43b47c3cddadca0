package access

import (
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// long63 is a table name of 63 bytes, the longest PostgreSQL keeps.
var long63 = "events_" + strings.Repeat("x", 56)

// TestAnyTableRefusesANameThatPostgresCutsToAScopedTable: PostgreSQL cuts
// a name longer than 63 bytes to its first 63, so that under AnyTable a
// scoped table of 63 bytes, named with one more character, was a table
// the rules do not list to Check and was read without its project's
// scope.
func TestAnyTableRefusesANameThatPostgresCutsToAScopedTable(t *testing.T) {
	require.Len(t, long63, 63)
	rules := &Rules{AnyTable: true, Tables: []Table{{Name: long63, TenantColumn: "project_id"}}}
	for _, q := range []string{
		`SELECT count(*) FROM ` + long63 + `y`,
		`SELECT count(*) FROM ` + strings.ToUpper(long63) + `_and_more`,
		`SELECT count(*) FROM public."` + long63 + `é"`,
	} {
		err := Check(q, rules)
		var e *Error
		if assert.ErrorAs(t, err, &e, "Check(%q)", q) {
			assert.Equal(t, ReasonAmbiguous, e.Reason, "Check(%q) = %v", q, err)
		}
	}
	for _, q := range []string{
		`SELECT count(*) FROM ` + long63,
		`SELECT count(*) FROM ` + strings.Repeat("y", 70),
	} {
		assert.NoError(t, Check(q, rules), "Check(%q)", q)
	}
	assert.Equal(t, strings.Repeat("a", 62), pgTruncated(strings.Repeat("a", 62)+"é"), "a character is not cut in two")
}

// TestPostgresCutsLongNames shows the reading the check follows, on
// PostgreSQL: one more character names the same table.
func TestPostgresCutsLongNames(t *testing.T) {
	db := testdb.Postgres(t)
	sqlSetup(t, db, `CREATE TABLE `+long63+` (project_id TEXT)`, `INSERT INTO `+long63+` VALUES ('1'), ('2')`)
	n, err := sqlCount(db)(`SELECT * FROM `+long63+`y`, nil)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
}
