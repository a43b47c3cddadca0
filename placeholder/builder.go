package placeholder

import (
	"fmt"

	"github.com/endpointkit/endpointkit/sql/engine"
)

// Builder assembles generated SQL (insight queries, materialization
// rewrites) with bound arguments, using the same markers and argument
// conversion as Template.Render. Unlike Render, every Bind is a new
// argument, even of an equal value. The zero Builder is not usable; call
// NewBuilder.
type Builder struct {
	e    engine.Engine
	b    []byte
	args []any
	err  error
	// afterMarker: the last thing written was a marker, so text starting
	// with a word character must be set apart from it.
	afterMarker bool
}

// NewBuilder returns an empty Builder for engine e.
func NewBuilder(e engine.Engine) *Builder {
	b := &Builder{e: e}
	if e == nil {
		b.err = ErrNoEngine
	}
	return b
}

// WriteString appends SQL text as it is. It must never carry a value
// that came from a request; those go through Bind.
func (b *Builder) WriteString(s string) {
	if b.afterMarker && s != "" && isIdentByte(s[0]) {
		b.b = append(b.b, ' ')
	}
	b.afterMarker = false
	b.b = append(b.b, s...)
}

// WriteIdent appends s as a quoted identifier of the engine.
func (b *Builder) WriteIdent(s string) {
	b.WriteString(b.e.QuoteIdent(s))
}

// Bind appends a bind marker and its argument, converted as Render
// converts values. A []string appends one marker per element, separated
// by ", ", for the caller to wrap in parentheses. A value that cannot be
// bound, or an empty list, records an error that Err returns; the first
// error is kept.
func (b *Builder) Bind(v any) {
	if b.err != nil {
		return
	}
	if n := len(b.b); n > 0 && isIdentByte(b.b[n-1]) {
		b.b = append(b.b, ' ')
	}
	if list, ok := v.([]string); ok {
		if len(list) == 0 {
			b.err = fmt.Errorf("%w: Bind of an empty []string", ErrEmptyList)
			return
		}
		for k, e := range list {
			if k > 0 {
				b.b = append(b.b, ", "...)
			}
			b.args = append(b.args, e)
			b.b = b.e.Marker(b.b, len(b.args), b.e.ListType())
		}
		b.afterMarker = true
		return
	}
	arg, typ, err := b.e.Arg(v)
	if err != nil {
		b.err = fmt.Errorf("%w: Bind: %s", ErrUnsupportedValue, argDetail(err))
		return
	}
	b.args = append(b.args, arg)
	b.b = b.e.Marker(b.b, len(b.args), typ)
	b.afterMarker = true
}

// WriteTemplate appends t rendered with values: its text as it is and a
// bound argument (Bind) in place of each placeholder, numbered after the
// arguments written before it. A value missing from values records an
// error naming it, as a Bind that fails does.
func (b *Builder) WriteTemplate(t *Template, values map[string]any) {
	for _, p := range t.parts {
		b.WriteString(p.text)
		name := t.names[p.name]
		v, ok := values[name]
		if !ok && b.err == nil {
			b.err = fmt.Errorf("%w: WriteTemplate: no value of %s", ErrMissingValue, name)
		}
		b.Bind(v)
	}
	b.WriteString(t.tail)
}

// Err returns the first error of a Bind, or ErrNoEngine for a Builder of
// no engine. Check it before running SQL().
func (b *Builder) Err() error { return b.err }

// SQL returns the text written so far.
func (b *Builder) SQL() string { return string(b.b) }

// Args returns the bound arguments in marker order. The slice is the
// Builder's own; do not modify it while still building.
func (b *Builder) Args() []any { return b.args }

// Engine returns the Builder's engine.
func (b *Builder) Engine() engine.Engine { return b.e }
