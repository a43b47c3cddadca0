package httpapi

import (
	"fmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"math/rand/v2"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClip(t *testing.T) {
	assert.Equal(t, "abc", clip("abc", 3))
	assert.Equal(t, "ab…", clip("abc", 2))
	assert.Equal(t, "éé…", clip("ééé", 2))
	assert.Equal(t, "", clip("", 0))
}

func TestClipList(t *testing.T) {
	assert.Equal(t, "a, b", clipList([]string{"a", "b"}), "(clipList([]string{\"a\", \"b\"}))")
	items := make([]string, 30)
	for i := range items {
		items[i] = string(rune('a' + i%26))
	}
	assert.Equal(t, "a, b, c, d, e, f, g, h, i, j and 20 more", clipList(items))
	long := []string{strings.Repeat("x", 100), strings.Repeat("y", 100), strings.Repeat("z", 100), strings.Repeat("w", 100)}
	got := clipList(long)
	if got, want := got, strings.Repeat("x", 64)+"…, "+strings.Repeat("y", 64)+"…, "+strings.Repeat("z", 64)+"… and 1 more"; got != want {
		t.Errorf("got = %q, want %q", got, want)
	}
}

// randomText returns n pseudo-random letters and spaces: text with no long
// repeats of its own, so that any long repeat in a detail is an echo.
func randomText(r *rand.Rand, n int) string {
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 "
	b := make([]byte, n)
	for i := range b {
		b[i] = letters[r.IntN(len(letters))]
	}
	return string(b)
}

// echoedRunes counts the runes of detail that lie in a window of
// minEchoBytes bytes occurring in input (brute force, for tests): the
// measure guardDetail bounds by maxEchoed.
func echoedRunes(detail, input string) int {
	covered := make([]bool, len(detail))
	for i := 0; i+minEchoBytes <= len(detail); i++ {
		if strings.Contains(input, detail[i:i+minEchoBytes]) {
			for j := i; j < i+minEchoBytes; j++ {
				covered[j] = true
			}
		}
	}
	n := 0
	for i := range detail {
		if covered[i] {
			n++
		}
	}
	return n
}

// longestEcho returns the length of the longest stretch of detail that
// occurs in input (brute force, for tests).
func longestEcho(detail, input string) int {
	best := 0
	for i := range len(detail) {
		// A stretch from i longer than best must hold detail[i:i+best+1];
		// past that, the longest one is found by bisection, as every
		// prefix of a repeated stretch is repeated too.
		if i+best+1 > len(detail) || !strings.Contains(input, detail[i:i+best+1]) {
			continue
		}
		lo, hi := best+1, len(detail)-i // detail[i:i+lo] repeats
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if strings.Contains(input, detail[i:i+mid]) {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		best = lo
	}
	return best
}

func TestElideEchoes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	input := randomText(r, 20000)
	in := func(i int) string { return input[i*100 : i*100+100] }
	cases := []struct {
		name   string
		detail string
		want   string
	}{
		{"short echo kept", "Invalid name '" + input[100:160] + "'.", "Invalid name '" + input[100:160] + "'."},
		{"long echo cut", "Invalid name '" + input[100:1100] + "'. Must start with a letter.", "Invalid name '" + input[100:164] + "…'. Must start with a letter."},
		{"echo at the start", input[7000:7500] + " is not a date", input[7000:7064] + "… is not a date"},
		{"budget of echoes", "Unknown variable(s): " + in(1) + ", " + in(3) + ", " + in(5) + ", " + in(7) + ", " + in(9) + ", " + in(11) + ". Sorry.",
			"Unknown variable(s): " + in(1)[:64] + "…, " + in(3)[:64] + "…, " + in(5)[:64] + "…, " + in(7)[:8] + "…, …. Sorry."},
		{"no echo", "Query references undefined variable(s): " + randomText(rand.New(rand.NewPCG(9, 9)), 300), ""},
		{"echoes shorter than a window", "bad: " + input[0:10] + ", " + input[50:60] + ", " + input[90:105], ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := elideEchoes(c.detail, [][]byte{[]byte(input)})
			want := c.want
			if want == "" {
				want = c.detail
			}
			assert.Equal(t, want, got)
			a, b := echoedRunes(got, input), maxEchoed
			assert.True(t, (a <= b), "echoedRunes(got, input) = %v, want <= %v", a, b)
			assert.True(t, utf8.ValidString(got), "utf8.ValidString(got) is false")
		})
	}
}

func TestCutList(t *testing.T) {
	items := make([]string, 40)
	for i := range items {
		items[i] = fmt.Sprintf("v%d", i)
	}
	assert.Equal(t, "Unknown variable(s): v0, v1, v2, v3, v4, v5, v6, v7, v8, v9, …, v39. Check the names.", cutList("Unknown variable(s): "+strings.Join(items, ", ")+". Check the names."))
	short := "Expected one of: minute, hour, day, week, month."
	got, want := cutList(short), short
	assert.Equal(t, want, got, "cutList(short)")
}

func TestElideEchoesMultibyte(t *testing.T) {
	input := strings.Repeat("é€😀x", 200)
	got := elideEchoes("bad value «"+input[2:]+"» here", [][]byte{[]byte(input)})
	assert.True(t, utf8.ValidString(got), "%q: utf8.ValidString(got) is false", got)
	a, b := utf8.RuneCountInString(got), maxEchoRunes+20
	assert.True(t, (a <= b), "utf8.RuneCountInString(got) = %v, want <= %v", a, b)
	assert.True(t, strings.HasSuffix(got, "» here"), "strings.HasSuffix(got, \"» here\") is false")
}

func TestGuardDetail(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	name := randomText(r, 5000)
	req := httptest.NewRequest("GET", "/api/projects/1/endpoints/x", nil)
	req.URL.Path = "/api/projects/1/endpoints/" + name
	got := guardDetail("Endpoint '"+name+"' not found.", req, nil)
	if got, want := got, "Endpoint '"+name[:64]+"…' not found."; got != want {
		t.Errorf("got = %q, want %q", got, want)
	}

	// Escaped in the body, plain in the detail.
	word := randomText(r, 600)
	var esc strings.Builder
	for _, c := range word {
		fmt.Fprintf(&esc, `\u%04x`, c)
	}
	body := []byte(`{"name": "` + esc.String() + `"}`)
	got = guardDetail("Invalid name '"+word+"'.", req, body)
	if got, want := got, "Invalid name '"+word[:64]+"…'."; got != want {
		t.Errorf("got = %q, want %q", got, want)
	}

	// Whatever its origin, no detail is longer than maxDetailBytes and an
	// ellipsis.
	huge := strings.Repeat("é", 5000)
	got = guardDetail(huge, req, nil)
	a, b := len(got), maxDetailBytes+len(ellipsis)
	assert.True(t, (a <= b), "len(got) = %v, want <= %v", a, b)
	assert.True(t, utf8.ValidString(got), "utf8.ValidString(got) is false")

	// A short detail is left alone, fast.
	assert.Equal(t, "Not found.", guardDetail("Not found.", req, body))
}

// FuzzElideEchoes: whatever the detail and the input, the result shows no
// more than maxEchoed runes of the input in windows of minEchoBytes, no
// stretch of it longer than maxEchoRunes runes and a window, and stays
// valid UTF-8 (when the input does not hold the ellipsis that elision
// itself writes).
func FuzzElideEchoes(f *testing.F) {
	r := rand.New(rand.NewPCG(5, 6))
	in := randomText(r, 1000)
	f.Add("x '"+in[:500]+"' y", in)
	f.Add(in[200:900], in)
	f.Add(in[0:100]+", "+in[300:400]+", "+in[500:600]+", "+in[700:800], in)
	f.Add(strings.Repeat("a", 600), strings.Repeat("a", 300))
	f.Add("é"+strings.Repeat("€", 300), strings.Repeat("€", 300))
	f.Fuzz(func(t *testing.T, detail, input string) {
		if len(detail) > maxDetailBytes || !utf8.ValidString(detail) || strings.Contains(input, ellipsis) {
			return
		}
		got := elideEchoes(detail, [][]byte{[]byte(input)})
		require.True(t, utf8.ValidString(got), "invalid UTF-8: %q", got)
		require.LessOrEqual(t, echoedRunes(got, input), int(maxEchoed+4), "shows runes of the input: %q", got)
		require.LessOrEqual(t, longestEcho(got, input), int(4*maxEchoRunes+minEchoBytes), "repeats bytes of the input in one stretch: %q", got)
	})
}

// BenchmarkGuardDetail is the check of a long detail against a 1 MiB body:
// the worst case, paid only by an error answer.
func BenchmarkGuardDetail(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	body := []byte(randomText(r, 1<<20))
	detail := "Invalid value '" + string(body[5000:5800]) + "' for variable 'from'."
	req := httptest.NewRequest("POST", "/api/projects/1/endpoints/x/run", nil)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		guardDetail(detail, req, body)
	}
}
