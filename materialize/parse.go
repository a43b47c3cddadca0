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

// parse replaces each placeholder by a bind variable padded with spaces,
// so that {variables.a}0 stays two tokens, and parses the result. A panic
// of the parser (it has some, "/*!*/" for one) becomes an error.
func parse(src string, phs []placeholder.Placeholder) (p *parsed, err error) {
	var b strings.Builder
	p = &parsed{}
	last := 0
	for i, ph := range phs {
		b.WriteString(src[last:ph.Start])
		bind := fmt.Sprintf(" :v%d ", i+1)
		if ph.InList && !strings.HasSuffix(strings.TrimRight(src[:ph.Start], " \t\r\n"), "(") {
			// expr IN {variables.x}: the grammar takes a list argument
			// there, not a value.
			bind = fmt.Sprintf(" ::v%d ", i+1)
		}
		b.WriteString(bind)
		p.names = append(p.names, ph.Name)
		p.shifts = append(p.shifts, shift{at: b.Len(), delta: b.Len() - ph.End})
		last = ph.End
	}
	b.WriteString(src[last:])
	p.text = b.String()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the SQL parser failed on this query (%v)", r)
		}
	}()
	stmt, err := sqlparser.Parse(p.text)
	if err != nil {
		return nil, p.explain(src, err)
	}
	p.stmt = stmt
	return p, nil
}

var positionRE = regexp.MustCompile(`at position (\d+)`)

var nearRE = regexp.MustCompile(`near '(.*)'$`)

var bindRE = regexp.MustCompile(`:?:v(\d+)`)

// explain rewrites a parser error in terms of the original query: its
// position, and placeholders instead of bind variables.
func (p *parsed) explain(src string, err error) error {
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
