package httpapi

import (
	"encoding/json"
	"strconv"
)

// decodeRunBody decodes a run's request body in one pass when it holds
// only the fields of runBody, each with a value of its type: what
// decodeJSON's general path (a map of the keys, then encoding/json with
// UseNumber) gives for such a body, at a fraction of its cost, since every
// run request is decoded. ok is false for anything else (an unknown key, a
// value of another type, a number that is not a whole one where one is
// expected, text that is not JSON, nesting deeper than maxFastDepth): the
// general path then decodes the body or words its error. b is set only
// when ok. The body has passed checkJSON (valid UTF-8, no repeated key, no
// lone surrogate).
//
// FuzzDecodeRunBody checks that both paths agree on every body the fast
// one takes.
func decodeRunBody(body []byte, b *runBody) (ok bool) {
	p := fastJSON{s: body}
	var out runBody
	p.space()
	if !p.eat('{') {
		return false
	}
	p.space()
	if !p.eat('}') {
		for {
			key, ok := p.str()
			if !ok {
				return false
			}
			p.space()
			if !p.eat(':') {
				return false
			}
			p.space()
			switch key {
			case "variables":
				if p.null() {
					break
				}
				m, ok := p.object(1)
				if !ok {
					return false
				}
				out.Variables = m
			case "version":
				if out.Version, ok = p.intPointer(); !ok {
					return false
				}
			case "limit":
				if out.Limit, ok = p.intPointer(); !ok {
					return false
				}
			case "offset":
				if out.Offset, ok = p.intPointer(); !ok {
					return false
				}
			case "refresh":
				if out.Refresh, ok = p.stringOrNull(); !ok {
					return false
				}
			case "format":
				if out.Format, ok = p.stringOrNull(); !ok {
					return false
				}
			case "debug":
				switch {
				case p.literal("true"):
					out.Debug = true
				case p.literal("false"), p.null():
					out.Debug = false
				default:
					return false
				}
			default:
				return false
			}
			p.space()
			if p.eat('}') {
				break
			}
			if !p.eat(',') {
				return false
			}
			p.space()
		}
	}
	p.space()
	if p.i != len(p.s) {
		return false
	}
	*b = out
	return true
}

// maxFastDepth bounds the nesting decodeRunBody follows; deeper values
// take the general path, which has its own bound.
const maxFastDepth = 32

// fastJSON reads JSON text strictly: each method reports false, having
// read anything or not, at the first byte that is not what it reads.
type fastJSON struct {
	s []byte
	i int
}

func (p *fastJSON) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// eat reads c.
func (p *fastJSON) eat(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

// literal reads word (true, false, null).
func (p *fastJSON) literal(word string) bool {
	if len(p.s)-p.i >= len(word) && string(p.s[p.i:p.i+len(word)]) == word {
		p.i += len(word)
		return true
	}
	return false
}

func (p *fastJSON) null() bool { return p.literal("null") }

// str reads a string. One holding escapes is unescaped by encoding/json,
// so that it is read exactly as the general path reads it.
func (p *fastJSON) str() (string, bool) {
	if !p.eat('"') {
		return "", false
	}
	start, escaped := p.i, false
	for p.i < len(p.s) {
		switch c := p.s[p.i]; {
		case c == '"':
			raw := p.s[start:p.i]
			p.i++
			if !escaped {
				return string(raw), true
			}
			var s string
			if err := json.Unmarshal(p.s[start-1:p.i], &s); err != nil {
				return "", false
			}
			return s, true
		case c == '\\':
			escaped = true
			p.i += 2
		case c < 0x20:
			return "", false
		default:
			p.i++
		}
	}
	return "", false
}

// stringOrNull reads a string, or null as "" (encoding/json leaves a
// string field as it is for null).
func (p *fastJSON) stringOrNull() (string, bool) {
	if p.null() {
		return "", true
	}
	return p.str()
}

// number reads a number's literal, as JSON's grammar has it.
func (p *fastJSON) number() (string, bool) {
	start := p.i
	p.eat('-')
	switch {
	case p.eat('0'):
	case p.i < len(p.s) && p.s[p.i] >= '1' && p.s[p.i] <= '9':
		p.digits()
	default:
		return "", false
	}
	if p.eat('.') && !p.digits() {
		return "", false
	}
	if p.eat('e') || p.eat('E') {
		if !p.eat('+') {
			p.eat('-')
		}
		if !p.digits() {
			return "", false
		}
	}
	return string(p.s[start:p.i]), true
}

// digits reads one digit or more.
func (p *fastJSON) digits() bool {
	start := p.i
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
	}
	return p.i > start
}

// intPointer reads a whole number that fits an int, or null as nil.
func (p *fastJSON) intPointer() (*int, bool) {
	if p.null() {
		return nil, true
	}
	lit, ok := p.number()
	if !ok {
		return nil, false
	}
	n, err := strconv.ParseInt(lit, 10, strconv.IntSize)
	if err != nil {
		return nil, false
	}
	v := int(n)
	return &v, true
}

// value reads any value as encoding/json decodes it into an interface
// with UseNumber.
func (p *fastJSON) value(depth int) (any, bool) {
	if p.i >= len(p.s) {
		return nil, false
	}
	switch c := p.s[p.i]; {
	case c == '"':
		return p.str()
	case c == '{':
		return p.object(depth + 1)
	case c == '[':
		return p.array(depth + 1)
	case c == 't' && p.literal("true"):
		return true, true
	case c == 'f' && p.literal("false"):
		return false, true
	case c == 'n' && p.literal("null"):
		return nil, true
	case c == '-' || c >= '0' && c <= '9':
		lit, ok := p.number()
		return json.Number(lit), ok
	}
	return nil, false
}

// object reads an object into a map.
func (p *fastJSON) object(depth int) (map[string]any, bool) {
	if depth > maxFastDepth || !p.eat('{') {
		return nil, false
	}
	m := map[string]any{}
	p.space()
	if p.eat('}') {
		return m, true
	}
	for {
		k, ok := p.str()
		if !ok {
			return nil, false
		}
		p.space()
		if !p.eat(':') {
			return nil, false
		}
		p.space()
		v, ok := p.value(depth)
		if !ok {
			return nil, false
		}
		m[k] = v
		p.space()
		if p.eat('}') {
			return m, true
		}
		if !p.eat(',') {
			return nil, false
		}
		p.space()
	}
}

// array reads an array into a slice.
func (p *fastJSON) array(depth int) ([]any, bool) {
	if depth > maxFastDepth || !p.eat('[') {
		return nil, false
	}
	a := []any{}
	p.space()
	if p.eat(']') {
		return a, true
	}
	for {
		v, ok := p.value(depth)
		if !ok {
			return nil, false
		}
		a = append(a, v)
		p.space()
		if p.eat(']') {
			return a, true
		}
		if !p.eat(',') {
			return nil, false
		}
		p.space()
	}
}
