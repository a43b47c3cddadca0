package access

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/tree"
)

// spliceScope is Confine as a text splice alone, without the tree: the
// oracle the tree's output is compared with.
func spliceScope(query string, rules *Rules, tenant string, lx *engine.Lexical) (string, error) {
	rs, err := compileRules(rules)
	if err != nil {
		return "", err
	}
	if rs.tenantUsed && !isPlainName(tenant) {
		return "", policyErrorf("tenant placeholder name %q must match [A-Za-z_][A-Za-z0-9_]*", tenant)
	}
	p, e := analyze(query, rs, lx)
	if e != nil {
		return "", e
	}
	out := p.splice(query, tenant)
	if err := verifyScoped(out, rs, tenant, lx); err != nil {
		return "", err
	}
	return out, nil
}

// TestConfineEqualsTheSplice: for every query of sql/tree's corpus (the
// repository's test queries that Check accepts) and of confineCases, on
// every engine, Confine answers exactly as the text splice did: the same
// text, or a refusal where the splice refused too. The queries the tree
// reads (all but the fragments sql/tree's testdata/corpus_refused.json
// lists) are printed by the tree's printer.
func TestConfineEqualsTheSplice(t *testing.T) {
	raw, err := os.ReadFile("../tree/testdata/corpus.json")
	require.NoError(t, err)
	var qs []string
	require.NoError(t, json.Unmarshal(raw, &qs))
	qs = append(qs, confineCases...)
	rules := &Rules{
		Tables:         append(testRules().Tables, Table{Name: "orders", Columns: []string{"id", "amount"}}),
		AnyTable:       true,
		TableFunctions: []string{"generate_series", "numbers"},
	}
	for _, e := range append(engine.All(), nil) {
		var lx *engine.Lexical
		name := "any engine"
		if e != nil {
			l := e.Lexical()
			lx, name = &l, e.Name()
		}
		same, printed := 0, 0
		reading, _ := readingFor(lx)
		for _, q := range qs {
			want, werr := spliceScope(q, rules, tenantVar, lx)
			got, gerr := confine(q, rules, tenantVar, lx)
			if werr != nil {
				assert.Error(t, gerr, "%s: %s", name, q)
				continue
			}
			require.NoError(t, gerr, "%s: %s", name, q)
			if assert.Equal(t, want, got, "%s: %s", name, q) {
				same++
			}
			if _, err := tree.ParseLexical(reading, q); err == nil {
				printed++
			}
		}
		t.Logf("%s: %d queries confined as the splice did, %d of them printed by the tree", name, same, printed)
		assert.Greater(t, printed, 780)
	}
}

// TestConfineSplicesWhatTheTreeCannotRead: text the checker accepts and
// the tree cannot read is confined by the splice, and counted.
func TestConfineSplicesWhatTheTreeCannotRead(t *testing.T) {
	rules := testRules()
	before := UnreadSplices()
	out, err := Confine("SELECT event FROM events WHERE", rules, tenantVar)
	require.NoError(t, err)
	assert.Equal(t, "SELECT event FROM (SELECT * FROM events WHERE events.project_id = {variables."+tenantVar+"}) AS events WHERE", out)
	assert.Equal(t, before+1, UnreadSplices())

	q := "SELECT e.event FROM events e WHERE e.timestamp >= {variables.from} - interval '90' day"
	out, err = Confine(q, rules, tenantVar)
	require.NoError(t, err)
	assert.Equal(t, before+1, UnreadSplices(), "a query the tree reads is printed by it")
	assert.NotEmpty(t, out)
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
