package httpapi

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/endpointkit/endpointkit/endpoint"
)

// checkJSON refuses, in one pass over body and before anything decodes it,
// what encoding/json would accept silently and wrongly: invalid UTF-8
// (replaced by U+FFFD), \u escapes of lone UTF-16 surrogates (replaced the
// same way) and a key repeated in one object (the last one wins). It
// returns nil for a body that is fine and also for one that is not JSON at
// all, so that encoding/json explains the syntax error in its own words.
//
// It keeps no copy of the body: keys are compared as slices of it, and only
// keys holding escapes are unescaped. Objects of up to linearKeys keys are
// checked by comparing each key with the ones before it, larger ones
// through a map.
func checkJSON(body []byte) error {
	if !utf8.Valid(body) {
		at := invalidUTF8At(body)
		return parseError(fmt.Sprintf("Request body is not valid UTF-8: byte 0x%02x at byte %d. JSON must be UTF-8.", body[at], at))
	}
	c := checkers.Get().(*checker)
	c.data = body
	c.run()
	err := c.err
	// Keep the stacks for the next body, but no reference to this one
	// (pop clears what it drops), and not stacks grown by a freak body.
	clear(c.keys)
	clear(c.frames)
	if cap(c.keys) <= maxPooledKeys && cap(c.frames) <= maxPooledFrames {
		*c = checker{keys: c.keys[:0], frames: c.frames[:0]}
		checkers.Put(c)
	}
	return err
}

// Stacks larger than these are not kept for the next body.
const (
	maxPooledKeys   = 1024
	maxPooledFrames = 256
)

// checkers recycles the stacks of checkJSON, so that a body costs no
// allocation once the stacks have grown to its size.
var checkers = sync.Pool{New: func() any { return new(checker) }}

// invalidUTF8At returns the offset of the first byte of body that is not
// part of a valid UTF-8 sequence.
func invalidUTF8At(body []byte) int {
	for i := 0; i < len(body); {
		if body[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRune(body[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(body)
}

// linearKeys is the size up to which an object's keys are compared one by
// one; above it a map is cheaper.
const linearKeys = 16

// maxDepth is encoding/json's nesting limit; deeper bodies are left to it
// to refuse.
const maxDepth = 10000

// checker walks a JSON text with an explicit stack, so that nesting costs
// no Go stack.
type checker struct {
	data []byte
	i    int
	// keys holds the keys of every open object, outermost first.
	keys   [][]byte
	frames []frame
	err    error
	// malformed is set when the text is not JSON: the walk stops and
	// encoding/json gets to say why.
	malformed bool
	// opened is set by value when it opened a container that has an
	// element to read.
	opened bool
}

// frame is one open object or array.
type frame struct {
	object bool
	// first is the index in keys of the object's first key.
	first int
	// index is the position of the current element of an array.
	index int
	// set holds the object's keys once it has more than linearKeys.
	set map[string]struct{}
}

func (c *checker) run() {
	atValue := true // expecting a value; false: just after one
	for {
		c.skipSpace()
		if atValue {
			if !c.value() {
				return
			}
			// value opened a container whose first element comes next,
			// or read a whole value.
			atValue = c.opened
			continue
		}
		if len(c.frames) == 0 {
			if c.i != len(c.data) {
				c.malformed = true
			}
			return
		}
		if c.i >= len(c.data) {
			c.malformed = true
			return
		}
		top := &c.frames[len(c.frames)-1]
		switch b := c.data[c.i]; {
		case b == ',':
			c.i++
			if top.object {
				c.skipSpace()
				if !c.key() {
					return
				}
			} else {
				top.index++
			}
			atValue = true
		case (b == '}' && top.object) || (b == ']' && !top.object):
			c.i++
			c.pop()
		default:
			c.malformed = true
			return
		}
	}
}

// value reads one scalar, or opens a container and, for an object, reads
// its first key; it sets opened when the container's first element is
// next, and reports whether the walk goes on.
func (c *checker) value() bool {
	c.opened = false
	if c.i >= len(c.data) {
		c.malformed = true
		return false
	}
	switch b := c.data[c.i]; {
	case b == '{' || b == '[':
		if len(c.frames) >= maxDepth {
			c.malformed = true
			return false
		}
		c.i++
		c.frames = append(c.frames, frame{object: b == '{', first: len(c.keys)})
		c.skipSpace()
		if c.i < len(c.data) && c.data[c.i] == b+2 { // '}' is '{'+2, ']' is '['+2
			c.i++
			c.pop()
			return true
		}
		c.opened = true
		if b == '{' {
			return c.key()
		}
		return true
	case b == '"':
		_, ok := c.str()
		return ok
	case b == '-' || (b >= '0' && b <= '9'):
		return c.number()
	case b == 't':
		return c.literal("true")
	case b == 'f':
		return c.literal("false")
	case b == 'n':
		return c.literal("null")
	}
	c.malformed = true
	return false
}

// key reads an object's key and its colon, and refuses a key the object
// already has.
func (c *checker) key() bool {
	if c.i >= len(c.data) || c.data[c.i] != '"' {
		c.malformed = true
		return false
	}
	start := c.i
	k, ok := c.str()
	if !ok {
		return false
	}
	// The colon first: a key without one is a syntax error, whatever
	// else is wrong with it.
	c.skipSpace()
	if c.i >= len(c.data) || c.data[c.i] != ':' {
		c.malformed = true
		return false
	}
	c.i++
	top := &c.frames[len(c.frames)-1]
	seen := c.keys[top.first:]
	dup := false
	switch {
	case top.set != nil:
		_, dup = top.set[string(k)]
	case len(seen) < linearKeys:
		for _, s := range seen {
			if bytes.Equal(s, k) {
				dup = true
				break
			}
		}
	default:
		top.set = make(map[string]struct{}, 2*linearKeys)
		for _, s := range seen {
			top.set[string(s)] = struct{}{}
		}
		_, dup = top.set[string(k)]
	}
	if dup {
		c.err = c.duplicate(k, start)
		return false
	}
	if top.set != nil {
		top.set[string(k)] = struct{}{}
	}
	c.keys = append(c.keys, k)
	return true
}

func (c *checker) pop() {
	top := c.frames[len(c.frames)-1]
	if top.object {
		clear(c.keys[top.first:])
		c.keys = c.keys[:top.first]
	}
	c.frames[len(c.frames)-1] = frame{}
	c.frames = c.frames[:len(c.frames)-1]
}

// duplicate is the error of key k, found again at offset at.
func (c *checker) duplicate(k []byte, at int) error {
	path := c.path()
	where := "in the request body"
	attr := string(k)
	if path != "" {
		where = "in '" + path + "'"
		attr = path + "." + attr
	}
	return &endpoint.Error{
		Status: http.StatusBadRequest,
		Code:   CodeParseError,
		Detail: fmt.Sprintf("Duplicate key %s %s at byte %d: each key of a JSON object may appear once.", strconv.Quote(clip(string(k), maxEchoRunes)), where, at),
		Attr:   clipPath(attr),
		Err:    endpoint.ErrInvalid,
	}
}

// path is where the innermost open object is, as "query.series.0": the
// current key of each enclosing object and the index in each enclosing
// array. An enclosing object's current key is the last one read before the
// container inside it opened.
func (c *checker) path() string {
	var b strings.Builder
	for j := range len(c.frames) - 1 {
		if j > 0 {
			b.WriteByte('.')
		}
		if c.frames[j].object {
			b.WriteString(clip(string(c.keys[c.frames[j+1].first-1]), maxEchoRunes))
		} else {
			b.WriteString(strconv.Itoa(c.frames[j].index))
		}
	}
	return b.String()
}

// str reads a string and returns its contents: a slice of data when it
// holds no escape, an unescaped copy otherwise. A \u escape of a lone
// surrogate is an error of its own; anything else wrong is malformed.
func (c *checker) str() ([]byte, bool) {
	c.i++ // the opening quote
	start := c.i
	var buf []byte // the unescaped contents once an escape is seen
	for c.i < len(c.data) {
		switch b := c.data[c.i]; {
		case b == '"':
			s := c.data[start:c.i]
			c.i++
			if buf != nil {
				return append(buf, s...), true
			}
			return s, true
		case b < 0x20:
			c.malformed = true
			return nil, false
		case b != '\\':
			c.i++
		default:
			// An escape: keep what came before it, then decode it.
			var ok bool
			if buf, ok = c.escape(append(buf, c.data[start:c.i]...)); !ok {
				return nil, false
			}
			start = c.i
		}
	}
	c.malformed = true
	return nil, false
}

// escape decodes the escape at data[i], appends what it stands for to buf
// and moves past it.
func (c *checker) escape(buf []byte) ([]byte, bool) {
	if c.i+1 >= len(c.data) {
		c.malformed = true
		return nil, false
	}
	switch e := c.data[c.i+1]; e {
	case '"', '\\', '/':
		buf = append(buf, e)
	case 'b', 'f', 'n', 'r', 't':
		buf = append(buf, unescapes[e])
	case 'u':
		return c.unicodeEscape(buf)
	default:
		c.malformed = true
		return nil, false
	}
	c.i += 2
	return buf, true
}

// unicodeEscape decodes the \u escape at data[i], with the one after it
// when the two are a UTF-16 surrogate pair, and appends the character to
// buf.
func (c *checker) unicodeEscape(buf []byte) ([]byte, bool) {
	at := c.i
	r, ok := c.hex4(c.i + 2)
	if !ok {
		c.malformed = true
		return nil, false
	}
	c.i += 6
	if utf16.IsSurrogate(r) {
		r2, ok2 := rune(-1), false
		if r < 0xdc00 && c.i+1 < len(c.data) && c.data[c.i] == '\\' && c.data[c.i+1] == 'u' {
			r2, ok2 = c.hex4(c.i + 2)
		}
		pair := utf16.DecodeRune(r, r2)
		if !ok2 || pair == utf8.RuneError {
			c.err = parseError(fmt.Sprintf(`Invalid JSON string at byte %d: \u%04x is half of a UTF-16 surrogate pair without its other half, so it encodes no character.`, at, r))
			return nil, false
		}
		r = pair
		c.i += 6
	}
	return utf8.AppendRune(buf, r), true
}

// unescapes maps the letter of a one-letter escape to its byte.
var unescapes = [256]byte{'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// hex4 decodes the 4 hex digits at data[at:].
func (c *checker) hex4(at int) (rune, bool) {
	if at+4 > len(c.data) {
		return 0, false
	}
	var r rune
	for _, b := range c.data[at : at+4] {
		switch {
		case b >= '0' && b <= '9':
			r = r<<4 | rune(b-'0')
		case b >= 'a' && b <= 'f':
			r = r<<4 | rune(b-'a'+10)
		case b >= 'A' && b <= 'F':
			r = r<<4 | rune(b-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// number reads a number as RFC 8259 spells it: an optional '-', 0 or
// digits that do not start with 0, an optional fraction, an optional
// exponent.
func (c *checker) number() bool {
	d := c.data
	if d[c.i] == '-' {
		c.i++
	}
	// The integer part is read here, not in a function of its own: that
	// cost a call per number on the request's path.
	ok := c.i < len(d) && d[c.i] >= '0' && d[c.i] <= '9'
	if ok && d[c.i] == '0' {
		c.i++
	} else if ok {
		c.digits()
	}
	if ok && c.i < len(d) && d[c.i] == '.' {
		c.i++
		ok = c.digits()
	}
	if ok && c.i < len(d) && (d[c.i] == 'e' || d[c.i] == 'E') {
		ok = c.exponent()
	}
	if !ok {
		c.malformed = true
	}
	return ok
}

// exponent reads a number's exponent: 'e' or 'E', an optional sign, and
// digits.
func (c *checker) exponent() bool {
	d := c.data
	c.i++
	if c.i < len(d) && (d[c.i] == '+' || d[c.i] == '-') {
		c.i++
	}
	return c.digits()
}

// digits reads one or more digits and reports whether there was one.
func (c *checker) digits() bool {
	start := c.i
	for c.i < len(c.data) && c.data[c.i] >= '0' && c.data[c.i] <= '9' {
		c.i++
	}
	return c.i > start
}

func (c *checker) literal(word string) bool {
	if len(c.data)-c.i < len(word) || string(c.data[c.i:c.i+len(word)]) != word {
		c.malformed = true
		return false
	}
	c.i += len(word)
	return true
}

func (c *checker) skipSpace() {
	for c.i < len(c.data) {
		switch c.data[c.i] {
		case ' ', '\t', '\n', '\r':
			c.i++
		default:
			return
		}
	}
}
