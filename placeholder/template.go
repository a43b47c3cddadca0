package placeholder

import (
	"unsafe"

	"github.com/endpointkit/endpointkit/endpoint/engine"
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
	arg  any    // converted scalar argument
	typ  string // its parameter type, on engines with typed markers
	list []string
	// first is the 1-based number of the variable's first argument once
	// written; engines with numbered markers reuse it.
	first int
}

// Render returns the SQL text for engine e, with a bind marker in place
// of each placeholder, and the arguments in marker order. values holds the
// coerced values by code name: string, int64, float64, bool,
// variable.Timestamp or []string (a multi-valued List), and also other Go
// integer and float types and time.Time. Values of names the template does
// not use are ignored. A missing value, a value of another type, an empty
// list, or a list outside list position is a *VariableError naming the
// variable. A value only ever becomes an argument, never SQL text.
func (t *Template) Render(e engine.Engine, values map[string]any) (string, []any, error) {
	if e == nil {
		return "", nil, ErrNoEngine
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
		arg, typ, err := e.Arg(v)
		if err != nil {
			return "", nil, t.varError(t.firstUse[n], ErrUnsupportedValue, argDetail(err))
		}
		s.arg, s.typ = arg, typ
	}

	nargs, size := t.measure(e, slots)
	b := make([]byte, 0, size)
	args := make([]any, 0, nargs)
	numbered := e.Numbered()
	listType := e.ListType()
	for i := range t.parts {
		p := &t.parts[i]
		b = append(b, p.text...)
		if p.padBefore {
			b = append(b, ' ')
		}
		s := &slots[p.name]
		if p.parens {
			b = append(b, '(')
		}
		switch {
		case numbered && s.first > 0:
			count, typ := 1, s.typ
			if s.list != nil {
				count, typ = len(s.list), listType
			}
			for k := 0; k < count; k++ {
				if k > 0 {
					b = append(b, ", "...)
				}
				b = e.Marker(b, s.first+k, typ)
			}
		case s.list != nil:
			s.first = len(args) + 1
			for k, v := range s.list {
				if k > 0 {
					b = append(b, ", "...)
				}
				args = append(args, v)
				b = e.Marker(b, len(args), listType)
			}
		default:
			s.first = len(args) + 1
			args = append(args, s.arg)
			b = e.Marker(b, len(args), s.typ)
		}
		if p.parens {
			b = append(b, ')')
		}
		if p.padAfter {
			b = append(b, ' ')
		}
	}
	b = append(b, t.tail...)
	// b is never written again: the string shares its bytes, as
	// strings.Builder does.
	return unsafe.String(unsafe.SliceData(b), len(b)), args, nil
}

// measure returns the number of arguments a render makes and an upper
// bound of its text length, so that both are allocated once. It works per
// variable, from counts made at compile time, not per placeholder.
func (t *Template) measure(e engine.Engine, slots []slot) (nargs, size int) {
	numbered := e.Numbered()
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
	size = t.textLen
	for n := range slots {
		s := &slots[n]
		elems, typ := 1, s.typ
		if s.list != nil {
			elems, typ = len(s.list), e.ListType()
		}
		marker := e.MarkerLen(nargs, typ)
		size += t.uses[n] * (elems*marker + (elems-1)*len(", "))
	}
	return nargs, size
}

func (t *Template) varError(ph int, err error, detail string) *VariableError {
	p := t.phs[ph]
	return &VariableError{Name: p.Name, Line: p.Line, Column: p.Column, Err: err, Detail: detail}
}

// argDetail is the detail of an engine's refusal of a value.
func argDetail(err error) string {
	if ae, ok := err.(*engine.ArgError); ok {
		return ae.Detail
	}
	return err.Error()
}
