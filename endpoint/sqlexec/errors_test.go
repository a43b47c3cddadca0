package sqlexec_test

import (
	"context"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/internal/stmt"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestArgOutOfRangeOnPostgres: a value pgx cannot encode as the type
// PostgreSQL gave its marker (an int64 past int4, compared with an integer
// expression) is a *driver.ArgError naming the argument and the type, which
// the Service answers 400 naming the variable; it was a plain error (502).
func TestArgOutOfRangeOnPostgres(t *testing.T) {
	x := sqlexec.New(testdb.Postgres(t), engine.PostgreSQL)
	t.Cleanup(func() { x.Close() })
	ctx := context.Background()
	for _, v := range []any{int64(3000000000), float64(1e300)} {
		_, err := x.Query(ctx, stmt.New("SELECT length('abc') < $2 AND $1 = 'x' AS b", []any{"x", v}), driver.Bounds{})
		var ae *driver.ArgError
		require.ErrorAs(t, err, &ae, "%v", v)
		assert.Equal(t, 1, ae.Index, "%v: the argument's index", v)
		assert.Equal(t, "int4", ae.Type, "%v: the type", v)
	}
	res, err := x.Query(ctx, stmt.New("SELECT length('abc') < $1 AS b", []any{int64(5)}), driver.Bounds{})
	require.NoError(t, err, "in range")
	assert.Equal(t, [][]any{{true}}, res.Rows, "in range")
}
