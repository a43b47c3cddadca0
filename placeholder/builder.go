package placeholder

import (
	"fmt"
	"strings"
)

// Builder assembles generated SQL (insight queries, materialization
// rewrites) with bound arguments, using the same markers and argument
// conversion as Template.Render. Unlike Render, every Bind is a new
// argument, even of an equal value. The zero Builder is not usable; call
// NewBuilder.
type Builder struct {
	d    Dialect
	b    strings.Builder
	args []any
	err  error
	// afterMarker: the last thing written was a marker, so text starting
	// with a word character must be set apart from it.
	afterMarker bool
}

// NewBuilder returns an empty Builder for dialect d.
func NewBuilder(d Dialect) *Builder {
	b := &Builder{d: d}
	if !d.valid() {
		b.err = ErrUnknownDialect
	}
	return b
}

// WriteString appends SQL text as it is. It must never carry a value
// that came from a request; those go through Bind.
func (b *Builder) WriteString(s string) {
	if b.afterMarker && s != "" && isIdentByte(s[0]) {
		b.b.WriteByte(' ')
	}
	b.afterMarker = false
	b.b.WriteString(s)
}

// WriteIdent appends s as a quoted identifier of the dialect.
func (b *Builder) WriteIdent(s string) {
	b.WriteString(b.d.QuoteIdent(s))
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
	if s := b.b.String(); s != "" && isIdentByte(s[len(s)-1]) {
		b.b.WriteByte(' ')
	}
	if list, ok := v.([]string); ok {
		if len(list) == 0 {
			b.err = fmt.Errorf("%w: Bind of an empty []string", ErrEmptyList)
			return
		}
		for k, e := range list {
			if k > 0 {
				b.b.WriteString(", ")
			}
			chType := ""
			if b.d.kind == kindClickHouse {
				chType = "String"
			}
			b.args = b.d.appendArg(b.args, e)
			b.d.writeMarker(&b.b, len(b.args), chType)
		}
		b.afterMarker = true
		return
	}
	arg, chType, detail := b.d.convert(v)
	if detail != "" {
		b.err = fmt.Errorf("%w: Bind: %s", ErrUnsupportedValue, detail)
		return
	}
	b.args = b.d.appendArg(b.args, arg)
	b.d.writeMarker(&b.b, len(b.args), chType)
	b.afterMarker = true
}

// Err returns the first error of a Bind, or ErrUnknownDialect for a
// Builder of the zero Dialect. Check it before running SQL().
func (b *Builder) Err() error { return b.err }

// SQL returns the text written so far.
func (b *Builder) SQL() string { return b.b.String() }

// Args returns the bound arguments in marker order. The slice is the
// Builder's own; do not modify it while still building.
func (b *Builder) Args() []any { return b.args }

// Dialect returns the Builder's dialect.
func (b *Builder) Dialect() Dialect { return b.d }
