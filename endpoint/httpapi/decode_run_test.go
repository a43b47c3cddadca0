package httpapi

import (
	"errors"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// generalRunBody decodes body as decodeJSON does for any other type.
func generalRunBody(body []byte) (runBody, error) {
	var b runBody
	if err := checkJSON(body); err != nil {
		return b, err
	}
	err := decodeGeneral(body, &b)
	return b, err
}

// TestDecodeRunBodyFast checks that the run requests clients send take the
// one-pass path, and that it decodes them as the general path does.
func TestDecodeRunBodyFast(t *testing.T) {
	for _, body := range []string{
		`{}`,
		` { } `,
		`{"variables": {}}`,
		`{"variables": null}`,
		`{"variables": {"name": "purchase"}}`,
		`{"variables": {"n": 12, "x": -1.5e-3, "ok": true, "no": false, "none": null}}`,
		`{"variables": {"list": ["a", 1, [2, {"k": "v"}], {}], "o": {"a": {"b": []}}}}`,
		`{"variables": {"esc": "a\"b\\c\nd\u00e9\ud83d\ude00", "k\u0065y": "v"}}`,
		`{"variables": {"from": "2025-05-01"}, "limit": 10, "offset": 0, "version": 2}`,
		`{"limit": null, "offset": null, "version": null, "refresh": null, "format": null, "debug": null}`,
		`{"refresh": "force_blocking", "format": "csv", "debug": true}`,
		`{"debug": false, "limit": -0, "offset": -7}`,
		"{\n\t\"variables\" :\r\n{ \"a\" : 1 }\n}\n",
		`{"vari\u0061bles": {"a": "b"}}`,
		`{"variables": {"big": 123456789012345678901234567890, "zero": 0, "exp": 1E+2}}`,
	} {
		var fast runBody
		if !assert.True(t, decodeRunBody([]byte(body), &fast), "%s: took the general path", body) {
			continue
		}
		want, err := generalRunBody([]byte(body))
		if !assert.NoError(t, err, "%s: general path", body) {
			continue
		}
		assert.Equal(t, want, fast, "%s:\n fast", body)
	}
}

// TestDecodeRunBodyDeclines checks that what the one-pass path does not
// decode exactly is left to the general path, which words the errors.
func TestDecodeRunBodyDeclines(t *testing.T) {
	for _, body := range []string{
		``, `[]`, `null`, `"x"`, `{`, `{"variables": {}`, `{"variables": {}} x`, `{"variables": {}}{}`,
		`{"Variables": {}}`, `{"unknown": 1}`, `{"variables": "x"}`, `{"variables": []}`,
		`{"limit": 1.5}`, `{"limit": 1e2}`, `{"limit": "1"}`, `{"limit": 99999999999999999999}`,
		`{"debug": "true"}`, `{"debug": 1}`, `{"refresh": 1}`, `{"format": ["csv"]}`,
		`{"variables": {"a": 01}}`, `{"variables": {"a": .5}}`, `{"variables": {"a": 1.}}`, `{"variables": {"a": -}}`,
		`{"variables": {"a": tru}}`, `{"variables": {"a": "x` + "\n" + `"}}`, `{"variables": {"a": "\x"}}`,
		`{"variables": {"a" 1}}`, `{"variables": {"a": 1,}}`, `{"variables": {"a": [1,]}}`, `{,}`,
		`{"variables": {"deep": ` + strings.Repeat("[", maxFastDepth+1) + strings.Repeat("]", maxFastDepth+1) + `}}`,
	} {
		var b runBody
		assert.False(t, decodeRunBody([]byte(body), &b), "%q: took the one-pass path", body)
		assert.Equal(t, runBody{}, b, "%q: declined but set the body", body)
	}
}

// FuzzDecodeRunBody checks that whatever body the one-pass path decodes,
// the general path decodes, to the same request.
func FuzzDecodeRunBody(f *testing.F) {
	for _, s := range []string{
		`{"variables": {"name": "purchase"}}`,
		`{"variables": {"l": [1, "a", null, true, {"k": [false]}]}, "limit": 3, "offset": 1, "version": 2}`,
		`{"refresh": "blocking", "format": "ndjson", "debug": false}`,
		`{"variables": {"e": "\u2028\"\\/"}, "limit": -0}`,
		`{"limit": 1.0}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if checkJSON(body) != nil {
			return
		}
		var fast runBody
		if !decodeRunBody(body, &fast) {
			return
		}
		want, err := generalRunBody(body)
		require.NoError(t, err, "%q: the one-pass path took a body the general path refuses", body)
		require.Equal(t, want, fast, "%q:\n fast", body)
	})
}

// BenchmarkDecodeRunBody compares the one-pass path with the general one
// on a typical run request.
func BenchmarkDecodeRunBody(b *testing.B) {
	body := []byte(`{"variables": {"event": "purchase", "from": "2025-05-01", "to": "2025-05-08"}, "limit": 100}`)
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var rb runBody
			require.NoError(b, checkJSON(body), "not decoded")
			require.True(b, decodeRunBody(body, &rb), "not decoded")
		}
	})
	b.Run("general", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, err := generalRunBody(body)
			require.NoError(b, err)
		}
	})
}

// TestReadBody checks that a body is read whole whatever its declared
// length says, and that the byte limit holds either way.
func TestReadBody(t *testing.T) {
	for _, c := range []struct {
		name     string
		body     string
		declared int64
		max      int64
		tooLarge bool
	}{
		{"as declared", `{"a": 1}`, 8, 100, false},
		{"undeclared", `{"a": 1}`, -1, 100, false},
		{"shorter than declared", `{"a"`, 8, 100, false},
		{"longer than declared", `{"a": 1} and more`, 8, 100, false},
		{"longer than declared, past the limit", strings.Repeat("x", 50), 8, 20, true},
		{"undeclared, past the limit", strings.Repeat("x", 50), -1, 20, true},
		{"at the limit", strings.Repeat("x", 20), 20, 20, false},
		{"declared at the limit, one longer", strings.Repeat("x", 21), 20, 20, true},
		{"declared under the limit, longer up to it", strings.Repeat("x", 20), 18, 20, false},
		{"declared under the limit, longer past it", strings.Repeat("x", 21), 18, 20, true},
		{"declared one under the limit, one longer", strings.Repeat("x", 20), 19, 20, false},
		{"declared one under the limit, two longer", strings.Repeat("x", 21), 19, 20, true},
	} {
		r := httptest.NewRequest("POST", "/", strings.NewReader(c.body))
		r.ContentLength = c.declared
		got, err := readBody(httptest.NewRecorder(), r, c.max)
		var mbe *http.MaxBytesError
		switch {
		case c.tooLarge && !errors.As(err, &mbe):
			t.Errorf("%s: error %v, want a MaxBytesError", c.name, err)
		case !c.tooLarge && (err != nil || string(got) != c.body):
			t.Errorf("%s: %q, %v; want %q", c.name, got, err, c.body)
		}
	}
}
