package tree_test

import (
	"encoding/json"
	"flag"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/tree"
)

var update = flag.Bool("update", false, "rewrite testdata/corpus_refused.json from the parser's answers")

// corpusRules are the rules the corpus was gathered under (see
// internal/harvest): any table, the built-in functions.
var corpusRules = &access.Rules{AnyTable: true, TableFunctions: []string{"generate_series", "numbers"}}

// loadCorpus reads testdata/corpus.json: every query string (literals and
// concatenations of literals) of the tests of sql/access, materialize,
// placeholder, internal/equivalence and endpoint that access.Check
// accepts, as internal/harvest gathers them.
func loadCorpus(t testing.TB) []string {
	raw, err := os.ReadFile("testdata/corpus.json")
	require.NoError(t, err)
	var qs []string
	require.NoError(t, json.Unmarshal(raw, &qs))
	require.NotEmpty(t, qs)
	return qs
}

// refusal is a corpus query that access reads on an engine and the tree
// refuses, with the tree's reason.
type refusal struct {
	Engine string `json:"engine"`
	Query  string `json:"query"`
	Error  string `json:"error"`
}

// TestCorpusRoundTrip: every corpus query (every query the checker of
// package access accepted before it read through the tree) parses on each
// engine and prints back byte for byte, but for those listed in
// testdata/corpus_refused.json: text the engine itself would not run
// (fragments such as "SELECT id FROM t WHERE", "%d" templates, MySQL's
// "..." strings where a table belongs, SQLite's [..] names where a
// subscript was meant, text access refuses as ambiguous), and the few
// forms the tree does not read yet. The list is checked both ways: a query
// refused that is not listed fails, and so does a listed query that now
// parses (rerun with -update to accept).
func TestCorpusRoundTrip(t *testing.T) {
	qs := loadCorpus(t)
	var got []refusal
	for _, e := range engine.All() {
		read, parsed := 0, 0
		for _, q := range qs {
			read++
			tr, err := tree.Parse(e, q)
			if err != nil {
				require.ErrorIs(t, err, tree.ErrSyntax)
				got = append(got, refusal{e.Name(), q, err.Error()})
				continue
			}
			out, err := tree.Print(tr)
			require.NoError(t, err)
			if assert.Equal(t, q, out, e.Name()) {
				parsed++
			}
		}
		t.Logf("%s: %d of %d corpus queries that access reads parse and print back byte for byte", e.Name(), parsed, read)
		assert.Positive(t, read)
	}
	if *update {
		raw, err := json.MarshalIndent(got, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile("testdata/corpus_refused.json", append(raw, '\n'), 0o644))
		return
	}
	raw, err := os.ReadFile("testdata/corpus_refused.json")
	require.NoError(t, err)
	var want []refusal
	require.NoError(t, json.Unmarshal(raw, &want))
	key := func(r refusal) string { return r.Engine + "\x00" + r.Query }
	wantKeys := make([]string, len(want))
	for i, r := range want {
		wantKeys[i] = key(r)
	}
	for _, r := range got {
		assert.True(t, slices.Contains(wantKeys, key(r)), "newly refused on %s: %q: %s", r.Engine, r.Query, r.Error)
	}
	for _, r := range want {
		assert.True(t, slices.ContainsFunc(got, func(g refusal) bool { return key(g) == key(r) }),
			"listed as refused on %s but parses now (rerun with -update): %q", r.Engine, strings.TrimSpace(r.Query))
	}
}
