package sqltoken

import (
	"os"
	"testing"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
)

// BenchmarkTokens2K scans testdata/bench2k.sql, the 2 KB query that the
// benchmarks of the scanners it replaced read too (placeholder's
// BenchmarkScan2K, access's BenchmarkLex2K, endpoint's
// BenchmarkPlainSelect2K).
func BenchmarkTokens2K(b *testing.B) {
	data, err := os.ReadFile("testdata/bench2k.sql")
	require.NoError(b, err)
	src := string(data)
	for _, e := range engine.All() {
		lx := e.Lexical()
		b.Run(e.Name(), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			var s Scanner
			for b.Loop() {
				s.Reset(lx, src)
				for {
					if _, ok := s.Next(); !ok {
						break
					}
				}
			}
		})
	}
	b.Run("slice", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		b.ReportAllocs()
		for b.Loop() {
			Tokens(engine.SQLite.Lexical(), src)
		}
	})
}
