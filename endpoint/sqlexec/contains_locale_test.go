package sqlexec_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/sql/engine"
)

// TestContainsIgnoresTheDatabaseLocale: PostgreSQL's case-insensitive
// test (engine.Engine.Contains, insight's icontains) matches the same
// texts in a database of LC_CTYPE C as in one of the server's default
// (C.UTF-8 in CI), and as MySQL and ClickHouse do: every letter folded,
// 'ÜNÏ' in 'ünïcode'. With lower() under the database's locale, the C
// database folded ASCII letters only.
func TestContainsIgnoresTheDatabaseLocale(t *testing.T) {
	base := testdb.Require(t, testdb.PostgresEnv)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin, err := sql.Open("pgx", base)
	require.NoError(t, err)
	defer admin.Close()
	name := fmt.Sprintf("endpointkit_test_c_%d", time.Now().UnixNano())
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name+" TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.Exec("DROP DATABASE IF EXISTS " + name) })
	u, err := url.Parse(base)
	require.NoError(t, err)
	u.Path = "/" + name
	cdb, err := sql.Open("pgx", u.String())
	require.NoError(t, err)
	t.Cleanup(func() { cdb.Close() }) // before the drop
	for label, db := range map[string]*sql.DB{"LC_CTYPE C": cdb, "server default": testdb.Postgres(t)} {
		matches := func(needle string) []string {
			t.Helper()
			b := placeholder.NewBuilder(engine.PostgreSQL)
			b.WriteString("SELECT s FROM (VALUES ('Ünïcode'), ('ünïcode'), ('UNICODE'), ('Chrome'), ('chrome')) AS v(s) WHERE ")
			engine.PostgreSQL.Contains(b, func() { b.WriteString("s") }, needle)
			b.WriteString(" ORDER BY s COLLATE \"C\"")
			rows, err := db.QueryContext(ctx, b.SQL(), b.Args()...)
			require.NoError(t, err, "%s", label)
			defer rows.Close()
			var out []string
			for rows.Next() {
				var s string
				require.NoError(t, rows.Scan(&s))
				out = append(out, s)
			}
			return out
		}
		for needle, want := range map[string]string{
			"ÜNÏ":  "[Ünïcode ünïcode]",
			"ünï":  "[Ünïcode ünïcode]",
			"CHR":  "[Chrome chrome]",
			"rome": "[Chrome chrome]",
			"unic": "[UNICODE]",
		} {
			assert.Equal(t, want, fmt.Sprint(matches(needle)), "%s: icontains %q matches", label, needle)
		}
	}
}
