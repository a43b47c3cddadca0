package tree_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/tree"
)

// FuzzParse: the parser never panics; a query it reads prints back byte
// for byte, and reading the print gives an equal tree, on every engine.
func FuzzParse(f *testing.F) {
	for _, q := range loadCorpus(f) {
		f.Add(q)
	}
	for _, q := range scopeCases {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, q string) {
		for _, e := range engine.All() {
			tr, err := tree.Parse(e, q)
			if err != nil {
				var te *tree.Error
				require.ErrorAs(t, err, &te)
				continue
			}
			out, err := tree.Print(tr)
			require.NoError(t, err)
			require.Equal(t, q, out, e.Name())
			again, err := tree.Parse(e, out)
			require.NoError(t, err)
			assert.Equal(t, tr, again, e.Name())
		}
	})
}
