package tree_test

import (
	"os"
	"testing"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/tree"
)

// BenchmarkParse2K reads sql/sqltoken's 2 KB query, the one access's
// BenchmarkLex2K reads, on each engine but MySQL, which reads its
// "blocked users" as a string where a table belongs;
// BenchmarkParsePrint2K also prints it back.
func BenchmarkParse2K(b *testing.B) {
	src := bench2K(b)
	for _, e := range []engine.Engine{engine.SQLite, engine.PostgreSQL, engine.ClickHouse} {
		b.Run(e.Name(), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tree.Parse(e, src); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkParsePrint2K(b *testing.B) {
	src := bench2K(b)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		t, err := tree.Parse(engine.PostgreSQL, src)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := tree.Print(t); err != nil {
			b.Fatal(err)
		}
	}
}

func bench2K(b *testing.B) string {
	data, err := os.ReadFile("../sqltoken/testdata/bench2k.sql")
	if err != nil {
		b.Fatal(err)
	}
	return string(data)
}

// TestWalkStacksPooled: Print and Bind take the stack their walk keeps a
// node's children on from a pool, grown by earlier walks, instead of
// growing one each (9 allocations each on this query before, 3 now: the
// printer or the binder's table map, the walk's function, the text).
func TestWalkStacksPooled(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's sync.Pool drops what is put in it at random")
	}
	tr, err := tree.Parse(engine.SQLite, "SELECT a, count(*) AS n, sum(b + c * (d - 1)) FROM t JOIN u ON t.id = u.id "+
		"WHERE x = 1 AND (y > 2 OR z IN (1, 2, 3)) GROUP BY a ORDER BY n DESC")
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(50, func() { _, _ = tree.Print(tr) }); n > 3 {
		t.Errorf("Print: %v allocations, want at most 3", n)
	}
	if n := testing.AllocsPerRun(50, func() { tr.Bind(nil) }); n > 3 {
		t.Errorf("Bind: %v allocations, want at most 3", n)
	}
}
