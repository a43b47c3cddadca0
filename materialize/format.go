package materialize

import (
	"strings"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/tree"
)

// printer prints the parts of a query that a plan's statements are built
// from in the normal form of sql/tree (tree.Normal): the one printer of
// the library, in the mode that writes every name quoted for the dialect,
// every keyword and operator in one spelling and every literal and cast
// type byte for byte as the user wrote it (see normalize). The statements
// a plan runs are assembled from these parts and the generated columns of
// the stored table. What it prints accumulates in b; the first error
// stays in err.
type printer struct {
	d engine.Engine
	// hook, when set, may print an expression in place of the printer.
	hook func(e tree.Expr) (text string, ok bool, err error)
	b    strings.Builder
	err  error
}

// unsupportedError is a construct the printer cannot write faithfully.
type unsupportedError struct{ what string }

func (e *unsupportedError) Error() string { return e.what + " is not supported" }

func (p *printer) normal() tree.Normal { return tree.Normal{Engine: p.d, Hook: p.hook} }

// unsupported turns the normal form's refusal into an *unsupportedError.
func unsupported(err error) error {
	if te, ok := err.(*tree.Error); ok && te.Err == tree.ErrUnprintable {
		return &unsupportedError{te.Detail}
	}
	return err
}

func (p *printer) add(s string, err error) {
	if p.err != nil {
		return
	}
	p.b.WriteString(s)
	p.err = unsupported(err)
}

// exprString prints e alone with the settings of p.
func (p *printer) exprString(e tree.Expr) (string, error) {
	s, err := p.normal().Expr(e)
	return s, unsupported(err)
}

// selectStatement prints a whole query.
func (p *printer) selectStatement(s tree.SelectStatement) { p.add(p.normal().Statement(s)) }

// from prints the FROM clause of a query.
func (p *printer) from(from []tree.TableExpr) { p.add(p.normal().From(from)) }

// limit prints the LIMIT clause of a query.
func (p *printer) limit(l *tree.Limit) { p.add(p.normal().Limit(l)) }

// checkSelectOptions refuses the clauses of a SELECT the rewrite does not
// carry over.
func (p *printer) checkSelectOptions(s *tree.Select) {
	if p.err == nil {
		p.err = unsupported(p.normal().Clauses(s))
	}
}

// canonical returns the canonical text of e, for comparing expressions.
func canonical(e tree.Expr) string { return tree.Canonical(e) }

// direction is an ORDER BY term's direction, ASC when none is written.
func direction(o *tree.Order) string { return tree.Direction(o) }

// nodeName names a node for messages in a user's words: *tree.IndexExpr
// is "index expression" (tree.NodeWords).
func nodeName(n any) string { return tree.NodeWords(n) }

// joinWord is the spelling of each join the printer writes.
var joinWord = tree.NormalJoins()
