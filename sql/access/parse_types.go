package access

// Type names, after CAST's AS, PostgreSQL's '::' and MySQL's CONVERT: read
// so that a type's parameters are not taken for a function call.

// paramTypes are type names that take parameters: DECIMAL(10, 2),
// VARCHAR(20), Nullable(String), DateTime64(3, 'UTC').
var paramTypes = setOf("decimal", "numeric", "dec", "varchar", "char", "character", "nchar",
	"nvarchar", "varbinary", "binary", "bit", "varbit", "float", "double", "real", "time",
	"timestamp", "datetime", "datetime64", "interval", "nullable", "lowcardinality", "array",
	"tuple", "map", "fixedstring", "decimal32", "decimal64", "decimal128", "decimal256",
	"enum", "enum8", "enum16", "int", "integer", "bigint", "smallint", "tinyint",
	"mediumint", "unsigned", "signed", "varying", "bpchar", "datetime2", "nested",
	"aggregatefunction", "simpleaggregatefunction", "object", "json", "variant", "dynamic")

// typeName reads a type after CAST's AS or PostgreSQL's '::'.
func (p *parser) typeName() {
	t := p.cur()
	if !t.isName() {
		p.failTok(t, ReasonUnsupported, "expected a type name, found %s", p.desc(t))
	}
	p.typeWord()
	if p.cur().kind == tDot && p.peek(1).isName() {
		p.next()
		p.typeWord()
	}
	for p.typeSuffix() {
	}
}

// typeMoreWords may follow a type's first word: DOUBLE PRECISION, INT
// UNSIGNED, UNSIGNED INTEGER, CHARACTER VARYING.
var typeMoreWords = setOf("precision", "unsigned", "signed", "integer", "int", "varying")

// typeSuffix reads one of the words or brackets that may follow a type's
// name and reports whether there was one.
func (p *parser) typeSuffix() bool {
	c := p.cur()
	switch {
	case c.kind == tWord && typeMoreWords[c.lower]:
		p.typeWord()
	case p.timeZoneAhead() || p.charsetAhead():
		p.next()
		p.next()
		p.next()
	case c.kind == tLBracket: // PostgreSQL arrays: int[], int[3]
		p.next()
		if p.cur().kind == tNumber {
			p.next()
		}
		p.expect(tRBracket, "']'")
	default:
		return false
	}
	return true
}

// timeZoneAhead reports whether the cursor starts WITH TIME ZONE or
// WITHOUT TIME ZONE.
func (p *parser) timeZoneAhead() bool {
	c := p.cur()
	return (c.isWord("with") || c.isWord("without")) && p.peek(1).isWord("time") && p.peek(2).isWord("zone")
}

// charsetAhead reports whether the cursor starts CHARACTER SET name or
// CHAR SET name.
func (p *parser) charsetAhead() bool {
	c := p.cur()
	return (c.isWord("character") || c.isWord("char")) && p.peek(1).isWord("set") && p.peek(2).isName()
}

// typeWord reads one word of a type and its parameters.
func (p *parser) typeWord() {
	t := p.cur()
	at := p.pos
	p.next()
	if p.cur().kind != tLParen {
		return
	}
	if t.kind != tWord || !paramTypes[t.lower] {
		p.failTok(t, ReasonUnsupported, "%s is not a type that takes parameters", p.desc(t))
	}
	p.mark(at)
	p.typeParams()
}

// typeParams reads a type's parameters: numbers, strings, names, and
// nested types.
func (p *parser) typeParams() {
	p.enter()
	defer p.leave()
	p.expect(tLParen, "'('")
	for {
		t := p.cur()
		switch {
		case t.kind == tRParen:
			p.next()
			return
		case t.kind == tNumber || t.kind == tString || t.kind == tComma || t.isPunct('=') || t.isPunct('-') || t.isPunct('+'):
			p.next()
		case t.isName():
			p.typeWord()
		default:
			p.failTok(t, ReasonUnsupported, "unexpected %s in a type", p.desc(t))
		}
	}
}
