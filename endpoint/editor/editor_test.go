package editor_test

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/editor"
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
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
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
		if got, want := res.StatusCode, http.StatusOK; got != want {
			t.Fatalf("%v: res.StatusCode = %v, want %v", tc.path, got, want)
		}
		if got, want := res.Header.Get("Content-Type"), tc.ctype; got != want {
			t.Errorf("%v: res.Header.Get(\"Content-Type\") = %q, want %q", tc.path, got, want)
		}
		if s, sub := body(t, res), tc.contains; !strings.Contains(s, sub) {
			t.Errorf("%v: %q does not contain %q", tc.path, s, sub)
		}
		if got, want := res.Header.Get("X-Content-Type-Options"), "nosniff"; got != want {
			t.Errorf("%v: res.Header.Get(\"X-Content-Type-Options\") = %q, want %q", tc.path, got, want)
		}
		if got, want := res.Header.Get("Referrer-Policy"), "no-referrer"; got != want {
			t.Errorf("%v: res.Header.Get(\"Referrer-Policy\") = %q, want %q", tc.path, got, want)
		}
		if got, want := res.Header.Get("Content-Security-Policy"), "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'self'"; got != want {
			t.Errorf("%v: res.Header.Get(\"Content-Security-Policy\") = %q, want %q", tc.path, got, want)
		}
		etag := res.Header.Get("ETag")
		if v := etag; v == "" {
			t.Fatalf("%v: etag is empty", tc.path)
		}
		again := get(t, h, "GET", tc.path, http.Header{"If-None-Match": {etag}})
		if got, want := again.StatusCode, http.StatusNotModified; got != want {
			t.Errorf("%s is revalidated by its ETag: again.StatusCode = %v, want %v", tc.path, got, want)
		}
	}
	if s, sub := body(t, get(t, h, "GET", "/", nil)), `<meta name="endpointkit-project" content="42">`; !strings.Contains(s, sub) {
		t.Errorf("%q does not contain %q", s, sub)
	}
	for _, path := range []string{"/index.html", "/static/app.js", "/app.js/", "/nope", "/x/"} {
		if got, want := get(t, h, "GET", path, nil).StatusCode, http.StatusNotFound; got != want {
			t.Errorf("%v: get(t, h, \"GET\", path, nil).StatusCode = %v, want %v", path, got, want)
		}
	}
	res := get(t, h, "POST", "/", nil)
	if got, want := res.StatusCode, http.StatusMethodNotAllowed; got != want {
		t.Errorf("res.StatusCode = %v, want %v", got, want)
	}
	if got, want := res.Header.Get("Allow"), "GET, HEAD"; got != want {
		t.Errorf("res.Header.Get(\"Allow\") = %q, want %q", got, want)
	}
	head := get(t, h, "HEAD", "/app.js", nil)
	if got, want := head.StatusCode, http.StatusOK; got != want {
		t.Errorf("head.StatusCode = %v, want %v", got, want)
	}
	if v := body(t, head); !(v == "") {
		t.Errorf("body(t, head) = %v, want it empty", v)
	}
}

// TestSettingsAreEscaped: the settings enter the page as attribute text,
// never as markup.
func TestSettingsAreEscaped(t *testing.T) {
	h := editor.New(editor.WithAPI(`/a"><script>alert(1)</script>`), editor.WithProject(`"><b>`))
	page := body(t, get(t, h, "GET", "/", nil))
	if s, sub := page, "<script>alert(1)</script>"; strings.Contains(s, sub) {
		t.Errorf("%q contains %q", s, sub)
	}
	if s, sub := page, `"><b>`; strings.Contains(s, sub) {
		t.Errorf("%q contains %q", s, sub)
	}
	if s, sub := page, `content="/a&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"`; !strings.Contains(s, sub) {
		t.Errorf("%q does not contain %q", s, sub)
	}
}

// TestAbsoluteAPI: an API on another origin is the one other origin the
// page may reach.
func TestAbsoluteAPI(t *testing.T) {
	h := editor.New(editor.WithAPI("https://api.example.com/analytics"))
	csp := get(t, h, "GET", "/", nil).Header.Get("Content-Security-Policy")
	if s, sub := csp, "connect-src 'self' https://api.example.com;"; !strings.Contains(s, sub) {
		t.Errorf("%q does not contain %q", s, sub)
	}
}

// TestMountedUnderAPath: with http.StripPrefix the page serves at any path
// of a host's mux, its relative links resolving beside it.
func TestMountedUnderAPath(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/tools/editor/", http.StripPrefix("/tools/editor", editor.New()))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	res, err := http.Get(srv.URL + "/tools/editor")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	defer res.Body.Close()
	if got, want := res.StatusCode, http.StatusOK; got != want {
		t.Fatalf("the mux redirects to the trailing slash: res.StatusCode = %v, want %v", got, want)
	}
	page := body(t, res)
	for _, m := range regexp.MustCompile(`(?:src|href)="([^"#]+)"`).FindAllStringSubmatch(page, -1) {
		r, err := http.Get(srv.URL + "/tools/editor/" + m[1])
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		r.Body.Close()
		if got, want := r.StatusCode, http.StatusOK; got != want {
			t.Errorf("link %s: r.StatusCode = %v, want %v", m[1], got, want)
		}
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
			if s, sub := text, bad; strings.Contains(s, sub) {
				t.Errorf("%v: %q contains %q", path, s, sub)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
}

// TestEveryInputHasALabel: each input, select and textarea of the page's
// markup has a <label for> (the inputs the script adds are checked in the
// browser tests of examples/server).
func TestEveryInputHasALabel(t *testing.T) {
	b, err := os.ReadFile("static/index.html")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	page := string(b)
	labelled := map[string]bool{}
	for _, m := range regexp.MustCompile(`<label[^>]*\bfor="([^"]+)"`).FindAllStringSubmatch(page, -1) {
		labelled[m[1]] = true
	}
	controls := regexp.MustCompile(`<(?:input|select|textarea)\b[^>]*\bid="([^"]+)"`).FindAllStringSubmatch(page, -1)
	if v := controls; len(v) == 0 {
		t.Fatalf("controls is empty")
	}
	for _, m := range controls {
		if !(labelled[m[1]]) {
			t.Errorf("#%s has no <label for>: labelled[m[1]] is false", m[1])
		}
	}
	if got, want := len(regexp.MustCompile(`<(?:input|select|textarea)\b`).FindAllString(page, -1)), len(controls); got != want {
		t.Errorf("every control has an id: got = %v, want %v", got, want)
	}
}

// TestEveryKindIsOffered: the page offers every query kind the Service
// accepts, with a sample query of that kind in the script.
func TestEveryKindIsOffered(t *testing.T) {
	h := editor.New()
	page := body(t, get(t, h, "GET", "/", nil))
	script := body(t, get(t, h, "GET", "/app.js", nil))
	for _, kind := range []string{endpoint.KindSQL, endpoint.KindTrends, endpoint.KindRetention, endpoint.KindLifecycle} {
		if s, sub := page, `<option value="`+kind+`">`; !strings.Contains(s, sub) {
			t.Errorf("%v: %q does not contain %q", kind, s, sub)
		}
		if kind != endpoint.KindSQL {
			if s, sub := script, "kind: '"+kind+"'"; !strings.Contains(s, sub) {
				t.Errorf("%v: %q does not contain %q", kind, s, sub)
			}
		}
	}
}
