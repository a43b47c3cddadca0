package access

import (
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/tree"
)

// Confine checks query as Check does and returns it rewritten so that it
// can read only what rules allow it: every reference to a table with a
// TenantColumn or Columns becomes a derived table,
//
//	events AS e   ->   (SELECT * FROM events WHERE events.project_id = {variables.<tenant>}) AS e
//
// (with the listed columns instead of * when Columns is set), keeping the
// reference's alias, or its own name as the alias, so that the rest of the
// query resolves as before. Every table reference is also spelled as the
// rules spell it, so that a case-sensitive engine reads the table the rules
// name. The tenant value is the placeholder {variables.<tenant>}: the
// caller binds it like any other variable, never as SQL text. tenant must
// be a code name ([A-Za-z_][A-Za-z0-9_]*) when any table has a tenant
// column. The caller must bind it itself, over any value a client sends,
// and keep clients from defining a variable of that code name: whoever
// chooses its value chooses the tenant.
//
// The checker (Check's walker) decides whether the query may run; the
// rewritten text is printed by package sql/tree's printer, the one place
// that adds the tenant's condition to a table reference. A query the
// checker accepts and the tree cannot read (text no engine runs, such as
// "SELECT id FROM t WHERE") is refused with the tree's reason.
//
// A reference already in that exact shape (the output of an earlier
// Confine) is left as it is, so Confine(Confine(q)) == Confine(q). Before
// returning, Confine reads its own output again with the checker and
// checks that every reference to a scoped table is inside such a derived
// table; if not, it refuses the query.
//
// The rest of the text (spaces, comments, everything outside the table
// references) is kept byte for byte.
func Confine(query string, rules *Rules, tenant string) (string, error) {
	return confine(query, rules, tenant, nil)
}

// ConfineFor is Confine for a query that runs on an engine whose rules lx
// holds: it reads string literals as CheckFor does.
func ConfineFor(lx engine.Lexical, query string, rules *Rules, tenant string) (string, error) {
	return confine(query, rules, tenant, &lx)
}

func confine(query string, rules *Rules, tenant string, lx *engine.Lexical) (string, error) {
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
	reading, _ := readingFor(lx)
	t, terr := tree.ParseLexical(reading, query)
	if terr != nil {
		// The checker accepts text the tree cannot read ("SELECT a FROM
		// t WHERE", which no engine runs): its references are confined by
		// splicing the text, checked as every output is, so that the
		// engine's own error reaches the author as before the tree.
		unreadSplices.Add(1)
		out := p.splice(query, tenant)
		if out == query {
			return out, p.verifyScoped(tenant)
		}
		if err := verifyScoped(out, rs, tenant, lx); err != nil {
			return "", err
		}
		return out, nil
	}
	t.Bind(rs.treeTables)
	out, perr := tree.Printer{Scope: &tree.Scope{Tenant: tenant}}.Print(t)
	if perr != nil {
		return "", fmt.Errorf("access: the scoped query could not be printed (%v); this is a defect", perr)
	}
	if out == query {
		// Nothing was confined or respelled: the checker's reading of the
		// query is the verification's.
		return out, p.verifyScoped(tenant)
	}
	if err := verifyScoped(out, rs, tenant, lx); err != nil {
		return "", err
	}
	return out, nil
}

// unreadSplices counts the queries Confine spliced because the tree
// could not read them.
var unreadSplices atomic.Uint64

// UnreadSplices returns how many queries Confine has confined by splicing
// their text since the process started: text the checker accepts and
// package sql/tree cannot read (text no engine runs, such as "SELECT a
// FROM t WHERE", or a form the tree does not read yet). Every other
// output is printed by the tree's printer. A host may export it as a
// metric; a rise names a form the tree should learn.
func UnreadSplices() uint64 { return unreadSplices.Load() }

// splice returns query with every reference to a scoped table replaced
// by its derived table and every other table respelled, by splicing the
// text around the references p read.
func (p *parser) splice(query, tenant string) string {
	var b strings.Builder
	b.Grow(len(query) + 64*len(p.refs))
	done := 0
	for i := range p.refs {
		r := &p.refs[i]
		if r.rule == nil {
			continue
		}
		wrap := r.rule.tenant != "" || r.rule.columns != nil
		if wrap && p.scopedAt(r, tenant) {
			continue
		}
		name := p.spelled(r)
		if !wrap {
			first, last := &p.toks[r.parts[0]], &p.toks[r.parts[len(r.parts)-1]]
			if p.src[first.start:last.end] == name {
				continue
			}
			b.WriteString(query[done:first.start])
			b.WriteString(name)
			done = last.end
			continue
		}
		b.WriteString(query[done:p.toks[r.first].start])
		p.writeDerived(&b, r, name, tenant)
		done = p.toks[r.last].end
		if done < len(query) && isWordByte(query[done]) {
			// The reference ended with a parenthesis ("USE INDEX ()")
			// that the next word touched; the alias that now ends it
			// would merge with that word.
			b.WriteByte(' ')
		}
	}
	b.WriteString(query[done:])
	return b.String()
}

// writeDerived writes the derived table that replaces reference r.
func (p *parser) writeDerived(b *strings.Builder, r *tableRef, name, tenant string) {
	b.WriteString("(SELECT ")
	if r.rule.columns == nil {
		b.WriteString("*")
	} else {
		b.WriteString(strings.Join(r.rule.columns, ", "))
	}
	b.WriteString(" FROM ")
	if r.only >= 0 {
		b.WriteString("ONLY ")
	}
	b.WriteString(name)
	for _, s := range r.suffixes {
		b.WriteByte(' ')
		b.WriteString(p.src[p.toks[s[0]].start:p.toks[s[1]].end])
	}
	if r.rule.tenant != "" {
		// Qualified by the table's own name: an alias of the enclosing
		// query (or a ClickHouse WITH alias) cannot stand for it, and a
		// tenant column missing from the table is an error rather than a
		// reference to some outer column.
		fmt.Fprintf(b, " WHERE %s.%s = {variables.%s}", name, r.rule.tenant, tenant)
	}
	b.WriteString(") AS ")
	if r.alias >= 0 {
		t := &p.toks[r.alias]
		b.WriteString(p.src[t.start:t.end])
	} else {
		t := &p.toks[r.parts[len(r.parts)-1]]
		b.WriteString(p.src[t.start:t.end])
	}
	if r.aliasCols[0] >= 0 {
		b.WriteString(p.src[p.toks[r.aliasCols[0]].start:p.toks[r.aliasCols[1]].end])
	}
}

// spelled returns the reference's table name as the rules spell it, each
// part quoted as the query quoted it.
func (p *parser) spelled(r *tableRef) string {
	var b strings.Builder
	for i, ti := range r.parts {
		if i > 0 {
			b.WriteByte('.')
		}
		t := &p.toks[ti]
		if t.kind == tQuoted {
			// The rules' names are plain identifiers: no quote inside to
			// double.
			b.WriteByte(t.quote)
			b.WriteString(r.rule.parts[i])
			b.WriteByte(t.quote)
		} else {
			b.WriteString(r.rule.parts[i])
		}
	}
	return b.String()
}

// scopedAt reports whether reference r, to a table with a tenant column or
// a column list, stands in a derived table that restricts it:
//
//	( SELECT <* or exactly the columns> FROM [ONLY] <name> <suffixes> [WHERE <name>.<tenant column> = {variables.<tenant>}] )
//
// with the WHERE exactly when the table has a tenant column, and the
// name in WHERE spelled as the reference is.
func (p *parser) scopedAt(r *tableRef, tenant string) bool {
	// Scope puts the alias on the derived table: a reference with an alias
	// of its own is not in the shape.
	if r.alias >= 0 {
		return false
	}
	i := r.first
	if r.only >= 0 {
		i = r.only
	}
	return p.scopeHeadBefore(i, r.rule.columns) && p.scopeTailAfter(r, tenant)
}

// scopeHeadBefore reports whether "( SELECT <* or exactly cols> FROM" ends
// just before token i.
func (p *parser) scopeHeadBefore(i int, cols []string) bool {
	toks := p.toks
	i--
	if i < 0 || !toks[i].isWord("from") {
		return false
	}
	i--
	if cols == nil {
		if i < 0 || !toks[i].isPunct('*') {
			return false
		}
		i--
	} else if i = p.columnsBefore(i, cols); i < 0 {
		return false
	}
	return i >= 1 && toks[i].isWord("select") && toks[i-1].kind == tLParen
}

// columnsBefore reads the column list cols backwards from token i, its
// last column, and returns the token before the list; -1 when the tokens
// are not exactly the list.
func (p *parser) columnsBefore(i int, cols []string) int {
	toks := p.toks
	for k := len(cols) - 1; k >= 0; k-- {
		if i < 0 || toks[i].kind != tWord || toks[i].text != cols[k] {
			return -1
		}
		i--
		if k > 0 {
			if i < 0 || toks[i].kind != tComma {
				return -1
			}
			i--
		}
	}
	return i
}

// scopeTailAfter reports whether reference r is followed by "[WHERE
// <name>.<tenant column> = {variables.<tenant>}] )", with the WHERE exactly
// when the table has a tenant column.
func (p *parser) scopeTailAfter(r *tableRef, tenant string) bool {
	toks := p.toks
	j := r.last + 1
	if r.rule.tenant != "" {
		if !toks[j].isWord("where") {
			return false
		}
		if j = p.sameNameAt(j+1, r); j < 0 {
			return false
		}
		if toks[j].kind != tDot || toks[j+1].kind != tWord || toks[j+1].text != r.rule.tenant ||
			!toks[j+2].isPunct('=') || toks[j+3].kind != tPlaceholder || toks[j+3].text != tenant {
			return false
		}
		// "= {variables.t}" must not be the start of a longer expression.
		j += 4
	}
	return toks[j].kind == tRParen
}

// sameNameAt reads the name of reference r again at token j, spelled and
// quoted as the reference is, and returns the token after it; -1 when the
// tokens there are not that name.
func (p *parser) sameNameAt(j int, r *tableRef) int {
	toks := p.toks
	for k, ti := range r.parts {
		if k > 0 {
			if toks[j].kind != tDot {
				return -1
			}
			j++
		}
		if toks[j].kind != toks[ti].kind || toks[j].text != toks[ti].text || toks[j].quote != toks[ti].quote {
			return -1
		}
		j++
	}
	return j
}

// verifyScoped reads Scope's output again and refuses it unless every
// reference to a table with a tenant column or column list is scoped.
// It guards the rewrite itself: an output that reads differently from
// what was meant is never returned.
func verifyScoped(out string, rs *ruleset, tenant string, lx *engine.Lexical) error {
	p, e := analyze(out, rs, lx)
	if e != nil {
		return fmt.Errorf("access: the scoped query does not read as a query (%v); this is a defect", e)
	}
	return p.verifyScoped(tenant)
}

// verifyScoped refuses the query p read unless every reference to a
// table with a tenant column or column list is scoped.
func (p *parser) verifyScoped(tenant string) error {
	for i := range p.refs {
		r := &p.refs[i]
		if r.rule == nil || r.rule.tenant == "" && r.rule.columns == nil {
			continue
		}
		if !p.scopedAt(r, tenant) {
			return fmt.Errorf("access: a reference to %q in the scoped query is not scoped; this is a defect", strings.Join(r.rule.parts, "."))
		}
	}
	return nil
}
