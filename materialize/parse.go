package materialize

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/xwb1989/sqlparser"
)

// parsed is a query parsed with each placeholder replaced by a bind
// variable :vN (N counts occurrences from 1).
type parsed struct {
	stmt sqlparser.Statement
	// names[N-1] is the code name of bind variable :vN.
	names []string
	// text is what the parser read; shifts maps its offsets back.
	text   string
	shifts []shift
}

// shift records that offsets of the parsed text from at on are delta bytes
// ahead of the original text.
type shift struct{ at, delta int }

// parse parses src, lexed as l, in its neutral text (see neutral.go): each
// placeholder replaced by a bind variable padded with spaces, so that
// {variables.a}0 stays two tokens, and every literal and construct of the
// engine's own syntax by a stand-in, whose original text it then puts back
// into the tree. A panic of the parser (it has some, "/*!*/" for one)
// becomes an error.
func parse(src string, l *lexed, phs []placeholder.Placeholder) (p *parsed, err error) {
	p = &parsed{}
	for _, ph := range phs {
		p.names = append(p.names, ph.Name)
	}
	var ns *standIns
	p.text, p.shifts, ns = neutralize(l, phs)
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the SQL parser failed on this query (%v)", r)
		}
	}()
	stmt, err := sqlparser.Parse(p.text)
	if err != nil {
		return nil, p.explain(src, ns, err)
	}
	if err := ns.patch(stmt); err != nil {
		return nil, err
	}
	p.stmt = stmt
	return p, nil
}

var positionRE = regexp.MustCompile(`at position (\d+)`)

var nearRE = regexp.MustCompile(`near '(.*)'$`)

var bindRE = regexp.MustCompile(`:?:v(\d+)`)

var standInRE = regexp.MustCompile(`'` + literalPrefix + `(\d+)'|CHAR\((\d{10})\)`)

// explain rewrites a parser error in terms of the original query: its
// position, and placeholders instead of bind variables.
func (p *parsed) explain(src string, ns *standIns, err error) error {
	msg := err.Error()
	if m := positionRE.FindStringSubmatchIndex(msg); m != nil {
		pos, _ := strconv.Atoi(msg[m[2]:m[3]])
		orig := p.original(pos)
		start := orig - 1
		if n := nearRE.FindStringSubmatch(msg); n != nil {
			start -= len(n[1])
		}
		line, col := lineCol(src, start)
		msg = fmt.Sprintf("%sat position %d (line %d, column %d)%s", msg[:m[0]], orig, line, col, msg[m[1]:])
	}
	msg = bindRE.ReplaceAllStringFunc(msg, func(s string) string {
		n, _ := strconv.Atoi(strings.TrimLeft(s, ":v"))
		if n >= 1 && n <= len(p.names) {
			return "{variables." + p.names[n-1] + "}"
		}
		return s
	})
	msg = standInRE.ReplaceAllStringFunc(msg, func(s string) string {
		m := standInRE.FindStringSubmatch(s)
		if n, err := strconv.Atoi(m[1]); err == nil && n < len(ns.literals) {
			return ns.literal(n)
		}
		if n, err := strconv.Atoi(m[2]); err == nil && n-castCodeBase >= 0 && n-castCodeBase < len(ns.casts) {
			return strings.TrimSpace(ns.casts[n-castCodeBase])
		}
		return s
	})
	return fmt.Errorf("%s", msg)
}

// original maps an offset of the parsed text to the original text.
func (p *parsed) original(off int) int {
	delta := 0
	for _, s := range p.shifts {
		if off < s.at {
			break
		}
		delta = s.delta
	}
	return max(0, off-delta)
}

// bindIndex returns N for the bind variable :vN or the list argument
// ::vN, or 0.
func bindIndex(e sqlparser.Expr) int {
	var text string
	switch v := e.(type) {
	case *sqlparser.SQLVal:
		if v.Type != sqlparser.ValArg {
			return 0
		}
		text = strings.TrimPrefix(string(v.Val), ":v")
	case sqlparser.ListArg:
		text = strings.TrimPrefix(string(v), "::v")
	default:
		return 0
	}
	n, err := strconv.Atoi(text)
	if err != nil {
		return 0
	}
	return n
}
