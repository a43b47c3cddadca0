package tree

import (
	"fmt"
	"strings"
)

// Table is a table of the tenant scope: its name as the rules spell it,
// and what confines a query to the tenant's rows and the table's listed
// columns.
type Table struct {
	// Parts are the name's parts as the rules spell them.
	Parts []string
	// TenantColumn, when set, is the column that holds the tenant a row
	// belongs to.
	TenantColumn string
	// Columns, when not nil, are the only columns a query may see.
	Columns []string
}

// Scoped reports whether a reference to the table must be printed as a
// derived table: it has a tenant column or a column list.
func (t *Table) Scoped() bool { return t != nil && (t.TenantColumn != "" || t.Columns != nil) }

// Bind finds, for every table a FROM list names, the table of tables it
// names, and records it in AliasedTableExpr.Table: a name matches a Table
// whose parts are the same but for ASCII case, quoted or not. A one-part
// name that a WITH clause in scope defines names that WITH query, not a
// table. A reference bound to a scoped Table can then only be printed
// with a Scope. Bind replaces what an earlier Bind recorded.
func (t *Tree) Bind(tables []Table) {
	b := binder{tables: make(map[string]*Table, len(tables))}
	b.kids.init()
	for i := range tables {
		b.tables[lower(strings.Join(tables[i].Parts, "."))] = &tables[i]
	}
	b.node(t.Stmt, nil)
	b.kids.release()
}

type binder struct {
	tables map[string]*Table
	kids   collector
}

func (b *binder) node(n Node, frames []string) {
	if isNil(n) {
		return
	}
	switch v := n.(type) {
	case *Select:
		frames = b.with(v.With, frames)
	case *Union:
		frames = b.with(v.With, frames)
	case *ParenSelect:
		frames = b.with(v.With, frames)
	case *AliasedTableExpr:
		if tn, ok := v.Expr.(*TableName); ok {
			v.Table = b.resolve(tn, frames)
			tn.table = v.Table
			return
		}
	}
	from, to := b.kids.children(n)
	for i := from; i < to; i++ {
		if c := b.kids.out[i]; !isWith(c) {
			b.node(c, frames)
		}
	}
	b.kids.drop(from)
}

func isWith(n Node) bool {
	_, ok := n.(*With)
	return ok
}

// with binds the bodies of w's queries and returns the names in scope
// after it.
func (b *binder) with(w *With, frames []string) []string {
	if w == nil {
		return frames
	}
	frames = frames[:len(frames):len(frames)]
	for _, c := range w.CTEs {
		if c.Subquery == nil {
			b.node(c.Expr, frames)
			continue
		}
		if w.Recursive {
			b.recursiveBody(c.Subquery, frames, c.Name.Name)
		} else {
			b.node(c.Subquery, frames)
		}
		frames = append(frames, c.Name.Name)
	}
	return frames
}

// recursiveBody binds q, the body of the WITH RECURSIVE query name, with
// frames the names in scope before it. The query's name means the query
// itself only in the recursive arms of its body: each arm after the first
// of the UNION [ALL] chain the body is, an arm that is not itself a set
// operation. Anywhere else (a body that is no UNION, its first arm, an
// INTERSECT or EXCEPT, the ORDER BY or LIMIT of the whole UNION)
// ClickHouse reads the table of that name, and the other engines refuse
// the query, so there the name is bound as a table's, as sql/access's
// checker reads it.
func (b *binder) recursiveBody(q *Subquery, frames []string, name string) {
	plain, arms := RecursiveArms(q)
	for _, n := range plain {
		b.node(n, frames)
	}
	self := append(frames[:len(frames):len(frames)], name)
	for _, a := range arms {
		b.node(a, self)
	}
}

func (b *binder) resolve(tn *TableName, frames []string) *Table {
	if len(tn.Parts) == 1 {
		for _, f := range frames {
			if strings.EqualFold(f, tn.Parts[0].Name) {
				return nil
			}
		}
	}
	names := make([]string, len(tn.Parts))
	for i, p := range tn.Parts {
		names[i] = p.Name
	}
	return b.tables[lower(strings.Join(names, "."))]
}

// keptRefs returns the references to scoped tables that already stand in
// the derived table a scoped printer writes (the output of an earlier
// scoped print): they print as they are, so that printing is idempotent.
func keptRefs(stmt SelectStatement, tenant string) map[*AliasedTableExpr]bool {
	keep := make(map[*AliasedTableExpr]bool)
	_ = Walk(func(n Node) (bool, error) {
		var inner SelectStatement
		switch v := n.(type) {
		case *Subquery:
			inner = v.Select
		case *ParenSelect:
			inner = v.Select
		}
		if s, ok := inner.(*Select); ok {
			if a := scopedShape(s, tenant); a != nil {
				keep[a] = true
			}
		}
		return true, nil
	}, stmt)
	return keep
}

// scopedShape returns the one reference of s when s is exactly
//
//	SELECT <* or the table's columns> FROM [ONLY] <name> <suffixes> [WHERE <name>.<tenant column> = {variables.<tenant>}]
//
// with the WHERE exactly when the table has a tenant column; nil
// otherwise.
func scopedShape(s *Select, tenant string) *AliasedTableExpr {
	if s.With != nil || s.Distinct != "" || len(s.From) != 1 || s.PreWhere != nil || s.GroupBy != nil ||
		s.GroupByModifier != "" || s.Having != nil || s.Window != nil || s.Qualify != nil || s.OrderBy != nil ||
		s.LimitBy != nil || s.Limit != nil {
		return nil
	}
	a, ok := s.From[0].(*AliasedTableExpr)
	if !ok || !a.Table.Scoped() || !a.As.IsEmpty() || a.Lateral {
		return nil
	}
	tn := a.Expr.(*TableName)
	if cols := a.Table.Columns; cols == nil {
		if len(s.SelectExprs) != 1 { // SELECT FROM t has none
			return nil
		}
		st, ok := s.SelectExprs[0].(*StarExpr)
		if !ok || !st.TableName.IsEmpty() || st.Except != nil || st.Replace != nil {
			return nil
		}
	} else {
		if len(s.SelectExprs) != len(cols) {
			return nil
		}
		for i, se := range s.SelectExprs {
			ae, ok := se.(*AliasedExpr)
			if !ok || !ae.As.IsEmpty() {
				return nil
			}
			c, ok := ae.Expr.(*ColName)
			if !ok || !c.Qualifier.IsEmpty() || c.Name.Quote != 0 || c.Name.Raw != cols[i] {
				return nil
			}
		}
	}
	if a.Table.TenantColumn == "" {
		if s.Where != nil {
			return nil
		}
		return a
	}
	c, ok := s.Where.(*ComparisonExpr)
	if !ok || c.Operator != "=" {
		return nil
	}
	col, ok := c.Left.(*ColName)
	ph, ok2 := c.Right.(*Placeholder)
	if !ok || !ok2 || ph.Name != tenant || col.Name.Quote != 0 || col.Name.Raw != a.Table.TenantColumn ||
		len(col.Qualifier.Parts) != len(tn.Parts) {
		return nil
	}
	for i, part := range col.Qualifier.Parts {
		if part.Name != tn.Parts[i].Name || part.Quote != tn.Parts[i].Quote {
			return nil
		}
	}
	return a
}

// spelled returns the name of a bound reference as the rules spell it,
// each part quoted as the query quoted it.
func (p *printer) spelled(tn *TableName) string {
	var b strings.Builder
	for i, part := range tn.Parts {
		if i > 0 {
			b.WriteByte('.')
		}
		name := part.Name
		if i < len(tn.table.Parts) && len(tn.table.Parts) == len(tn.Parts) {
			name = tn.table.Parts[i]
		}
		switch part.Quote {
		case 0:
			b.WriteString(name)
		case '[':
			b.WriteString("[" + name + "]")
		default:
			b.WriteByte(part.Quote)
			b.WriteString(name)
			b.WriteByte(part.Quote)
		}
	}
	return b.String()
}

// derived writes the derived table that a reference to a scoped table
// prints as:
//
//	(SELECT * FROM events WHERE events.project_id = {variables.<tenant>}) AS e
//
// with the table's columns instead of * when it lists them, its suffixes
// (FINAL, index hints) inside, and its alias, or its own name, outside.
func (p *printer) derived(v *AliasedTableExpr) {
	tn := v.Expr.(*TableName)
	if p.scope == nil || v.Table.TenantColumn != "" && !isCodeName(p.scope.Tenant) {
		what := "the printer was given none"
		if p.scope != nil {
			what = fmt.Sprintf("the tenant placeholder's name %q is not a code name", p.scope.Tenant)
		}
		p.err = errorAt(p.src, v.span.Start, ErrUnscoped, "the reference to table %q must be printed with the tenant's scope, and %s", strings.Join(v.Table.Parts, "."), what)
		return
	}
	name := p.spelled(tn)
	p.ws("(SELECT ")
	if v.Table.Columns == nil {
		p.ws("*")
	} else {
		p.ws(strings.Join(v.Table.Columns, ", "))
	}
	p.ws(" FROM ")
	if v.Only {
		p.ws("ONLY ")
	}
	p.ws(name)
	p.suffixes(v)
	if v.Table.TenantColumn != "" {
		writeConfinement(p.ws, func() { p.ws(name) }, v.Table.TenantColumn, func() { p.ws("{variables." + p.scope.Tenant + "}") })
	}
	p.ws(") AS ")
	if !v.As.IsEmpty() {
		p.ident(v.As)
	} else {
		p.ident(tn.Parts[len(tn.Parts)-1])
	}
	switch {
	case v.ColumnsAt.End > v.ColumnsAt.Start && !v.gen:
		p.ws(p.src[v.ColumnsAt.Start:v.ColumnsAt.End])
	case v.Columns != nil:
		p.idents(v.Columns)
	}
}

// isCodeName reports whether s is [A-Za-z_][A-Za-z0-9_]*.
func isCodeName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c|0x20 >= 'a' && c|0x20 <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// RecursiveArms splits q, the body of a WITH RECURSIVE query, into the
// recursive arms, where the query's name means the query itself (each arm
// after the first of the UNION [ALL] chain the body is, an arm that is not
// itself a set operation), and the plain parts, where it names a table as
// anywhere else (a body that is no UNION, its first arm, an INTERSECT or
// EXCEPT, the ORDER BY, LIMIT BY and LIMIT of the whole UNION; nil where
// absent). The binder and sql/access's checker read a recursive body so.
func RecursiveArms(q *Subquery) (plain, arms []Node) {
	body := q.Select
	for {
		u, ok := body.(*Union)
		if !ok || u.With != nil || !strings.HasPrefix(u.Type, "UNION") {
			break
		}
		if _, set := u.Right.(*Union); set {
			plain = append(plain, u.Right)
		} else {
			arms = append(arms, u.Right)
		}
		for _, o := range u.OrderBy {
			plain = append(plain, o)
		}
		plain = append(plain, u.LimitBy, u.Limit)
		body = u.Left
	}
	return append(plain, body), arms
}
