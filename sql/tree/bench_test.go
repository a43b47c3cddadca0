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
