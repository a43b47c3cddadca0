// Package editor serves the endpoint editor: one page of static HTML, CSS
// and JavaScript, embedded in the binary (no CDN; it works offline), where
// a person writes a query with {variables.x}
// placeholders, adds the variables, runs the query with test values, sees
// the rows (or a Trends chart), whether it could be materialized, and saves
// it as an endpoint; then lists the saved endpoints (kind, version,
// materialization, freshness), runs them, edits them into new versions,
// materializes and deletes them. Insight queries (TrendsQuery,
// RetentionQuery, LifecycleQuery) are built in a form that writes the JSON
// the API takes, the JSON staying editable; a tab lists the tables and
// columns the project may read (GET schema).
//
// The page guesses nothing the server knows: the run form of a saved
// endpoint offers the variables of the request schema of the endpoint's
// OpenAPI document (GET endpoints/{name}/openapi.json?version=N), which
// follows its state (a materialized insight endpoint takes its breakdowns,
// required, and no dates).
//
// The page talks to the HTTP API of package httpapi with the user's API
// key, which it asks for once and keeps in the tab's sessionStorage only.
// Serve it beside the API, on the same origin:
//
//	mux.Handle("/analytics/", httpapi.New(svc, keys, httpapi.WithPrefix("/analytics")))
//	mux.Handle("/editor/", http.StripPrefix("/editor", editor.New(editor.WithAPI("/analytics"))))
//
// The handler serves the page at "/" and its two assets beside it, so that
// a host mounts it at any path with http.StripPrefix (or at the root as it
// is). Its answers carry a Content-Security-Policy that lets the page run
// only its own script and reach only the API, so that a script injected
// into the page's data could neither run nor send the key elsewhere.
package editor

import (
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// static holds the page's template.
//
//go:embed static/index.html
var static embed.FS

// The files served as they are, embedded as strings: their bytes stay in
// the binary's read-only data, where embed.FS's ReadFile would copy their 550 KB
// onto the heap of every process that serves the page, raising the
// garbage collector's goal and work per request of the whole process.
var (
	//go:embed static/app.js
	appJS string
	//go:embed static/editor.bundle.js
	bundleJS string
	//go:embed static/style.css
	styleCSS string
)

// Option changes how New builds the page.
type Option func(*config)

type config struct {
	api     string
	project string
	dialect string
}

// WithAPI tells the page where the HTTP API is: the prefix given to
// httpapi.WithPrefix ("/analytics"), or an absolute URL of another origin
// ("https://api.example.com/analytics"; that origin must then allow the
// page's origin by CORS). The default, "", is the API at the root of the
// page's own origin.
func WithAPI(prefix string) Option {
	return func(c *config) { c.api = strings.TrimSuffix(prefix, "/") }
}

// WithProject sets the project id the page proposes when it asks for the
// API key (the user may change it); the default is "1".
func WithProject(id string) Option {
	return func(c *config) { c.project = id }
}

// WithDialect names the engine whose SQL the editor highlights and
// completes: an engine's name as package engine gives it ("sqlite",
// "postgresql", "mysql", "mariadb", "clickhouse"). The default, "", is
// standard SQL.
func WithDialect(engine string) Option {
	return func(c *config) { c.dialect = strings.ToLower(strings.TrimSpace(engine)) }
}

// asset is one file the handler serves, ready to write.
type asset struct {
	body        string
	contentType string
	etag        string
}

type handler struct {
	assets map[string]asset
	csp    string
}

// New returns the handler of the editor page. It serves GET and HEAD of
// "/" (the page) and of "/app.js", "/editor.bundle.js" and "/style.css";
// anything else is a 404 or a 405.
func New(opts ...Option) http.Handler {
	cfg := config{project: "1"}
	for _, o := range opts {
		o(&cfg)
	}
	page, err := renderPage(cfg)
	if err != nil {
		// The template is embedded and its data are strings: a failure
		// is a defect of this package, found by its tests.
		panic("editor: " + err.Error())
	}
	h := &handler{assets: map[string]asset{"/": newAsset(page, "text/html; charset=utf-8")}, csp: policy(cfg.api)}
	const js = "text/javascript; charset=utf-8"
	h.assets["/app.js"] = newAsset(appJS, js)
	h.assets["/editor.bundle.js"] = newAsset(bundleJS, js)
	h.assets["/style.css"] = newAsset(styleCSS, "text/css; charset=utf-8")
	return h
}

func newAsset(body, contentType string) asset {
	sum := sha256.Sum256([]byte(body))
	return asset{body: body, contentType: contentType, etag: `"` + base64.RawURLEncoding.EncodeToString(sum[:12]) + `"`}
}

// renderPage fills the page's settings into index.html.
func renderPage(cfg config) (string, error) {
	t, err := template.ParseFS(static, "static/index.html")
	if err != nil {
		return "", err
	}
	var buf strings.Builder
	if err := t.Execute(&buf, struct{ API, Project, Dialect string }{cfg.api, cfg.project, cfg.dialect}); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// policy is the Content-Security-Policy of every answer: the page's own
// script and style only, no inline code, and requests to its own origin
// and the API's.
func policy(api string) string {
	connect := "'self'"
	if u, err := url.Parse(api); err == nil && u.Scheme != "" && u.Host != "" {
		connect += " " + u.Scheme + "://" + u.Host
	}
	return "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src " + connect +
		"; base-uri 'none'; form-action 'none'; frame-ancestors 'self'"
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a, ok := h.assets[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, fmt.Sprintf("method %s not allowed", r.Method), http.StatusMethodNotAllowed)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", a.contentType)
	hd.Set("Content-Security-Policy", h.csp)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	// Revalidated on every load, so that a new version of the library
	// is never mixed with a cached script of the old one.
	hd.Set("Cache-Control", "no-cache")
	hd.Set("ETag", a.etag)
	http.ServeContent(w, r, "", time.Time{}, strings.NewReader(a.body))
}
