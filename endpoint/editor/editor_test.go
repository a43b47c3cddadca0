package editor_test

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/editor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func get(t *testing.T, h http.Handler, method, path string, header http.Header) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func body(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return string(b)
}

// TestServesThePageAndItsAssets: the page at "/", its script and style
// beside it, each with its type and the security headers; nothing else.
func TestServesThePageAndItsAssets(t *testing.T) {
	h := editor.New(editor.WithAPI("/analytics/"), editor.WithProject("42"))
	for _, tc := range []struct{ path, ctype, contains string }{
		{"/", "text/html; charset=utf-8", `<meta name="endpointkit-api" content="/analytics">`},
		{"/app.js", "text/javascript; charset=utf-8", "scanPlaceholders"},
		{"/style.css", "text/css; charset=utf-8", "svg.chart"},
	} {
		res := get(t, h, "GET", tc.path, nil)
		got, want := res.StatusCode, http.StatusOK
		require.Equal(t, want, got, "%v: res.StatusCode", tc.path)
		if got, want := res.Header.Get("Content-Type"), tc.ctype; got != want {
			t.Errorf("%v: res.Header.Get(\"Content-Type\") = %q, want %q", tc.path, got, want)
		}
		s, sub := body(t, res), tc.contains
		assert.Contains(t, s, sub, "%v", tc.path)
		assert.Equal(t, "nosniff", res.Header.Get("X-Content-Type-Options"), "%v: res.Header.Get(\"X-Content-Type-Options\")", tc.path)
		assert.Equal(t, "no-referrer", res.Header.Get("Referrer-Policy"), "%v: res.Header.Get(\"Referrer-Policy\")", tc.path)
		assert.Equal(t, "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'self'", res.Header.Get("Content-Security-Policy"), "%v: res.Header.Get(\"Content-Security-Policy\")", tc.path)
		etag := res.Header.Get("ETag")
		v := etag
		require.NotEqual(t, "", v, "%v: etag is empty", tc.path)
		again := get(t, h, "GET", tc.path, http.Header{"If-None-Match": {etag}})
		if got, want := again.StatusCode, http.StatusNotModified; got != want {
			t.Errorf("%s is revalidated by its ETag: again.StatusCode = %v, want %v", tc.path, got, want)
		}
	}
	assert.Contains(t, body(t, get(t, h, "GET", "/", nil)), `<meta name="endpointkit-project" content="42">`)
	for _, path := range []string{"/index.html", "/static/app.js", "/app.js/", "/nope", "/x/"} {
		assert.Equal(t, http.StatusNotFound, get(t, h, "GET", path, nil).StatusCode, "%v: get(t, h, \"GET\", path, nil).StatusCode", path)
	}
	res := get(t, h, "POST", "/", nil)
	assert.Equal(t, http.StatusMethodNotAllowed, res.StatusCode)
	assert.Equal(t, "GET, HEAD", res.Header.Get("Allow"))
	head := get(t, h, "HEAD", "/app.js", nil)
	assert.Equal(t, http.StatusOK, head.StatusCode)
	v := body(t, head)
	assert.True(t, (v == ""), "body(t, head) = %v, want it empty", v)
}

// TestSettingsAreEscaped: the settings enter the page as attribute text,
// never as markup.
func TestSettingsAreEscaped(t *testing.T) {
	h := editor.New(editor.WithAPI(`/a"><script>alert(1)</script>`), editor.WithProject(`"><b>`))
	page := body(t, get(t, h, "GET", "/", nil))
	assert.NotContains(t, page, "<script>alert(1)</script>")
	assert.NotContains(t, page, `"><b>`)
	assert.Contains(t, page, `content="/a&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"`)
}

// TestAbsoluteAPI: an API on another origin is the one other origin the
// page may reach.
func TestAbsoluteAPI(t *testing.T) {
	h := editor.New(editor.WithAPI("https://api.example.com/analytics"))
	csp := get(t, h, "GET", "/", nil).Header.Get("Content-Security-Policy")
	assert.Contains(t, csp, "connect-src 'self' https://api.example.com;")
}

// TestMountedUnderAPath: with http.StripPrefix the page serves at any path
// of a host's mux, its relative links resolving beside it.
func TestMountedUnderAPath(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/tools/editor/", http.StripPrefix("/tools/editor", editor.New()))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	res, err := http.Get(srv.URL + "/tools/editor")
	require.NoError(t, err)
	defer res.Body.Close()
	got, want := res.StatusCode, http.StatusOK
	require.Equal(t, want, got, "the mux redirects to the trailing slash: res.StatusCode")
	page := body(t, res)
	for _, m := range regexp.MustCompile(`(?:src|href)="([^"#]+)"`).FindAllStringSubmatch(page, -1) {
		r, err := http.Get(srv.URL + "/tools/editor/" + m[1])
		require.NoError(t, err)
		r.Body.Close()
		got, want := r.StatusCode, http.StatusOK
		assert.Equal(t, want, got, "link %s: r.StatusCode", m[1])
	}
}

// TestNoRemoteResources: the page works offline: no file of it names
// another origin (the SVG namespace is a name, not a request).
func TestNoRemoteResources(t *testing.T) {
	err := filepath.WalkDir("static", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		text := strings.ReplaceAll(string(b), "http://www.w3.org/2000/svg", "")
		for _, bad := range []string{"http://", "https://", "//cdn", "@import"} {
			assert.NotContains(t, text, bad, "%v", path)
		}
		return nil
	})
	require.NoError(t, err)
}

// TestEveryInputHasALabel: each input, select and textarea of the page's
// markup has a <label for> (the inputs the script adds are checked in the
// browser tests of examples/server).
func TestEveryInputHasALabel(t *testing.T) {
	b, err := os.ReadFile("static/index.html")
	require.NoError(t, err)
	page := string(b)
	labelled := map[string]bool{}
	for _, m := range regexp.MustCompile(`<label[^>]*\bfor="([^"]+)"`).FindAllStringSubmatch(page, -1) {
		labelled[m[1]] = true
	}
	controls := regexp.MustCompile(`<(?:input|select|textarea)\b[^>]*\bid="([^"]+)"`).FindAllStringSubmatch(page, -1)
	v := controls
	require.NotEmpty(t, v, "controls is empty")
	for _, m := range controls {
		assert.True(t, (labelled[m[1]]), "#%s has no <label for>: labelled[m[1]] is false", m[1])
	}
	got, want := len(regexp.MustCompile(`<(?:input|select|textarea)\b`).FindAllString(page, -1)), len(controls)
	assert.Equal(t, want, got, "every control has an id")
}

// TestEveryKindIsOffered: the page offers every query kind the Service
// accepts, with a sample query of that kind in the script.
func TestEveryKindIsOffered(t *testing.T) {
	h := editor.New()
	page := body(t, get(t, h, "GET", "/", nil))
	script := body(t, get(t, h, "GET", "/app.js", nil))
	for _, kind := range []string{endpoint.KindSQL, endpoint.KindTrends, endpoint.KindRetention, endpoint.KindLifecycle} {
		s, sub := page, `<option value="`+kind+`">`
		assert.Contains(t, s, sub, "%v", kind)
		if kind != endpoint.KindSQL {
			s, sub := script, "kind: '"+kind+"'"
			assert.Contains(t, s, sub, "%v", kind)
		}
	}
}

// TestFilesStayOutOfTheHeap: a handler keeps its script and style where
// the binary embeds them, not as copies on the heap, whose live size sets
// the garbage collector's goal for every request the process serves: the
// files are 550 KB (536 KB on the heap before), a handler holds a few KB
// (its page and headers).
func TestFilesStayOutOfTheHeap(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	h := editor.New()
	runtime.GC()
	runtime.ReadMemStats(&after)
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	assert.Less(t, grown, int64(256<<10), "a handler keeps %d bytes on the heap", grown)
	runtime.KeepAlive(h)
}
