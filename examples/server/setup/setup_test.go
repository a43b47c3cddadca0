package setup_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/examples/server/setup"
	"github.com/endpointkit/endpointkit/internal/stmt"
)

// TestExecutorAsTheServerRunsIt: the server's runs read on a pool that
// refuses writes, under the SQLite length limit
// (a query building a gigabyte string fails at once, naming the limit)
// and their time limit (a query past it is interrupted).
func TestExecutorAsTheServerRunsIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.db")
	data, err := setup.OpenFile(path)
	require.NoError(t, err)
	t.Cleanup(func() { data.Close() })
	_, err = data.Exec("CREATE TABLE events (project_id TEXT, event TEXT)")
	require.NoError(t, err)
	runs, err := setup.OpenRuns(path)
	require.NoError(t, err)
	t.Cleanup(func() { runs.Close() })
	x := setup.Executor(data, runs, 0)
	t.Cleanup(func() { x.Close() })
	ctx := context.Background()

	res, err := x.Query(ctx, stmt.New("SELECT count(*) AS n FROM events", nil), driver.Bounds{Timeout: 10 * time.Second})
	require.NoError(t, err)
	assert.Equal(t, int64(0), res.Rows[0][0])
	_, err = runs.Exec("INSERT INTO events VALUES ('1', 'x')")
	assert.Error(t, err, "the run pool refuses writes")

	_, err = x.Query(ctx, stmt.New("SELECT length(printf('%.*c', 999999999, 'x')) AS n", nil), driver.Bounds{Timeout: 10 * time.Second})
	assert.ErrorIs(t, err, sqlexec.ErrSQLiteLength)

	_, err = x.Query(ctx, stmt.New("CREATE TABLE x (a)", nil), driver.Bounds{})
	assert.Error(t, err, "a run does not write")

	began := time.Now()
	_, err = x.Query(ctx, stmt.New("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r WHERE n = 1 OR n < 0", nil), driver.Bounds{Timeout: 200 * time.Millisecond})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(began), 5*time.Second)
}
