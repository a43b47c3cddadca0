package executortest

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/placeholder"
)

// hostileValues are texts that change a statement if they reach its SQL
// text, under some engine's quoting: quotes and comment markers, a DROP
// of the very table (quoted name in table), backslash escapes (MySQL,
// ClickHouse), NUL, Unicode quotes that some charsets fold into ASCII ones,
// and the markers of every dialect. None equals a name of fixtureRows
// (which hold the empty string), and no two differ only by trailing
// spaces, which MySQL's PAD SPACE collations ignore.
func hostileValues(table string) []string {
	return []string{
		`' OR 1=1 --`,
		`' OR '1'='1`,
		`'); DROP TABLE ` + table + `; --`,
		`'; DROP TABLE ` + table + `; SELECT '`,
		`\`,
		`\'`,
		`\' OR 1=1 -- x`,
		`'' OR 1=1 --`,
		`" OR ""="`,
		"` OR 1=1 --",
		"a\x00b' OR 1=1 --",
		"\u2019 OR 1=1 --",
		"\u02bc OR \u02bc1\u02bc=\u02bc1",
		"\u2018\u201c\u201d\uff07",
		"?",
		"$1",
		"{p1:String}",
		":name @p1 %s",
		"/* --",
		"line\nbreak\r\n\x1a",
		"😀",
	}
}

// testHostile: values travel as bound arguments, so no value changes what
// a statement does, in Query or in Exec.
func testHostile(t *testing.T, x driver.Executor, f Fixture) {
	tb := filledTable(t, x, f)
	ids := fixtureIDs()
	type stored struct {
		id    int64
		value string
	}
	var inserted []stored
	for i, v := range hostileValues(tb.d.QuoteIdent(tb.name)) {
		id := int64(100 + i)
		q, args := tb.sql(t, func(b *placeholder.Builder, table string) {
			b.WriteString("INSERT INTO " + table + " (id, name) VALUES (")
			b.Bind(id)
			b.WriteString(", ")
			b.Bind(v)
			b.WriteString(")")
		})
		err := execute(t, x, context.Background(), q, args)
		if f.TextRejectsNUL && strings.ContainsRune(v, 0) {
			if err == nil {
				t.Fatalf("Exec(%q, %q) succeeded, but the Fixture says the engine's text rejects NUL", q, args)
			}
			continue
		}
		if err != nil {
			t.Fatalf("Exec(%q, %q): %v", q, args, err)
		}
		inserted = append(inserted, stored{id, v})
		ids = append(ids, id)
	}
	slices.Sort(ids)
	tb.wantIDs(t, "after inserting hostile values", ids...)

	for _, s := range inserted {
		q, args := tb.sql(t, func(b *placeholder.Builder, table string) {
			b.WriteString("SELECT id, name FROM " + table + " WHERE name = ")
			b.Bind(s.value)
		})
		res := mustQuery(t, x, q, args)
		if want := [][]any{{s.id, s.value}}; !sameRows(res.Rows, want) {
			t.Errorf("Query(%q, %q) = %s, want only its own row %s", q, args, describe(res.Rows), describe(want))
		}
	}

	// A statement copying the rows of one name copies one row.
	q, args := tb.sql(t, func(b *placeholder.Builder, table string) {
		b.WriteString("INSERT INTO " + table + " (id, name, score) SELECT ")
		b.Bind(int64(999))
		b.WriteString(", name, score FROM " + table + " WHERE name = ")
		b.Bind(`' OR 1=1 --`)
	})
	if err := execute(t, x, context.Background(), q, args); err != nil {
		t.Fatalf("Exec(%q, %q): %v", q, args, err)
	}
	ids = append(ids, 999)
	slices.Sort(ids)
	tb.wantIDs(t, "after INSERT ... SELECT of a hostile name", ids...)
}
