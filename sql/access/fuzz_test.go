package access

import (
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/tree"
	"github.com/stretchr/testify/require"
)

func addSeeds(f *testing.F) {
	for _, a := range attacks {
		f.Add(a.query)
	}
	for _, q := range accepted {
		f.Add(q)
	}
	for _, q := range scopedQueries {
		f.Add(q)
	}
	for _, fm := range forms {
		f.Add(fm.query)
	}
	f.Add("SELECT [a] FROM events WHERE x[1] = ARRAY[1,2][1]")
	f.Add("SELECT a['k'], a['it''s'][2], a[' -- '] FROM events")
	f.Add("SELECT a['x] FROM t --'] FROM events")
	f.Add("SELECT * EXCEPT (a) EXCEPT (SELECT 1) FROM events")
	f.Add("SELECT t.* REPLACE STRICT ((SELECT 1) AS a) FROM events t")
	f.Add("SELECT * FROM events e1, (events e2 JOIN events e3 ON 1) LEFT ARRAY JOIN a AS b")
}

// checkRefusal checks what every refusal must be: a typed error, located in
// the query.
func checkRefusal(t *testing.T, q string, err error) {
	t.Helper()
	var e *Error
	require.ErrorAs(t, err, &e, "%q", q)
	if e.Offset < 0 || e.Offset > len(q) || e.Line < 1 || e.Column < 1 || e.Detail == "" || e.Reason == "" {
		t.Fatalf("%q: malformed error %+v", q, e)
	}
	require.LessOrEqual(t, len(e.Table), int(maxEcho+3), "%q: error echoes too much: %+v", q, e)
	require.LessOrEqual(t, len(e.Function), int(maxEcho+3), "%q: error echoes too much: %+v", q, e)
}

// lexedPlaceholders returns the code names of the placeholders the
// tokenizer found.
func lexedPlaceholders(t *testing.T, q string) []string {
	toks, err := lex(q)
	require.Nil(t, err, "%q was accepted but does not lex", q)
	var names []string
	for _, tk := range toks {
		if tk.kind == tPlaceholder {
			names = append(names, tk.text)
		}
	}
	return names
}

// scannedPlaceholders returns the code names package placeholder finds.
func scannedPlaceholders(t *testing.T, q string) []string {
	phs, err := placeholder.Scan(q)
	require.NoError(t, err, "%q was accepted but placeholder.Scan refuses it", q)
	var names []string
	for _, p := range phs {
		names = append(names, p.Name)
	}
	return names
}

// FuzzCheck: Check never panics, refuses with a typed error, and reads
// the placeholders of what it accepts exactly as package placeholder does
// (a disagreement would mean the two read different code).
//
// CheckFor accepts what Check accepts, on every engine (but backticks
// where they quote nothing), and reads the
// placeholders of what it accepts exactly as package placeholder reads
// them for that engine.
func FuzzCheck(f *testing.F) {
	addSeeds(f)
	f.Add(`SELECT 'C:\' || {variables.a} AS p FROM events WHERE x = 'it\'s {variables.b}'`)
	f.Fuzz(func(t *testing.T, q string) {
		err := Check(q, testRules())
		for _, e := range engine.All() {
			ferr := CheckFor(e.Lexical(), q, testRules())
			if ferr != nil {
				checkRefusal(t, q, ferr)
				if err == nil && (e.Lexical().BacktickNames || !strings.Contains(ferr.Error(), "backtick")) {
					t.Fatalf("%q: Check accepts, CheckFor(%s) refuses: %v", q, e.Name(), ferr)
				}
				continue
			}
			toks, lerr := lexFor(new(e.Lexical()), q)
			require.Nil(t, lerr, "%q was accepted on %s but does not lex", q, e.Name())
			var got, want []string
			for _, tk := range toks {
				if tk.kind == tPlaceholder {
					got = append(got, tk.text)
				}
			}
			phs, serr := placeholder.ScanFor(e.Lexical(), q)
			require.NoError(t, serr, "%q was accepted on %s but placeholder.ScanFor refuses it", q, e.Name())
			for _, p := range phs {
				want = append(want, p.Name)
			}
			require.Equal(t, want, got, "%q on %s: placeholders", q, e.Name())
		}
		if err != nil {
			checkRefusal(t, q, err)
			return
		}
		got, want := lexedPlaceholders(t, q), scannedPlaceholders(t, q)
		require.Equal(t, want, got, "%q: placeholders", q)
	})
}

// FuzzScope: Confine accepts exactly what Check accepts; its output passes
// Check, has every reference to a scoped table inside a scoping derived
// table and every reference spelled as the rules spell it, compiles as a
// template with one more tenant placeholder per rewritten reference, and
// is a fixed point of Confine.
func FuzzScope(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, q string) {
		rules := testRules()
		cerr := Check(q, rules)
		out, serr := Confine(q, rules, tenantVar)
		require.Equal(t, serr == nil, cerr == nil, "%q: Check says %v, Scope says %v", q, cerr, serr)
		if serr != nil {
			checkRefusal(t, q, serr)
			require.Equal(t, cerr.Error(), serr.Error(), "%q: Check refuses with %v, Scope with %v", q, cerr, serr)
			return
		}
		require.NoError(t, Check(out, rules), "Confine(%q) = %q, which Check refuses", q, out)
		requireScoped(t, q, out, rules)
		before, after := scannedPlaceholders(t, q), scannedPlaceholders(t, out)
		var added []string
		for _, n := range after {
			if n == tenantVar {
				added = append(added, n)
			}
		}
		got, want := len(after)-len(added), len(before)-strings.Count(strings.Join(before, " ")+" ", tenantVar+" ")
		require.Equal(t, want, got, "Confine(%q) = %q: placeholders %v became %v", q, out, before, after)
		if _, err := placeholder.Compile(out); err != nil {
			t.Fatalf("Confine(%q) = %q does not compile: %v", q, out, err)
		}
		again, err := Confine(out, rules, tenantVar)
		require.NoError(t, err, "Scope is not a fixed point on %q: %q, %v", out, again, err)
		require.Equal(t, out, again, "Scope is not a fixed point on %q: %q, %v", out, again, err)
	})
}

// requireScoped fails unless every reference to a table of rules in out,
// Confine's output for q, is spelled as the rules spell it and, for a
// scoped table, stands alone in the derived table that confines it.
func requireScoped(t *testing.T, q, out string, rules *Rules) {
	t.Helper()
	rs, err := compileRules(rules)
	require.NoError(t, err)
	reading, _ := readingFor(nil)
	tr, err := tree.ParseLexical(reading, out)
	require.NoError(t, err, "Confine(%q) = %q", q, out)
	tr.Bind(rs.treeTables)
	// Printed with another tenant, every scoped reference that is not
	// already confined to tenantVar would be wrapped again.
	again, err := tree.Printer{Scope: &tree.Scope{Tenant: tenantVar}}.Print(tr)
	require.NoError(t, err)
	require.Equal(t, out, again, "Confine(%q) = %q: a reference is not scoped", q, out)
	require.NoError(t, tree.Walk(func(n tree.Node) (bool, error) {
		a, ok := n.(*tree.AliasedTableExpr)
		if !ok || a.Table == nil {
			return true, nil
		}
		tn := a.Expr.(*tree.TableName)
		for k, p := range tn.Parts {
			require.Equal(t, a.Table.Parts[k], p.Name, "Confine(%q) = %q", q, out)
		}
		if a.Table.Scoped() {
			require.True(t, a.As.IsEmpty(), "Confine(%q) = %q: a scoped reference has an alias", q, out)
		}
		return true, nil
	}, tr.Stmt))
}
