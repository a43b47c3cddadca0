package jsontext

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// encoded is s as encoding/json writes it with HTML escaping off.
func encoded(t *testing.T, s string) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(s))
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

// TestAppendStringIsEncodingJSON: every byte alone, the escapes, invalid
// UTF-8, U+2028 and U+2029, HTML characters, and random strings of bytes
// and runes are written as encoding/json writes them.
func TestAppendStringIsEncodingJSON(t *testing.T) {
	cases := []string{"", "plain", `"quoted" \ back`, "<b>&amp;</b>", "tab\tline\nret\rbs\bff\f", "\x00\x1f\x7f",
		"é ü 日本", "\u2028\u2029", "bad \xff\xfe utf8", "\xed\xa0\x80", "end\xc3"}
	for b := range 256 {
		cases = append(cases, string([]byte{byte(b)}), "a"+string([]byte{byte(b)})+"z")
	}
	r := rand.New(rand.NewPCG(1, 2))
	runes := []rune{'a', '"', '\\', '\n', 0, 0x1f, 'é', '\u2028', '\u2029', 0xfffd, '日', 0x1f600}
	for range 2000 {
		var b []byte
		for range r.IntN(20) {
			if r.IntN(3) == 0 {
				b = append(b, byte(r.IntN(256)))
			} else {
				b = append(b, string(runes[r.IntN(len(runes))])...)
			}
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		assert.Equal(t, encoded(t, s), string(AppendString(nil, s)), "%q", s)
	}
	assert.Equal(t, `x"a"`, string(AppendString([]byte("x"), "a")), "appends")
}
