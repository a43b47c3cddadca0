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
	pow := uint64(1)
	for range w {
		pow *= hashBase
	}
	var filter [1024]uint64 // 65,536 bits, see filterBit
	windows := make(map[uint64][]int32, len(detail)-w+1)
	var h uint64
	for i := range len(detail) {
		h = h*hashBase + uint64(detail[i])
		if i >= w {
			h -= uint64(detail[i-w]) * pow
		}
		if i >= w-1 {
			windows[h] = append(windows[h], int32(i-w+1))
			f := filterBit(h)
			filter[f>>6] |= 1 << (f & 63)
		}
	}
	var covered []bool
	for _, in := range inputs {
		if len(in) < w {
			continue
		}
		h = 0
		for i := range len(in) {
			h = h*hashBase + uint64(in[i])
			if i >= w {
				h -= uint64(in[i-w]) * pow
			}
			if i < w-1 {
				continue
			}
			if f := filterBit(h); filter[f>>6]&(1<<(f&63)) == 0 {
				continue
			}
			starts, ok := windows[h]
			if !ok {
				continue
			}
			win := in[i-w+1 : i+1]
			left := starts[:0]
			for _, p := range starts {
				if string(win) != detail[p:int(p)+w] {
					left = append(left, p)
					continue
				}
				if covered == nil {
					covered = make([]bool, len(detail))
				}
				for j := int(p); j < int(p)+w; j++ {
					covered[j] = true
				}
			}
			if len(left) == 0 {
				delete(windows, h) // found: no need to look for it again
			} else {
				windows[h] = left
			}
		}
	}
	return covered
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
	var b strings.Builder
	budget := maxEchoed
	last := 0
	dropped := false // the last stretch was replaced by "…" alone
	for i := 0; i < len(detail); {
		if !covered[i] {
			i++
			continue
		}
		s, e := i, i
		for e < len(detail) && covered[e] {
			e++
		}
		// Cut on rune boundaries: a window may start or end inside a
		// multi-byte rune that the input holds too.
		for s > last && !utf8.RuneStart(detail[s]) {
			s--
		}
		for e < len(detail) && !utf8.RuneStart(detail[e]) {
			e++
		}
		between, stretch := detail[last:s], detail[s:e]
		switch {
		case between == ellipsis && strings.HasSuffix(b.String(), ellipsis):
			// Two parts of one echo that guardDetail cut in the middle:
			// the first one's "…" stands for both.
		case budget > 0:
			keep := min(maxEchoRunes, budget)
			cut := clip(stretch, keep)
			b.WriteString(between)
			b.WriteString(cut)
			budget -= utf8.RuneCountInString(strings.TrimSuffix(cut, ellipsis))
			dropped = false
		case dropped && strings.Trim(between, " ,;'\"") == "" && len(between) <= 4:
			// "…, …" reads as one "…".
		default:
			b.WriteString(between)
			b.WriteString(ellipsis)
			dropped = true
		}
		last, i = e, e
	}
	b.WriteString(detail[last:])
	return b.String()
}
