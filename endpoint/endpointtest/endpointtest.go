// Package endpointtest gives a host's unit tests a ready endpointkit in one
// call: a Service on real SQLite (a database file in the test's temporary
// directory, stores and analytics data in it), optionally loaded with the
// demo events, and an httptest server of the HTTP API behind an API key.
// A host then tests its own handlers and clients around endpointkit in a
// few lines, against the real library rather than a fake.
//
//	env := endpointtest.New(t, endpointtest.WithDemoEvents(1000))
//	res, err := env.Service.Run(ctx, env.Project, "daily", endpoint.RunRequest{...})
//	status, body := env.Do(t, "POST", "/endpoints/daily/run/", `{"variables": {...}}`) // (int, string)
//
// Everything is closed when the test ends.
package endpointtest

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite" // the "sqlite" driver

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec/sqliteinterrupt"
	"github.com/endpointkit/endpointkit/endpoint/sqlstore"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/sql/engine"
)

// Defaults of New.
const (
	// DefaultProject is the project the key may use.
	DefaultProject = "1"
	// DefaultKey is the API key of the server.
	DefaultKey = "endpointtest-key"
	// DemoSeed is the seed of the demo events, so that answers repeat.
	DemoSeed = 1
)

// Env is a ready endpointkit for one test.
type Env struct {
	// Service is the Go API.
	Service *endpoint.Service
	// DB is the SQLite database that runs read and the stores live in:
	// create the tables the host's queries read here.
	DB *sql.DB
	// Server serves the HTTP API (at Server.URL + "/api/projects/...").
	Server *httptest.Server
	// Project is the project Key may use; Key is sent as a Bearer token by Do.
	Project, Key string
}

// Option changes what New builds.
type Option func(*options)

type options struct {
	demoEvents int
	project    string
	key        string
	config     func(*endpoint.Config)
	http       []httpapi.Option
}

// WithDemoEvents loads n demo events (package examples/demo) into the
// events table; without it the table exists but is empty.
func WithDemoEvents(n int) Option { return func(o *options) { o.demoEvents = n } }

// WithProject sets the project the key may use (DefaultProject otherwise).
func WithProject(project string) Option { return func(o *options) { o.project = project } }

// WithKey sets the API key (DefaultKey otherwise).
func WithKey(key string) Option { return func(o *options) { o.key = key } }

// WithConfig lets the test change the Service's configuration (a clock, a
// limit) after New has filled in the stores and the executor.
func WithConfig(fn func(*endpoint.Config)) Option { return func(o *options) { o.config = fn } }

// WithHTTPOptions passes options to the HTTP handler (httpapi.New).
func WithHTTPOptions(opts ...httpapi.Option) Option {
	return func(o *options) { o.http = append(o.http, opts...) }
}

// New builds an Env for t and closes it when t ends; a failure to build it
// fails t at once.
func New(t testing.TB, opts ...Option) *Env {
	t.Helper()
	dir := t.TempDir()
	e, err := start(dir, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

// Start builds an Env outside a test (in an Example, or a TestMain),
// keeping its database in dir; Close it when done.
func Start(dir string, opts ...Option) (*Env, error) { return start(dir, opts...) }

func start(dir string, opts ...Option) (_ *Env, err error) {
	o := options{project: DefaultProject, key: DefaultKey}
	for _, opt := range opts {
		opt(&o)
	}
	ctx := context.Background()
	dsn := "file:" + (&url.URL{Path: filepath.Join(dir, "endpointkit.db")}).EscapedPath() +
		"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("endpointtest: open SQLite: %w", err)
	}
	defer func() {
		if err != nil {
			db.Close()
		}
	}()
	if err := demo.Load(ctx, db, o.demoEvents, DemoSeed); err != nil {
		return nil, fmt.Errorf("endpointtest: load %d demo events: %w", o.demoEvents, err)
	}
	store, err := sqlstore.New(db, engine.SQLite)
	if err != nil {
		return nil, fmt.Errorf("endpointtest: %w", err)
	}
	if err := store.Migrate(ctx); err != nil {
		return nil, fmt.Errorf("endpointtest: migrate the store: %w", err)
	}
	cfg := endpoint.Config{
		Endpoints: store.Endpoints(),
		Variables: store.Variables(),
		Executor:  sqlexec.New(db, engine.SQLite, sqlexec.WithInterrupt(sqliteinterrupt.For)),
	}
	if o.config != nil {
		o.config(&cfg)
	}
	svc, err := endpoint.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("endpointtest: %w", err)
	}
	keys := httpapi.NewKeyring()
	if err := keys.Add(o.key, o.project); err != nil {
		return nil, fmt.Errorf("endpointtest: key: %w", err)
	}
	srv := httptest.NewServer(httpapi.New(svc, keys, o.http...))
	return &Env{Service: svc, DB: db, Server: srv, Project: o.project, Key: o.key}, nil
}

// Close stops the server, writes the run log entries still queued
// (Service.Close) and closes the database.
func (e *Env) Close() {
	e.Server.Close()
	_ = e.Service.Close(context.Background())
	e.DB.Close()
}

// URL returns the address of a path of the project's API: URL("/endpoints/")
// is Server.URL + "/api/projects/<Project>/endpoints/".
func (e *Env) URL(path string) string {
	return e.Server.URL + "/api/projects/" + url.PathEscape(e.Project) + "/" + strings.TrimPrefix(path, "/")
}

// Do sends a request to a path of the project's API (see URL) with the key
// and a JSON body ("" for none), and returns the status and the body. A
// failure to send or read fails t.
func (e *Env) Do(t testing.TB, method, path, body string) (int, string) {
	t.Helper()
	status, answer, err := e.Send(method, path, body)
	if err != nil {
		t.Fatal(err)
	}
	return status, answer
}

// Send is Do outside a test: it returns the failure to send or read.
func (e *Env) Send(method, path, body string) (int, string, error) {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.URL(path), r)
	if err != nil {
		return 0, "", fmt.Errorf("endpointtest: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+e.Key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := e.Server.Client().Do(req)
	if err != nil {
		return 0, "", fmt.Errorf("endpointtest: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, "", fmt.Errorf("endpointtest: read the answer of %s %s: %w", method, path, err)
	}
	return resp.StatusCode, string(b), nil
}
