package sqlexec_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/internal/stmt"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"
)

func openDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", ":memory:")
	require.NoError(t, err)
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	_, err = db.Exec(`CREATE TABLE t (id INTEGER, name TEXT, score REAL, data BLOB, note TEXT);
		INSERT INTO t VALUES (1, 'ann', 1.5, x'6869', NULL), (2, 'bob', 2, NULL, NULL), (3, 'cy', NULL, x'', NULL)`)
	require.NoError(t, err)
	return db
}

func TestQuery(t *testing.T) {
	x := sqlexec.New(openDB(t), engine.SQLite)
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		query   string
		args    []any
		columns []string
		types   []string
		rows    [][]any
	}{
		{"declared types, []byte as string, NULL",
			"SELECT id, name, score, data, note FROM t ORDER BY id", nil,
			[]string{"id", "name", "score", "data", "note"},
			[]string{"INTEGER", "TEXT", "REAL", "BLOB", "TEXT"},
			[][]any{{int64(1), "ann", 1.5, "hi", nil}, {int64(2), "bob", 2.0, nil, nil}, {int64(3), "cy", nil, "", nil}}},
		{"expressions typed by their values",
			"SELECT count(*) AS n, sum(score) AS s, max(name) AS m, NULL AS z FROM t WHERE id >= ?", []any{int64(2)},
			[]string{"n", "s", "m", "z"},
			[]string{"INTEGER", "REAL", "TEXT", ""},
			[][]any{{int64(2), 2.0, "cy", nil}}},
		{"bound text argument",
			"SELECT id FROM t WHERE name = ?", []any{"bob' OR 1=1 --"},
			[]string{"id"}, []string{"INTEGER"}, [][]any{}},
		{"no rows is an empty slice",
			"SELECT id FROM t WHERE id > ?", []any{int64(99)},
			[]string{"id"}, []string{"INTEGER"}, [][]any{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := x.Query(ctx, stmt.New(tc.query, tc.args), driver.Bounds{})
			require.NoError(t, err)
			if !reflect.DeepEqual(res.Columns, tc.columns) || !reflect.DeepEqual(res.Types, tc.types) || !reflect.DeepEqual(res.Rows, tc.rows) {
				t.Fatalf("got %q %q %#v, want %q %q %#v", res.Columns, res.Types, res.Rows, tc.columns, tc.types, tc.rows)
			}
		})
	}
}

func TestQueryErrors(t *testing.T) {
	x := sqlexec.New(openDB(t), engine.SQLite)
	_, err := x.Query(context.Background(), stmt.New("SELECT * FROM missing", nil), driver.Bounds{})
	require.Error(t, err, "no error for a missing table")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := x.Query(ctx, stmt.New("SELECT 1", nil), driver.Bounds{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled context: %v, want context.Canceled", err)
	}
	require.ErrorIs(t, x.Exec(ctx, []driver.Statement{stmt.New("DELETE FROM t", nil)}, driver.Write{Tx: false}), context.Canceled, "cancelled Exec")
}

func TestExec(t *testing.T) {
	db := openDB(t)
	x := sqlexec.New(db, engine.SQLite)
	if x.Engine() != engine.SQLite {
		t.Fatalf("Dialect = %v", x.Engine())
	}
	ctx := context.Background()
	require.NoError(t, x.Exec(ctx, []driver.Statement{stmt.New("INSERT INTO t (id, name) VALUES (?, ?)", []any{int64(4), "dee"})}, driver.Write{Tx: false}))
	res, err := x.Query(ctx, stmt.New("SELECT name FROM t WHERE id = ?", []any{int64(4)}), driver.Bounds{})
	require.NoError(t, err, "after Exec: %v, %v", res, err)
	require.Equal(t, [][]any{{"dee"}}, res.Rows, "after Exec: %v, %v", res, err)
	require.Error(t, x.Exec(ctx, []driver.Statement{stmt.New("INSERT INTO nowhere VALUES (1)", nil)}, driver.Write{Tx: false}), "no error for a bad statement")
}

// TestQueryRowsApart: rows read in blocks are each a slice of their own:
// as many rows as asked, in order, each as long as its capacity, so that
// writing to one row or appending to it never changes another; a []byte
// value (a BLOB) reads as a string of its own, not the driver's buffer.
// Results narrow enough to come in one allocation and wider ones both.
func TestQueryRowsApart(t *testing.T) {
	x := sqlexec.New(openDB(t), engine.SQLite)
	for _, width := range []int{1, 2, 4, 5, 9} {
		cols := ""
		for c := 1; c < width; c++ {
			cols += fmt.Sprintf("i + %d AS c%d, ", c-1, c)
		}
		cols += "CAST(printf('b%d', i) AS BLOB) AS b"
		q := stmt.New("WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 300) SELECT "+cols+" FROM r", nil)
		wantRow := func(i int) []any {
			row := make([]any, width)
			for c := 0; c < width-1; c++ {
				row[c] = int64(i + c)
			}
			row[width-1] = fmt.Sprintf("b%d", i)
			return row
		}
		for _, maxRows := range []int{0, 1, 3, 100, 299} {
			res, err := x.Query(context.Background(), q, driver.Bounds{MaxRows: maxRows})
			require.NoError(t, err)
			want := maxRows
			if want == 0 {
				want = 300
			}
			if len(res.Rows) != want || len(res.Columns) != width || cap(res.Columns) != width || len(res.Types) != width || cap(res.Types) != width {
				t.Fatalf("width %d, MaxRows %d: %d rows, columns %q, types %q", width, maxRows, len(res.Rows), res.Columns, res.Types)
			}
			for i, row := range res.Rows {
				require.Equal(t, width, cap(row), "width %d, MaxRows %d: row %d is %#v (cap %d)", width, maxRows, i, row, cap(row))
				require.Equal(t, wantRow(i+1), row, "width %d, MaxRows %d: row %d is %#v (cap %d)", width, maxRows, i, row, cap(row))
			}
			if want < 2 {
				continue
			}
			res.Rows[0] = append(res.Rows[0], "extra")
			res.Rows[0][0] = "changed"
			res.Columns = append(res.Columns, "extra")
			require.Equal(t, wantRow(2), res.Rows[1], "width %d, MaxRows %d: changing row 0 changed row 1 to %#v, types %q", width, maxRows, res.Rows[1], res.Types)
			require.NotEqual(t, "extra", res.Types[0], "width %d, MaxRows %d: changing row 0 changed row 1 to %#v, types %q", width, maxRows, res.Rows[1], res.Types)
		}
	}
}

// TestQueryAllocations: reading rows costs the executor no allocation
// per row of its own (rows come in blocks, a BLOB is copied once), beyond
// what the driver allocates for the values; a read of 200 small integers
// allocates little more than a read of one.
func TestQueryAllocations(t *testing.T) {
	x := sqlexec.New(openDB(t), engine.SQLite)
	ctx := context.Background()
	allocs := func(n int) float64 {
		q := stmt.New("WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < ?) SELECT i % 100 FROM r", []any{int64(n)})
		return testing.AllocsPerRun(50, func() {
			res, err := x.Query(ctx, q, driver.Bounds{})
			require.NoError(t, err, "%d rows: %v", len(res.Rows), err)
			require.Len(t, res.Rows, n, "%d rows: %v", len(res.Rows), err)
		})
	}
	one, many := allocs(1), allocs(200)
	// 200 rows: blocks of 1, 2, 4, ..., 64 rows (8) and the slice of rows
	// growing (about 10 times).
	t.Logf("one row %v, 200 rows %v", one, many)
	if many-one > 25 {
		t.Errorf("200 rows allocate %v times, one row %v: more than 25 allocations for 199 more rows", many, one)
	}
}
