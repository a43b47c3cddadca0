package materialize

import (
	"errors"
	"fmt"
	"strings"

	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/tree"
)

// parsed is a query read into the project's syntax tree (sql/tree), with
// its placeholders.
type parsed struct {
	tree *tree.Tree
	stmt tree.SelectStatement
	// names[i] is the code name of placeholder i of the query, in the
	// order of the text; index maps a placeholder's byte offset to i.
	names []string
	index map[int]int
}

// parse reads src for engine d into the tree, and puts the cast types and
// EXTRACT units in the spelling the printer writes (see normalize). A
// query the tree cannot read is an error that says where, in the words of
// the parser materialize used before (syntax error at position N near
// 'token'), which saved reasons quote.
func parse(src string, l *lexed, d engine.Engine, phs []placeholder.Placeholder) (*parsed, error) {
	p := &parsed{index: make(map[int]int, len(phs))}
	for i, ph := range phs {
		p.names = append(p.names, ph.Name)
		p.index[ph.Start] = i
	}
	t, err := tree.Parse(d, src)
	if err != nil {
		return nil, explain(src, l, phs, err)
	}
	if err := normalize(t); err != nil {
		return nil, err
	}
	p.tree, p.stmt = t, t.Stmt
	return p, nil
}

// explain writes a parse error at the offending token: its position (one
// past its end, 1-based), line and column, and its text.
func explain(src string, l *lexed, phs []placeholder.Placeholder, err error) error {
	var te *tree.Error
	if !errors.As(err, &te) {
		return err
	}
	if errors.Is(err, tree.ErrTooDeep) {
		return fmt.Errorf("the query is nested too deeply (line %d, column %d)", te.Line, te.Column)
	}
	for _, ph := range phs {
		if ph.Start == te.Offset {
			return fmt.Errorf("syntax error at position %d (line %d, column %d) near '%s'", ph.End+1, te.Line, te.Column, src[ph.Start:ph.End])
		}
	}
	for _, t := range l.tokens {
		if t.start != te.Offset {
			continue
		}
		text := l.text(t)
		near := " near '" + text + "'"
		if t.kind == tokString {
			near = " near " + text
		}
		return fmt.Errorf("syntax error at position %d (line %d, column %d)%s", t.end+1, te.Line, te.Column, near)
	}
	if strings.TrimSpace(src[min(te.Offset, len(src)):]) == "" {
		return fmt.Errorf("syntax error at position %d (line %d, column %d)", len(src)+1, te.Line, te.Column)
	}
	return fmt.Errorf("syntax error at line %d, column %d: %s", te.Line, te.Column, te.Detail)
}

// normalize puts t's EXTRACT calls in the form the printer writes, from
// the source as written: extract(unit FROM x) becomes a call of extract
// whose keyword argument is "unit FROM", spelled as the user wrote it.
func normalize(t *tree.Tree) error {
	src := t.Src
	_, err := tree.Rewrite(t.Stmt, func(n tree.Node) tree.Node {
		switch x := n.(type) {
		case *tree.ExtractExpr:
			e, arg := x.Span(), x.Expr.Span()
			open := strings.IndexByte(src[e.Start:arg.Start], '(')
			if open < 0 {
				return n
			}
			name := strings.TrimSpace(src[e.Start : e.Start+open])
			kw := strings.TrimSpace(src[e.Start+open+1 : arg.Start])
			f := &tree.FuncExpr{Name: tree.Ident{Name: name, Raw: name}, Exprs: []tree.Expr{x.Expr}, Keywords: []string{kw}}
			return f
		}
		return n
	})
	return err
}

// placeholderOf returns e when it is a placeholder, else nil.
func placeholderOf(e tree.Expr) *tree.Placeholder {
	ph, _ := e.(*tree.Placeholder)
	return ph
}
