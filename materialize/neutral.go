package materialize

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/xwb1989/sqlparser"
)

// Stand-ins
//
// The parser reads MySQL's grammar of 2018, and decodes what it reads the
// MySQL way. Neither may decide what a query means on its own engine, so
// the parser never reads the user's literals nor the engine syntax it does
// not know. Before parsing, spans of the original text are replaced by
// stand-ins, neutral text the grammar reads as a node of the right kind and
// place, and each stand-in remembers the original text of its span:
//
//   - every string literal (and MySQL's double-quoted string) becomes
//     '__ekS<i>', a string of the parser's (a quote never closed is left
//     for the parser to refuse);
//   - every cast type, CAST(x AS double precision), CAST(x, 'String') and
//     PostgreSQL's and ClickHouse's x::T (whose operand x is found on the
//     tokens: a name, a literal, a call, a parenthesized expression), becomes
//     CAST(x AS CHAR(<code>)), x being read by the parser as ever;
//   - extract(minute FROM x) becomes extract('__ekS<i>', x);
//   - the operators the grammar lacks or reads otherwise (ILIKE; ->, ->>
//     and || where || concatenates) become REGEXP and ^, operators of the
//     same place in the grammar, and each REGEXP and ^ of the parsed tree
//     takes back, in source order, the operator its place held;
//   - double-quoted names, where they are names, become backquoted ones.
//
// After parsing, patch puts the original text back into the tree (a literal
// is an SQLVal of type srcString holding its source bytes, a cast type a
// ConvertType of operator rawCast holding the source from AS or :: to the
// end of the type), and the printer prints it byte for byte. A stand-in the
// tree does not give back where expected is a reason the query cannot be
// read faithfully, never a guess.

// Types of the SQLVal literals patch leaves in the tree, beyond the
// parser's own: the Val of both is original source text.
const (
	// srcString is a string literal: its source bytes, quotes included.
	srcString sqlparser.ValType = 100 + iota
	// srcKeyword is the leading keyword part of a call's arguments, as
	// "minute FROM" in extract(minute FROM x): printed, then a space.
	srcKeyword
)

// The Operators of a ConvertType patch makes raw: its Type is the source
// text from the CAST's AS (or comma) to the type's end, or from :: on.
const (
	rawCast      = "\x00cast"
	rawColonCast = "\x00::"
)

// literalPrefix starts the content of a literal's stand-in.
const literalPrefix = "__ekS"

// castCodeBase is added to the index of a cast's stand-in, the length of
// the CHAR type the parser reads in its place.
const castCodeBase = 1 << 30

// standIns are the stand-ins of one query, by index.
type standIns struct {
	src string
	// literals: the source span of each literal stand-in; keyword[i] when
	// it stands for a call's keyword argument.
	literals [][2]int
	keyword  []bool
	// buf is src as bytes, made once, that patched literals' Val share.
	buf []byte
	// casts: source text from AS, the comma or :: to the type's end.
	casts []string
	colon []bool
	// ops: the operator each REGEXP (regexps) and ^ (carets) of the
	// neutral text stood for, in source order.
	regexps []string
	carets  []string
}

// literal returns the source text of literal stand-in i.
func (ns *standIns) literal(i int) string {
	return ns.src[ns.literals[i][0]:ns.literals[i][1]]
}

// edit replaces src[start:end] with text; start == end inserts.
type edit struct {
	start, end int
	// text, then num in decimal unless negative, then tail: no string is
	// formatted per edit.
	text, tail string
	num        int
	seq        int // creation order, for insertions at one place
}

// neutralizer builds the neutral text of one query.
type neutralizer struct {
	l        *lexed
	pipesOr  bool
	dquote   bool // "..." is a string
	edits    []edit
	consumed []bool // tokens inside a cast's type
	// composite maps the last token of a cast to its first: a cast is an
	// operand of the casts and operators after it.
	composite map[int]int
	ns        *standIns
}

// neutralize returns the text the parser reads for src and its stand-ins,
// placeholders becoming bind variables (see parse), and the shifts that map
// offsets of the text back to src.
func neutralize(l *lexed, phs []placeholder.Placeholder) (string, []shift, *standIns) {
	lx := l.lx
	n := &neutralizer{l: l, pipesOr: lx.PipesOr, dquote: lx.DoubleQuoteStrings,
		consumed: make([]bool, len(l.tokens)), ns: &standIns{src: l.src},
		edits: make([]edit, 0, len(phs)+len(l.tokens)/4)}
	for i := 0; i < len(l.tokens); i++ {
		switch {
		case l.word(l.tokens[i], "cast") && n.punctAt(i+1, "("):
			n.castCall(i)
		case l.punct(l.tokens[i], "::"):
			n.colonCast(i)
		}
	}
	for i, t := range l.tokens {
		if n.consumed[i] || t.open {
			continue // a quote never closed is the parser's error to report
		}
		switch {
		case t.kind == tokString || t.kind == tokDQuote && n.dquote:
			n.literal(i)
		case t.kind == tokDQuote:
			name := strings.ReplaceAll(l.src[t.start+1:t.end-1], `""`, `"`)
			n.add(t.start, t.end, "`"+strings.ReplaceAll(name, "`", "``")+"`")
		case l.word(t, "extract") && n.punctAt(i+1, "(") && i+3 < len(l.tokens) &&
			l.tokens[i+2].kind == tokWord && l.word(l.tokens[i+3], "from"):
			k := len(n.ns.literals)
			n.ns.literals = append(n.ns.literals, [2]int{l.tokens[i+2].start, l.tokens[i+3].end})
			n.ns.keyword = append(n.ns.keyword, true)
			n.addNum(l.tokens[i+2].start, l.tokens[i+3].end, "'"+literalPrefix, k, "',")
			n.consumed[i+2], n.consumed[i+3] = true, true
		case l.word(t, "ilike"):
			n.ns.regexps = append(n.ns.regexps, "ilike")
			n.add(t.start, t.end, "REGEXP")
		case l.word(t, "regexp") || l.word(t, "rlike"):
			n.ns.regexps = append(n.ns.regexps, "regexp")
		case l.punct(t, "->") || l.punct(t, "->>") || l.punct(t, "||") && !n.pipesOr:
			n.ns.carets = append(n.ns.carets, l.text(t))
			n.add(t.start, t.end, " ^ ")
		case l.punct(t, "^"):
			n.ns.carets = append(n.ns.carets, "^")
		}
	}
	for i, ph := range phs {
		bind := " :v"
		if ph.InList && !strings.HasSuffix(strings.TrimRight(l.src[:ph.Start], " \t\r\n"), "(") {
			// expr IN {variables.x}: the grammar takes a list argument
			// there, not a value.
			bind = " ::v"
		}
		n.addNum(ph.Start, ph.End, bind, i+1, " ")
	}
	text, shifts := n.apply()
	return text, shifts, n.ns
}

// add records an edit.
func (n *neutralizer) add(start, end int, text string) {
	n.edits = append(n.edits, edit{start: start, end: end, text: text, num: -1, seq: len(n.edits)})
}

// addNum records an edit writing text, num and tail.
func (n *neutralizer) addNum(start, end int, text string, num int, tail string) {
	n.edits = append(n.edits, edit{start: start, end: end, text: text, num: num, tail: tail, seq: len(n.edits)})
}

func (n *neutralizer) punctAt(i int, p string) bool {
	return i >= 0 && i < len(n.l.tokens) && n.l.punct(n.l.tokens[i], p)
}

// literal replaces the string token i, with a prefix word written against
// it (E'..', N'..', X'..', _utf8'..'), by a literal stand-in.
func (n *neutralizer) literal(i int) {
	l := n.l
	start, end := l.tokens[i].start, l.tokens[i].end
	if i > 0 && l.tokens[i-1].kind == tokWord && l.tokens[i-1].end == start && !n.consumed[i-1] && isPrefixWord(l.text(l.tokens[i-1])) {
		start = l.tokens[i-1].start
	}
	k := len(n.ns.literals)
	n.ns.literals = append(n.ns.literals, [2]int{start, end})
	n.ns.keyword = append(n.ns.keyword, false)
	// Spaces keep the stand-in one token, as the literal was, beside
	// another ('a''b' is one string, 'a' 'b' two).
	n.addNum(start, end, " '"+literalPrefix, k, "' ")
}

// isPrefixWord reports whether w can prefix a string literal: E, N, X, B,
// U&'s U is not a word alone, and character set introducers (_utf8mb4).
func isPrefixWord(w string) bool {
	switch strings.ToLower(w) {
	case "e", "n", "x", "b":
		return true
	}
	return strings.HasPrefix(w, "_")
}

// castCall replaces the type of CAST(x AS type) or CAST(x, 'type') at
// token i by a stand-in.
func (n *neutralizer) castCall(i int) {
	l := n.l
	closing := n.matching(i + 1)
	if closing < 0 {
		return
	}
	sep := -1
	depth := 0
	for j := i + 2; j < closing; j++ {
		t := l.tokens[j]
		switch {
		case l.punct(t, "("):
			depth++
		case l.punct(t, ")"):
			depth--
		case depth == 0 && (l.word(t, "as") || l.punct(t, ",")):
			sep = j
		}
	}
	if sep < 0 || sep+1 >= closing {
		return
	}
	k := n.addCast(l.src[l.tokens[sep].start:l.tokens[closing-1].end], false)
	n.addNum(l.tokens[sep].start, l.tokens[closing].start, " AS CHAR(", castCodeBase+k, ")")
	for j := sep; j < closing; j++ {
		n.consumed[j] = true
	}
}

// colonCast replaces x::type, the :: at token i, by CAST(x AS stand-in),
// when it finds the operand and the type on the tokens.
func (n *neutralizer) colonCast(i int) {
	l := n.l
	start := n.operandStart(i - 1)
	end := n.typeEnd(i + 1)
	if start < 0 || end < 0 {
		return
	}
	k := n.addCast(l.src[l.tokens[i].start:l.tokens[end].end], true)
	n.add(l.tokens[start].start, l.tokens[start].start, "CAST(")
	n.addNum(l.tokens[i].start, l.tokens[end].end, " AS CHAR(", castCodeBase+k, "))")
	for j := i; j <= end; j++ {
		n.consumed[j] = true
	}
	if n.composite == nil {
		n.composite = map[int]int{}
	}
	n.composite[end] = start
}

func (n *neutralizer) addCast(text string, colon bool) int {
	n.ns.casts = append(n.ns.casts, text)
	n.ns.colon = append(n.ns.colon, colon)
	return len(n.ns.casts) - 1
}

// operandStart returns the first token of the primary expression that ends
// at token j (a name, qualified or quoted, a literal, a number, a
// placeholder, a call, a parenthesized expression, a cast), or -1.
func (n *neutralizer) operandStart(j int) int {
	l := n.l
	if j < 0 {
		return -1
	}
	if s, ok := n.composite[j]; ok {
		return s
	}
	t := l.tokens[j]
	switch {
	case l.punct(t, ")"):
		m := n.matchingBack(j, "(", ")")
		if m < 0 {
			return -1
		}
		if m > 0 && l.tokens[m-1].kind == tokWord && !isOperatorWord(l.text(l.tokens[m-1])) {
			return n.qualified(m - 1)
		}
		return m
	case l.punct(t, "}"):
		return n.matchingBack(j, "{", "}")
	case l.punct(t, "]"):
		m := n.matchingBack(j, "[", "]")
		if m < 0 {
			return -1
		}
		if s := n.operandStart(m - 1); s >= 0 {
			return s
		}
		return m
	case t.kind == tokString:
		if j > 0 && l.tokens[j-1].kind == tokWord && l.tokens[j-1].end == t.start && isPrefixWord(l.text(l.tokens[j-1])) {
			return j - 1
		}
		return j
	case t.kind == tokWord && !isOperatorWord(l.text(t)) || t.kind == tokDQuote || t.kind == tokBacktick:
		return n.qualified(j)
	}
	return -1
}

// qualified extends the name at token j back over qualifiers (a.b.c).
func (n *neutralizer) qualified(j int) int {
	l := n.l
	for j >= 2 && l.punct(l.tokens[j-1], ".") && (l.tokens[j-2].kind == tokWord || l.tokens[j-2].kind == tokDQuote || l.tokens[j-2].kind == tokBacktick) {
		j -= 2
	}
	return j
}

// typeWords are the words that continue a type name after its first:
// double precision, character varying, timestamp with time zone.
var typeWords = setOf("precision", "varying", "with", "without", "time", "zone", "unsigned", "signed")

// typeEnd returns the last token of the type name starting at token i,
// or -1.
func (n *neutralizer) typeEnd(i int) int {
	l := n.l
	if i >= len(l.tokens) || l.tokens[i].kind != tokWord && l.tokens[i].kind != tokDQuote {
		return -1
	}
	end := i
	for j := i + 1; j < len(l.tokens); j = end + 1 {
		t := l.tokens[j]
		switch {
		case t.kind == tokWord && typeWords[strings.ToLower(l.text(t))]:
			end = j
		case l.punct(t, "(") && end == j-1:
			m := n.matching(j)
			if m < 0 {
				return end
			}
			end = m
		case l.punct(t, "[") && n.punctAt(j+1, "]"):
			end = j + 1
		default:
			return end
		}
	}
	return end
}

// matching returns the index of the ) that closes the ( at token i, or -1.
func (n *neutralizer) matching(i int) int {
	depth := 0
	for j := i; j < len(n.l.tokens); j++ {
		switch {
		case n.l.punct(n.l.tokens[j], "("):
			depth++
		case n.l.punct(n.l.tokens[j], ")"):
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// matchingBack returns the index of the open that the close at token j
// closes, or -1.
func (n *neutralizer) matchingBack(j int, open, close string) int {
	depth := 0
	for k := j; k >= 0; k-- {
		switch {
		case n.l.punct(n.l.tokens[k], close):
			depth++
		case n.l.punct(n.l.tokens[k], open):
			depth--
			if depth == 0 {
				return k
			}
		}
	}
	return -1
}

// isOperatorWord reports whether w is a keyword that precedes a
// parenthesis without calling it (IN (...), AND (...)).
func isOperatorWord(w string) bool {
	return operatorWords[strings.ToLower(w)]
}

var operatorWords = setOf("and", "or", "not", "in", "is", "select", "where", "on", "when", "then", "else",
	"as", "exists", "values", "by", "from", "like", "ilike", "regexp", "rlike", "between", "case", "having",
	"join", "using", "distinct", "all", "any", "some", "union", "limit", "offset", "return", "end")

// apply returns the text with every edit made, and the shifts.
func (n *neutralizer) apply() (string, []shift) {
	edits := n.edits
	sort.SliceStable(edits, func(a, b int) bool {
		x, y := edits[a], edits[b]
		if x.start != y.start {
			return x.start < y.start
		}
		xi, yi := x.start == x.end, y.start == y.end
		if xi != yi {
			return xi // insertions first
		}
		return x.seq > y.seq // the outer (later) insertion first
	})
	var b strings.Builder
	b.Grow(len(n.l.src) + 16*len(edits))
	var shifts []shift
	last := 0
	for _, e := range edits {
		if e.start < last {
			continue // inside an edit already made; cannot happen
		}
		b.WriteString(n.l.src[last:e.start])
		b.WriteString(e.text)
		if e.num >= 0 {
			var digits [20]byte
			b.Write(strconv.AppendInt(digits[:0], int64(e.num), 10))
			b.WriteString(e.tail)
		}
		last = e.end
		shifts = append(shifts, shift{at: b.Len(), delta: b.Len() - e.end})
	}
	b.WriteString(n.l.src[last:])
	return b.String(), shifts
}

// patch puts the original text of every stand-in back into the parsed
// tree. It fails when the tree does not give back each operator stand-in
// exactly once, in source order.
func (ns *standIns) patch(stmt sqlparser.SQLNode) error {
	p := patcher{ns: ns}
	_ = sqlparser.Walk(func(n sqlparser.SQLNode) (bool, error) {
		p.node(n)
		return p.err == nil, nil
	}, stmt)
	if p.err == nil && len(ns.regexps)+len(ns.carets) > 0 {
		p.operators(stmt)
	}
	switch {
	case p.err != nil:
		return p.err
	case p.regexps != len(ns.regexps) || p.carets != len(ns.carets):
		return fmt.Errorf("the operators of the query are not where the parser put them")
	case p.literals != len(ns.literals):
		// A literal went into something else than a value or a name
		// (MySQL's @'name', a character set): what it means there is
		// the parser's reading, not the engine's.
		return fmt.Errorf("the parser reads a string literal of this query as something else than a value")
	}
	return nil
}

type patcher struct {
	ns                        *standIns
	regexps, carets, literals int
	err                       error
}

func (p *patcher) fail(format string, args ...any) {
	if p.err == nil {
		p.err = fmt.Errorf(format, args...)
	}
}

// node puts back the literals, cast types and names of one node.
func (p *patcher) node(n sqlparser.SQLNode) {
	switch x := n.(type) {
	case *sqlparser.SQLVal:
		if x != nil && x.Type == sqlparser.StrVal {
			p.literal(x)
		}
	case *sqlparser.ConvertExpr:
		if x != nil && x.Type != nil {
			p.cast(x.Type)
		}
	case *sqlparser.AliasedExpr:
		if x != nil && p.literalIndex(x.As.String()) >= 0 {
			x.As = sqlparser.NewColIdent(p.name(x.As.String()))
		}
	case *sqlparser.AliasedTableExpr:
		if x != nil && p.literalIndex(x.As.String()) >= 0 {
			x.As = sqlparser.NewTableIdent(p.name(x.As.String()))
		}
	}
}

// operators puts back the operators of n and its subtree, visiting them in
// source order: the left operand, the operator, the right one.
func (p *patcher) operators(n sqlparser.SQLNode) {
	if p.err != nil {
		return
	}
	switch x := n.(type) {
	case nil, *sqlparser.SQLVal, *sqlparser.ColName:
		return
	case *sqlparser.ComparisonExpr:
		if x == nil {
			return
		}
		p.operators(x.Left)
		if op, ok := strings.CutSuffix(x.Operator, sqlparser.RegexpStr); ok {
			if p.regexps >= len(p.ns.regexps) {
				p.fail("the query has more REGEXP operators than it was read with")
				return
			}
			x.Operator = op + p.ns.regexps[p.regexps]
			p.regexps++
		}
		p.operators(x.Right)
		if x.Escape != nil {
			p.operators(x.Escape)
		}
		return
	case *sqlparser.BinaryExpr:
		if x == nil {
			return
		}
		p.operators(x.Left)
		if x.Operator == sqlparser.BitXorStr {
			if p.carets >= len(p.ns.carets) {
				p.fail("the query has more ^ operators than it was read with")
				return
			}
			x.Operator = p.ns.carets[p.carets]
			p.carets++
		}
		p.operators(x.Right)
		return
	}
	for _, c := range children(n) {
		p.operators(c)
	}
}

// literalIndex returns i for the stand-in content __ekS<i>, or -1.
func (p *patcher) literalIndex(s string) int {
	rest, ok := strings.CutPrefix(s, literalPrefix)
	if !ok {
		return -1
	}
	i, err := strconv.Atoi(rest)
	if err != nil || i < 0 || i >= len(p.ns.literals) {
		return -1
	}
	return i
}

func (p *patcher) literal(v *sqlparser.SQLVal) {
	i := p.literalIndex(string(v.Val))
	if i < 0 {
		p.fail("a string the query was not read with")
		return
	}
	p.literals++
	if p.ns.buf == nil {
		p.ns.buf = []byte(p.ns.src)
	}
	span := p.ns.literals[i]
	v.Val = p.ns.buf[span[0]:span[1]:span[1]]
	v.Type = srcString
	if p.ns.keyword[i] {
		v.Type = srcKeyword
	}
}

// name returns a name that a string literal stood for (SELECT x AS 'n'),
// decoded, or s itself.
func (p *patcher) name(s string) string {
	if i := p.literalIndex(s); i >= 0 {
		p.literals++
		if v, ok := stringContent(p.ns.literal(i)); ok {
			return v
		}
		p.fail("the name %s", p.ns.literal(i))
	}
	return s
}

func (p *patcher) cast(t *sqlparser.ConvertType) {
	if t.Type != "char" || t.Length == nil {
		return
	}
	code, err := strconv.Atoi(string(t.Length.Val))
	if err != nil || code < castCodeBase {
		return
	}
	i := code - castCodeBase
	if i >= len(p.ns.casts) {
		p.fail("a cast the query was not read with")
		return
	}
	t.Type, t.Length, t.Scale, t.Charset = p.ns.casts[i], nil, nil, ""
	t.Operator = rawCast
	if p.ns.colon[i] {
		t.Operator = rawColonCast
	}
}

// stringContent returns the value of a string literal's source text when
// it needs no decoding beyond doubled quotes (no backslash, no prefix), for
// the few places the analysis reads a literal's value ('now', 'UTC', a
// date_trunc unit).
func stringContent(src string) (string, bool) {
	if len(src) < 2 || src[0] != src[len(src)-1] || src[0] != '\'' && src[0] != '"' || strings.ContainsRune(src, '\\') {
		return "", false
	}
	q := src[:1]
	return strings.ReplaceAll(src[1:len(src)-1], q+q, q), true
}

// stringLit returns the value of e when it is a string literal that needs
// no decoding (see stringContent).
func stringLit(e sqlparser.Expr) (string, bool) {
	v, ok := e.(*sqlparser.SQLVal)
	if !ok {
		return "", false
	}
	switch v.Type {
	case sqlparser.StrVal:
		return string(v.Val), true
	case srcString:
		return stringContent(string(v.Val))
	}
	return "", false
}
