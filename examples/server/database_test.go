package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoadDemoOnlyIntoAnEmptyTable(t *testing.T) {
	for _, path := range []string{"", filepath.Join(t.TempDir(), "x.db")} {
		ctx := context.Background()
		db, err := openDB(path)
		require.NoError(t, err)

		n, loaded, err := loadDemo(ctx, db, 0)
		require.NoError(t, err)
		assert.Equal(t, 0, n)
		assert.True(t, loaded, "an empty table is created")

		n, loaded, err = loadDemo(ctx, db, 500)
		require.NoError(t, err)
		assert.Equal(t, 500, n)
		assert.True(t, loaded, "an empty table is filled")

		n, loaded, err = loadDemo(ctx, db, 800)
		require.NoError(t, err)
		assert.Equal(t, 500, n, "a filled table is left as it is")
		assert.False(t, loaded)

		var count int
		require.NoError(t, db.QueryRow("SELECT count(*) FROM events").Scan(&count))
		assert.Equal(t, 500, count)
		require.NoError(t, db.Close())
	}
}
