package tree

// The parser allocates the nodes it makes most often (names, literals,
// calls, comparisons, arithmetic, SELECT items) and the lists of
// expressions from chunks, so that reading a query costs a few
// allocations per chunk rather than one per node: a save reads every
// query it checks and confines (issue 37 asks it to cost no more than
// before the tree).

// slab hands out zeroed values of T from chunks that grow from 4 to 64.
type slab[T any] struct {
	buf  []T
	last int
}

func (s *slab[T]) alloc() *T {
	if len(s.buf) == 0 {
		s.last = min(max(4, 2*s.last), 64)
		s.buf = make([]T, s.last)
	}
	x := &s.buf[0]
	s.buf = s.buf[1:]
	return x
}

// arenas holds the parser's slabs and its lists of expressions.
type arenas struct {
	cols  slab[ColName]
	lits  slab[Literal]
	funcs slab[FuncExpr]
	cmps  slab[ComparisonExpr]
	bins  slab[BinaryExpr]
	items slab[AliasedExpr]
	ands  slab[AndExpr]
	// stack holds the expressions of the lists being read, innermost last;
	// exprs is the chunk finished lists are copied into.
	stack []Expr
	exprs []Expr
	names []Ident
}

// list returns the expressions pushed on the stack since base, copied
// into the chunk (its capacity its length, so that an append by a caller
// copies it), and pops them.
func (a *arenas) list(base int) []Expr {
	n := len(a.stack) - base
	if n == 0 {
		return nil
	}
	if len(a.exprs) < n {
		a.exprs = make([]Expr, max(64, n))
	}
	out := a.exprs[:n:n]
	a.exprs = a.exprs[n:]
	copy(out, a.stack[base:])
	clear(a.stack[base:])
	a.stack = a.stack[:base]
	return out
}

// idents returns ids copied into the chunk of names.
func (a *arenas) idents(ids []Ident) []Ident {
	n := len(ids)
	if len(a.names) < n {
		a.names = make([]Ident, max(32, n))
	}
	out := a.names[:n:n]
	a.names = a.names[n:]
	copy(out, ids)
	return out
}
