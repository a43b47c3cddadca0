package placeholder

import (
	"unsafe"

	"github.com/endpointkit/endpointkit/sql/engine"
)

// Template is a compiled SQL query with placeholders: compiled once when
// an endpoint is saved, rendered for each run. A Template is immutable and
// safe for concurrent use.
type Template struct {
	src   string
	stmt  Statement
	phs   []Placeholder
	inert []Placeholder
	names []string
	parts []part
	// tail is the text after the last placeholder's markers.
	tail string
	// textLen counts the text of parts and tail: what every render
	// writes besides the markers.
	textLen int
	// uses[n] counts the placeholders of name n.
	uses []int
	// firstUse[n] is the index in phs of name n's first placeholder;
	// outsideList[n] that of its first placeholder not in list position,
	// or -1.
	firstUse, outsideList []int
}

// part is the text a render writes before one placeholder's markers, and
// that placeholder. The text is the source's, plus the spaces and
// parentheses around the markers (see surround): the close of the previous
// placeholder first, the open of this one last.
type part struct {
	text string
	name int
}

// Compile scans sql (see Scan) and prepares it for rendering. It reads
// sql as no engine in particular does: backslashes escape in '...'
// literals, "..." and `...` quote names, and there are no '#' comments,
// dollar quotes or nested comments. CompileFor reads sql as its engine
// does.
func Compile(sql string) (*Template, error) { return CompileFor(anyReading, sql) }

// CompileFor is Compile reading sql as an engine with the rules lx does
// (engine.Engine's Lexical): on SQLite 'C:\' is a whole literal, on
// MySQL a '#' starts a comment, on PostgreSQL $$...$$ is a literal. A
// placeholder inside a literal or comment is text to the engine: Render
// leaves it alone, and Inert lists it.
func CompileFor(lx engine.Lexical, sql string) (*Template, error) {
	var parens []bool
	var stmt Statement
	var inert []Placeholder
	found, err := scan(lx, sql, &parens, &stmt, &inert)
	if err != nil {
		return nil, err
	}
	t := &Template{src: sql, stmt: stmt, phs: found, inert: inert, parts: make([]part, len(found))}
	index := make(map[string]int, len(found))
	prev, closing := 0, ""
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
		open, close := surround(
			f.Start > 0 && isIdentByte(sql[f.Start-1]),
			parens[i],
			f.End < len(sql) && (isIdentByte(sql[f.End]) || (i+1 < len(found) && found[i+1].Start == f.End)))
		t.parts[i] = part{text: closing + sql[prev:f.Start] + open, name: n}
		t.textLen += len(t.parts[i].text)
		prev, closing = f.End, close
	}
	t.tail = closing + sql[prev:]
	t.textLen += len(t.tail)
	return t, nil
}

// surround returns the text a render writes before and after a
// placeholder's markers: a space on a side where a marker would merge with
// a word character ("?0" is parameter 0 in SQLite, "$10" another parameter
// in PostgreSQL, "a$1" an identifier there) or with the next placeholder's
// marker, and the parentheses that a list right after IN brings.
func surround(padBefore, parens, padAfter bool) (open, close string) {
	if padBefore {
		open = " "
	}
	if parens {
		open += "("
		close = ")"
	}
	if padAfter {
		close += " "
	}
	return open, close
}

// Source returns the SQL text the template was compiled from.
func (t *Template) Source() string { return t.src }

// Inert returns the placeholders written inside string literals, quoted
// names and comments, in order: text that reads as a placeholder but that
// the engine reads as part of a literal or comment, so that no value is
// bound there. A malformed one has an empty Name and End equal to Start.
func (t *Template) Inert() []Placeholder { return t.inert }

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
	if err := t.bind(e, values, slots); err != nil {
		return "", nil, err
	}
	nargs, size := t.measure(e, slots)
	b := make([]byte, 0, size)
	args := make([]any, 0, nargs)
	numbered := e.Numbered()
	listType := e.ListType()
	for i := range t.parts {
		p := &t.parts[i]
		b = append(b, p.text...)
		s := &slots[p.name]
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
	}
	b = append(b, t.tail...)
	// b is never written again: the string shares its bytes, as
	// strings.Builder does.
	return unsafe.String(unsafe.SliceData(b), len(b)), args, nil
}

// bind fills slots with the values of the template's variables: a list
// as it is, a scalar as the engine's argument. A missing value, an empty
// list, a list outside list position or a value the engine refuses is a
// *VariableError.
func (t *Template) bind(e engine.Engine, values map[string]any, slots []slot) error {
	for n, name := range t.names {
		v, ok := values[name]
		if !ok {
			return t.varError(t.firstUse[n], ErrMissingValue, "")
		}
		s := &slots[n]
		if list, ok := v.([]string); ok {
			if len(list) == 0 {
				return t.varError(t.firstUse[n], ErrEmptyList, "")
			}
			if i := t.outsideList[n]; i >= 0 {
				return listPositionError(t.phs[i])
			}
			s.list = list
			continue
		}
		arg, typ, err := e.Arg(v)
		if err != nil {
			return t.varError(t.firstUse[n], ErrUnsupportedValue, argDetail(err))
		}
		s.arg, s.typ = arg, typ
	}
	return nil
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
