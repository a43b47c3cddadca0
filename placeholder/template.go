package placeholder

import (
	"database/sql"
	"strconv"
	"strings"
)

// Template is a compiled SQL query with placeholders: compiled once when
// an endpoint is saved, rendered for each run. A Template is immutable and
// safe for concurrent use.
type Template struct {
	src   string
	stmt  Statement
	phs   []Placeholder
	names []string
	parts []part
	tail  string
	// textLen counts the literal text, padding and list parentheses
	// every render writes.
	textLen int
	// uses[n] counts the placeholders of name n.
	uses []int
	// firstUse[n] is the index in phs of name n's first placeholder;
	// outsideList[n] that of its first placeholder not in list position,
	// or -1.
	firstUse, outsideList []int
}

// part is the literal text before one placeholder, and that placeholder.
type part struct {
	text                string
	name                int
	parens              bool // a list after IN brings its own parentheses
	padBefore, padAfter bool
}

// Compile scans sql (see Scan) and prepares it for rendering.
func Compile(sql string) (*Template, error) {
	var parens []bool
	var stmt Statement
	found, err := scan(sql, &parens, &stmt)
	if err != nil {
		return nil, err
	}
	t := &Template{src: sql, stmt: stmt, phs: found, parts: make([]part, len(found))}
	index := make(map[string]int, len(found))
	prev := 0
	for i, f := range found {
		n, ok := index[f.Name]
		if !ok {
			n = len(t.names)
			index[f.Name] = n
			t.names = append(t.names, f.Name)
			t.firstUse = append(t.firstUse, i)
			t.outsideList = append(t.outsideList, -1)
			t.uses = append(t.uses, 0)
		}
		t.uses[n]++
		if !f.InList && t.outsideList[n] < 0 {
			t.outsideList[n] = i
		}
		p := part{
			text:   sql[prev:f.Start],
			name:   n,
			parens: parens[i],
			// A marker next to a word character would merge with it:
			// "?0" is parameter 0 in SQLite, "$10" another parameter in
			// PostgreSQL, "a$1" an identifier there.
			padBefore: f.Start > 0 && isIdentByte(sql[f.Start-1]),
			padAfter: f.End < len(sql) && (isIdentByte(sql[f.End]) ||
				(i+1 < len(found) && found[i+1].Start == f.End)),
		}
		t.textLen += len(p.text)
		if p.padBefore {
			t.textLen++
		}
		if p.padAfter {
			t.textLen++
		}
		if p.parens {
			t.textLen += len("()")
		}
		t.parts[i] = p
		prev = f.End
	}
	t.tail = sql[prev:]
	t.textLen += len(t.tail)
	return t, nil
}

// Source returns the SQL text the template was compiled from.
func (t *Template) Source() string { return t.src }

// Placeholders returns the template's placeholders in order of appearance.
// The slice is a copy.
func (t *Template) Placeholders() []Placeholder {
	return append([]Placeholder(nil), t.phs...)
}

// Names returns the distinct code names the template uses, in order of
// first use. The slice is a copy.
func (t *Template) Names() []string {
	return append([]string(nil), t.names...)
}

// CheckLists returns a *VariableError wrapping ErrListPosition for the
// first placeholder, in source order, whose variable is multi-valued
// (isMulti reports it by code name) but which is not in list position.
// It serves definition time, so that a bad query is refused when saved
// rather than at its first run.
func (t *Template) CheckLists(isMulti func(codeName string) bool) error {
	for _, p := range t.phs {
		if !p.InList && isMulti(p.Name) {
			return listPositionError(p)
		}
	}
	return nil
}

func listPositionError(p Placeholder) *VariableError {
	return &VariableError{Name: p.Name, Line: p.Line, Column: p.Column, Err: ErrListPosition,
		Detail: "a multi-valued list renders only as IN {variables." + p.Name + "} or IN ({variables." + p.Name + "})"}
}

// slot is one variable's value during a render.
type slot struct {
	arg    any // converted scalar argument
	chType string
	list   []string
	// first is the 1-based number of the variable's first argument once
	// written; numbered dialects reuse it.
	first int
}

// Render returns the SQL text for dialect d, with a bind marker in place
// of each placeholder, and the arguments in marker order. values holds the
// coerced values by code name: string, int64, float64, bool,
// variable.Timestamp or []string (a multi-valued List), and also other Go
// integer and float types and time.Time. Values of names the template does
// not use are ignored. A missing value, a value of another type, an empty
// list, or a list outside list position is a *VariableError naming the
// variable. A value only ever becomes an argument, never SQL text.
func (t *Template) Render(d Dialect, values map[string]any) (string, []any, error) {
	if !d.valid() {
		return "", nil, ErrUnknownDialect
	}
	var stack [8]slot
	var slots []slot
	if len(t.names) <= len(stack) {
		slots = stack[:len(t.names)]
	} else {
		slots = make([]slot, len(t.names))
	}
	for n, name := range t.names {
		v, ok := values[name]
		if !ok {
			return "", nil, t.varError(t.firstUse[n], ErrMissingValue, "")
		}
		s := &slots[n]
		if list, ok := v.([]string); ok {
			if len(list) == 0 {
				return "", nil, t.varError(t.firstUse[n], ErrEmptyList, "")
			}
			if i := t.outsideList[n]; i >= 0 {
				return "", nil, listPositionError(t.phs[i])
			}
			s.list = list
			continue
		}
		arg, chType, detail := d.convert(v)
		if detail != "" {
			return "", nil, t.varError(t.firstUse[n], ErrUnsupportedValue, detail)
		}
		s.arg, s.chType = arg, chType
	}

	nargs, size := t.measure(d, slots)
	var b strings.Builder
	b.Grow(size)
	args := make([]any, 0, nargs)
	numbered := d.numbered()
	for i := range t.parts {
		p := &t.parts[i]
		b.WriteString(p.text)
		if p.padBefore {
			b.WriteByte(' ')
		}
		s := &slots[p.name]
		if p.parens {
			b.WriteByte('(')
		}
		switch {
		case numbered && s.first > 0:
			count := 1
			if s.list != nil {
				count = len(s.list)
			}
			for k := 0; k < count; k++ {
				if k > 0 {
					b.WriteString(", ")
				}
				chType := s.chType
				if s.list != nil {
					chType = "String"
				}
				d.writeMarker(&b, s.first+k, chType)
			}
		case s.list != nil:
			s.first = len(args) + 1
			for k, e := range s.list {
				if k > 0 {
					b.WriteString(", ")
				}
				args = d.appendArg(args, e)
				d.writeMarker(&b, len(args), "String")
			}
		default:
			s.first = len(args) + 1
			args = d.appendArg(args, s.arg)
			d.writeMarker(&b, len(args), s.chType)
		}
		if p.parens {
			b.WriteByte(')')
		}
		if p.padAfter {
			b.WriteByte(' ')
		}
	}
	b.WriteString(t.tail)
	return b.String(), args, nil
}

// measure returns the number of arguments a render makes and an upper
// bound of its text length, so that both are allocated once. It works per
// variable, from counts made at compile time, not per placeholder.
func (t *Template) measure(d Dialect, slots []slot) (nargs, size int) {
	numbered := d.numbered()
	for n := range slots {
		elems := 1
		if slots[n].list != nil {
			elems = len(slots[n].list)
		}
		if numbered {
			nargs += elems
		} else {
			nargs += elems * t.uses[n]
		}
	}
	digits := len(strconv.Itoa(nargs))
	size = t.textLen
	for n := range slots {
		s := &slots[n]
		elems, chType := 1, s.chType
		if s.list != nil {
			elems, chType = len(s.list), "String"
		}
		marker := 1
		switch d.kind {
		case kindPostgreSQL:
			marker = 1 + digits
		case kindClickHouse:
			marker = len("{p:}") + digits + len(chType)
		}
		size += t.uses[n] * (elems*marker + (elems-1)*len(", "))
	}
	return nargs, size
}

func (t *Template) varError(ph int, err error, detail string) *VariableError {
	p := t.phs[ph]
	return &VariableError{Name: p.Name, Line: p.Line, Column: p.Column, Err: err, Detail: detail}
}

// writeMarker writes the bind marker of argument n (1-based).
func (d Dialect) writeMarker(b *strings.Builder, n int, chType string) {
	var buf [20]byte
	switch d.kind {
	case kindPostgreSQL:
		b.WriteByte('$')
		b.Write(strconv.AppendInt(buf[:0], int64(n), 10))
	case kindClickHouse:
		b.WriteString("{p")
		b.Write(strconv.AppendInt(buf[:0], int64(n), 10))
		b.WriteByte(':')
		b.WriteString(chType)
		b.WriteByte('}')
	default:
		b.WriteByte('?')
	}
}

// appendArg appends a converted argument, named on ClickHouse.
func (d Dialect) appendArg(args []any, v any) []any {
	if d.kind == kindClickHouse {
		return append(args, sql.NamedArg{Name: "p" + strconv.Itoa(len(args)+1), Value: v})
	}
	return append(args, v)
}
