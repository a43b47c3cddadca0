package sqltoken

import (
	"database/sql"
	"os"
	"testing"

	_ "github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"

	"github.com/endpointkit/endpointkit/sql/engine"
)

// probes are queries whose column count depends on where an engine ends a
// string literal, a quoted name or a comment: each comma at the top level
// is one more column, unless it is inside a literal or comment.
var probes = []string{
	"SELECT 'it''s' AS a, 'x' AS b",
	"SELECT 1 AS a -- c\r, 2 AS b",
	"SELECT 1 AS a -- c\r\n, 2 AS b",
	"SELECT 1 AS a --x\n, 2 AS b",
	`SELECT 'x\' AS a, 'y' AS b`,
	`SELECT 'x\\' AS a, 'y' AS b`,
	`SELECT 'x\'' AS a, 'y' AS b`,
	`SELECT E'x\'' AS a, 'y' AS b`,
	`SELECT "x\" AS a, 'y' AS b`,
	"SELECT 1 AS `a\\`, 2 AS b",
	"SELECT 1 AS [a, b], 2 AS c",
	"SELECT $$a, b$$ AS a, 2 AS b",
	"SELECT $q$a, $$ b$q$ AS a, 2 AS b",
	"SELECT /* a /* b */ 1 AS a, 2 AS b */ 3 AS c, 4 AS d",
	"SELECT /* a */ 1 AS a, /* b */ 2 AS b",
	"SELECT 1 AS a # c, d\n, 2 AS b",
	"SELECT 1 AS naïve, 2 AS b",
	"SELECT '{variables.x}, y' AS a, 2 AS b",
}

// columns returns how many columns a probe selects as lx reads it: the
// commas outside parentheses and brackets, plus one; ok is false when a
// literal or comment is left open.
func columns(lx engine.Lexical, q string) (n int, ok bool) {
	n, depth := 1, 0
	for _, t := range Tokens(lx, q) {
		if t.Is(Unclosed) {
			return 0, false
		}
		if t.Kind != Punct {
			continue
		}
		switch q[t.Start] {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case ',':
			if depth == 0 {
				n++
			}
		}
	}
	return n, true
}

// TestProbesOnServers runs the probes on each engine that is up (SQLite
// always; PostgreSQL and MySQL or MariaDB from ENDPOINTKIT_TEST_POSTGRES
// and ENDPOINTKIT_TEST_MYSQL; ClickHouse is probed in endpoint/chdb): where
// the engine answers, it answers as many columns as the tokenizer reads
// with its Lexical, and where the tokenizer reads a literal or comment left
// open, the engine refuses the query. A probe the engine refuses for
// another reason (an unknown name, an operator it lacks) tells nothing.
func TestProbesOnServers(t *testing.T) {
	servers := []struct {
		e           engine.Engine
		driver, env string
	}{
		{engine.SQLite, "sqlite", ""},
		{engine.PostgreSQL, "pgx", "ENDPOINTKIT_TEST_POSTGRES"},
		{engine.MySQL, "mysql", "ENDPOINTKIT_TEST_MYSQL"},
	}
	for _, s := range servers {
		t.Run(s.e.Name(), func(t *testing.T) {
			dsn := ":memory:"
			if s.env != "" {
				if dsn = os.Getenv(s.env); dsn == "" {
					t.Skipf("%s is not set", s.env)
				}
			}
			db, err := sql.Open(s.driver, dsn)
			require.NoError(t, err)
			defer db.Close()
			require.NoError(t, db.Ping())
			answered := 0
			for _, q := range probes {
				want, ok := columns(s.e.Lexical(), q)
				rows, err := db.Query(q)
				if err != nil {
					continue
				}
				cols, cerr := rows.Columns()
				rows.Close()
				require.NoError(t, cerr)
				answered++
				if !ok {
					t.Errorf("%q: the tokenizer reads a literal or comment left open, %s answers %q", q, s.e.Name(), cols)
				} else if len(cols) != want {
					t.Errorf("%q: the tokenizer reads %d columns, %s answers %q", q, want, s.e.Name(), cols)
				}
			}
			assert.GreaterOrEqual(t, answered, 8, "only %d probes answered on %s", answered, s.e.Name())
		})
	}
}
