package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Bounds on how much of a client's input an error detail repeats. A detail
// that names what was wrong helps; one that echoes 200 KB of a body back
// makes every error a reflection amplifier and floods logs.
const (
	// maxEchoRunes is the most of one echoed value (a name, a key, a
	// literal) that a detail shows before "…".
	maxEchoRunes = 64
	// maxEchoed is the longest stretch of the request that any detail may
	// repeat; guardDetail enforces it whatever built the detail.
	maxEchoed = 200
	// maxListItems is the most items of an echoed list shown.
	maxListItems = 10
	// maxDetailBytes bounds every detail, whatever it holds, so that
	// guardDetail's work is bounded too.
	maxDetailBytes = 1024
)

// ellipsis marks where an echo was cut.
const ellipsis = "…"

// clip returns s cut to n runes, with an ellipsis when it was cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	count := 0
	for i := range s {
		if count == n {
			return s[:i] + ellipsis
		}
		count++
	}
	return s
}

// clipPath cuts a dotted path (an attr) to maxEchoed runes.
func clipPath(s string) string { return clip(s, maxEchoed) }

// clipList joins items with ", ", each cut to maxEchoRunes, showing at most
// maxListItems and at most about maxEchoed runes of them; the rest are
// counted ("and 12 more").
func clipList(items []string) string {
	var b strings.Builder
	runes := 0
	shown := 0
	for _, it := range items {
		it = clip(it, maxEchoRunes)
		n := utf8.RuneCountInString(it)
		if shown == maxListItems || (shown > 0 && runes+n > maxEchoed) {
			break
		}
		if shown > 0 {
			b.WriteString(", ")
			runes += 2
		}
		b.WriteString(it)
		runes += n
		shown++
	}
	if rest := len(items) - shown; rest > 0 {
		b.WriteString(" and " + strconv.Itoa(rest) + " more")
	}
	return b.String()
}

// guardDetail is the last check on an error detail before it is written.
// The details built in this package cut their echoes where they are made;
// this catches those made elsewhere (the endpoint and variable packages
// echo names, ids, values, lists and query text), whatever their wording:
//
//   - a detail longer than maxDetailBytes keeps its start and its end,
//     with "…" between (the middle of a long detail is an echo, the end
//     may say what was wrong with it);
//   - a list of more than maxListItems+1 ", "-separated parts keeps its
//     first maxListItems and its last, with "…" between;
//   - every stretch that repeats the request (its body, the strings the body
//     decodes to, its path, query, method and Content-Type) in windows of
//     minEchoBytes or more is cut to maxEchoRunes runes, and once maxEchoed
//     runes of such stretches are shown, the further ones are replaced by
//     "…".
//
// So no detail shows more than maxEchoed characters of the request in
// stretches of minEchoBytes or more, nor more than maxListItems+1 short
// items of a list.
func guardDetail(detail string, r *http.Request, body []byte) string {
	if len(detail) > maxDetailBytes {
		detail = cutBytes(detail, maxDetailBytes*2/3) + ellipsis + tailBytes(detail, maxDetailBytes/3-len(ellipsis))
	}
	detail = cutList(detail)
	if len(detail) < minEchoBytes {
		return detail
	}
	inputs := [][]byte{body, []byte(r.URL.Path), []byte(r.URL.RawPath), []byte(r.URL.RawQuery), []byte(r.Method), []byte(r.Header.Get("Content-Type"))}
	if bytes.IndexByte(body, '\\') >= 0 {
		// Escapes make a decoded string differ from its bytes in the body.
		inputs = append(inputs, decodedStrings(body))
	}
	return elideEchoes(detail, inputs)
}

// minEchoBytes is the shortest stretch guardDetail counts as an echo:
// shorter ones are as likely to be words of the message that the body
// happens to hold too ("variables").
const minEchoBytes = 16

// cutBytes returns the longest prefix of s of at most n bytes that ends on
// a rune boundary.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// tailBytes returns the longest suffix of s of at most n bytes that starts
// on a rune boundary.
func tailBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}

// cutList shortens a long ", "-separated list in detail to its first
// maxListItems parts, "…" and its last part (which holds the end of the
// list and whatever text follows it).
func cutList(detail string) string {
	if strings.Count(detail, ", ") <= maxListItems {
		return detail
	}
	parts := strings.Split(detail, ", ")
	return strings.Join(parts[:maxListItems], ", ") + ", " + ellipsis + ", " + parts[len(parts)-1]
}

// decodedStrings returns every string of a JSON text, keys included,
// unescaped and separated by NUL bytes. It stops at the first syntax error,
// keeping what it decoded before it.
func decodedStrings(body []byte) []byte {
	var out []byte
	dec := json.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := dec.Token()
		if err != nil { // io.EOF at the end
			return out
		}
		if s, ok := tok.(string); ok {
			out = append(out, s...)
			out = append(out, 0)
		}
	}
}

// Rolling hash of markEchoes: a polynomial in an odd base, modulo 2^64.
const hashBase = 1099511628211

// filterBit is the bit of markEchoes' filter for hash h: 16 bits of h
// mixed by a Fibonacci multiplication, as the polynomial's own top bits are
// poorly spread over text.
func filterBit(h uint64) uint64 { return (h * 0x9e3779b97f4a7c15) >> 48 }

// markEchoes reports which bytes of detail lie in a window of w bytes that
// occurs in one of inputs; nil when none does. Every window of detail is
// hashed (a rolling hash), then each input is rolled over once and its
// windows looked up, through a bit filter first: the work is linear in the
// input, and guardDetail asks for it only on an error.
func markEchoes(detail string, inputs [][]byte, w int) []bool {
	f := echoFinder{detail: detail, w: w, pow: 1}
	for range w {
		f.pow *= hashBase
	}
	f.index()
	for _, in := range inputs {
		if len(in) >= w {
			f.scan(in)
		}
	}
	return f.covered
}

// echoFinder is markEchoes at work.
type echoFinder struct {
	detail string
	w      int
	pow    uint64       // hashBase to the power w: the weight of the byte leaving a window
	filter [1024]uint64 // 65,536 bits, see filterBit
	// windows are the starts of the detail's windows not found yet, by
	// hash.
	windows map[uint64][]int32
	covered []bool // nil until a window is found
}

// index hashes every window of the detail.
func (f *echoFinder) index() {
	f.windows = make(map[uint64][]int32, len(f.detail)-f.w+1)
	var h uint64
	for i := range len(f.detail) {
		h = h*hashBase + uint64(f.detail[i])
		if i >= f.w {
			h -= uint64(f.detail[i-f.w]) * f.pow
		}
		if i >= f.w-1 {
			f.windows[h] = append(f.windows[h], int32(i-f.w+1))
			b := filterBit(h)
			f.filter[b>>6] |= 1 << (b & 63)
		}
	}
}

// scan rolls over the windows of in and marks those the detail holds.
func (f *echoFinder) scan(in []byte) {
	w := f.w
	var h uint64
	for i := range len(in) {
		h = h*hashBase + uint64(in[i])
		if i >= w {
			h -= uint64(in[i-w]) * f.pow
		}
		if i < w-1 {
			continue
		}
		if b := filterBit(h); f.filter[b>>6]&(1<<(b&63)) != 0 {
			f.match(h, in[i-w+1:i+1])
		}
	}
}

// match marks the windows of the detail of hash h that are win, and stops
// looking for them.
func (f *echoFinder) match(h uint64, win []byte) {
	starts, ok := f.windows[h]
	if !ok {
		return
	}
	left := starts[:0]
	for _, p := range starts {
		if string(win) != f.detail[p:int(p)+f.w] {
			left = append(left, p)
			continue
		}
		if f.covered == nil {
			f.covered = make([]bool, len(f.detail))
		}
		for j := int(p); j < int(p)+f.w; j++ {
			f.covered[j] = true
		}
	}
	if len(left) == 0 {
		delete(f.windows, h) // found: no need to look for it again
	} else {
		f.windows[h] = left
	}
}

// elideEchoes cuts the stretches of detail that markEchoes finds in inputs
// (windows of minEchoBytes): each to maxEchoRunes runes and "…", and once
// maxEchoed runes of them are shown, the rest to "…" alone, dropping the
// separators between two such, so that a list's tail becomes one "…".
func elideEchoes(detail string, inputs [][]byte) string {
	if len(detail) < minEchoBytes {
		return detail
	}
	covered := markEchoes(detail, inputs, minEchoBytes)
	if covered == nil {
		return detail
	}
	el := elider{budget: maxEchoed}
	last := 0
	for i := 0; i < len(detail); {
		if !covered[i] {
			i++
			continue
		}
		s, e := stretchAt(detail, covered, i, last)
		el.add(detail[last:s], detail[s:e])
		last, i = e, e
	}
	el.b.WriteString(detail[last:])
	return el.b.String()
}

// stretchAt returns the stretch of covered bytes of detail that starts at
// i, widened to rune boundaries (a window may start or end inside a
// multi-byte rune that the input holds too), but not back before last.
func stretchAt(detail string, covered []bool, i, last int) (s, e int) {
	s, e = i, i
	for e < len(detail) && covered[e] {
		e++
	}
	for s > last && !utf8.RuneStart(detail[s]) {
		s--
	}
	for e < len(detail) && !utf8.RuneStart(detail[e]) {
		e++
	}
	return s, e
}

// elider writes a detail with its echoes cut.
type elider struct {
	b       strings.Builder
	budget  int  // runes of echoes that may still be shown
	dropped bool // the last stretch was replaced by "…" alone
}

// add writes the text between the previous stretch and this one, and the
// stretch cut.
func (el *elider) add(between, stretch string) {
	switch {
	case between == ellipsis && strings.HasSuffix(el.b.String(), ellipsis):
		// Two parts of one echo that guardDetail cut in the middle: the
		// first one's "…" stands for both.
	case el.budget > 0:
		cut := clip(stretch, min(maxEchoRunes, el.budget))
		el.b.WriteString(between)
		el.b.WriteString(cut)
		el.budget -= utf8.RuneCountInString(strings.TrimSuffix(cut, ellipsis))
		el.dropped = false
	case el.dropped && strings.Trim(between, " ,;'\"") == "" && len(between) <= 4:
		// "…, …" reads as one "…".
	default:
		el.b.WriteString(between)
		el.b.WriteString(ellipsis)
		el.dropped = true
	}
}
