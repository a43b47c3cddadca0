package access

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/sql/engine"
)

// confineGolden reads testdata/confine_golden.json: what the text splice
// that confined queries before the tree (at commit 974a03e) answered for
// every query of sql/tree's corpus and of confineCases, per engine
// ("any" for no engine; an engine absent answers as "any"), a null for a
// refusal. A query absent from the file, or without "any", was returned
// unchanged.
func confineGolden(t *testing.T) map[string]map[string]*string {
	raw, err := os.ReadFile("testdata/confine_golden.json")
	require.NoError(t, err)
	var g map[string]map[string]*string
	require.NoError(t, json.Unmarshal(raw, &g))
	return g
}

// TestConfineAnswersAsTheSplice: for every query of sql/tree's corpus (the
// repository's test queries that Check accepts) and of confineCases, on
// every engine, Confine, which prints the tree, answers exactly as the
// text splice it replaced did: the same text, or a refusal where the
// splice refused too. Where the splice accepted text no engine runs (the
// fragments sql/tree's testdata/corpus_refused.json lists), Confine now
// refuses it as a syntax error: each must be listed there.
func TestConfineAnswersAsTheSplice(t *testing.T) {
	raw, err := os.ReadFile("../tree/testdata/corpus.json")
	require.NoError(t, err)
	var qs []string
	require.NoError(t, json.Unmarshal(raw, &qs))
	qs = append(qs, confineCases...)
	golden := confineGolden(t)
	raw, err = os.ReadFile("../tree/testdata/corpus_refused.json")
	require.NoError(t, err)
	var treeRefused []struct{ Engine, Query string }
	require.NoError(t, json.Unmarshal(raw, &treeRefused))
	listed := func(engine, q string) bool {
		for _, r := range treeRefused {
			if r.Query == q && (r.Engine == engine || engine == "any") {
				return true
			}
		}
		return false
	}
	rules := &Rules{
		Tables:         append(testRules().Tables, Table{Name: "orders", Columns: []string{"id", "amount"}}),
		AnyTable:       true,
		TableFunctions: []string{"generate_series", "numbers"},
	}
	for _, e := range append(engine.All(), nil) {
		var lx *engine.Lexical
		name := "any"
		if e != nil {
			l := e.Lexical()
			lx, name = &l, e.Name()
		}
		same, unreadable := 0, 0
		for _, q := range qs {
			want := &q
			if g, ok := golden[q]; ok {
				if w, ok := g[name]; ok {
					want = w
				} else if w, ok := g["any"]; ok {
					want = w
				}
			}
			got, gerr := confine(q, rules, tenantVar, lx)
			if want == nil {
				assert.Error(t, gerr, "%s: %s", name, q)
				continue
			}
			var ae *Error
			if gerr != nil && asError(gerr, &ae) && ae.Reason == ReasonUnsupported {
				assert.True(t, listed(name, q), "%s: %q is refused, and sql/tree does not list it as text it cannot read: %v", name, q, gerr)
				unreadable++
				t.Logf("%s: now refused as unreadable: %q: %v", name, q, gerr)
				continue
			}
			require.NoError(t, gerr, "%s: %s", name, q)
			if assert.Equal(t, *want, got, "%s: %s", name, q) {
				same++
			}
		}
		t.Logf("%s: %d queries confined as the splice did, %d refused as text no engine runs", name, same, unreadable)
		assert.Greater(t, same, 780)
	}
}

// TestConfineRefusesWhatTheTreeCannotRead: text no engine runs, which the
// splice used to confine, is refused as a syntax error with the tree's
// words and position, never printed.
func TestConfineRefusesWhatTheTreeCannotRead(t *testing.T) {
	rules := testRules()
	_, err := Confine("SELECT event FROM events WHERE", rules, tenantVar)
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, ReasonUnsupported, e.Reason)
	assert.Equal(t, 1, e.Line)
	assert.Equal(t, 31, e.Column)
	assert.Equal(t, "access: expected a value, found the end of the query (line 1, column 31)", e.Error())
	require.Equal(t, err, Check("SELECT event FROM events WHERE", rules))

	q := "SELECT e.event FROM events e WHERE e.timestamp >= {variables.from} - interval '90' day"
	out, err := Confine(q, rules, tenantVar)
	require.NoError(t, err)
	assert.Equal(t, "SELECT e.event FROM (SELECT * FROM events WHERE events.project_id = {variables."+tenantVar+"}) AS e WHERE e.timestamp >= {variables.from} - interval '90' day", out)
}

// confineCases are reference shapes beyond the corpus.
var confineCases = []string{
	`SELECT * FROM analytics . sessions`,
	`SELECT * FROM "Analytics"."SESSIONS" AS s`,
	`SELECT * FROM events e USE INDEX (i)WHERE 1 = 1`,
	`SELECT * FROM ONLY events AS e(a, b) JOIN users USING (id)`,
	`SELECT * FROM (SELECT * FROM events WHERE events.project_id = {variables.__endpointkit_tenant}) AS events, EVENTS`,
	fmt.Sprintf("SELECT %s FROM events", strings.Repeat("1, ", 50)+"1"),
}

func asError(err error, target **Error) bool { return errors.As(err, target) }
