package editor_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint/editor"
)

// webDir holds the sources of the code editor's bundle.
const webDir = "web"

// bundlePath is the committed bundle.
var bundlePath = filepath.Join("static", "editor.bundle.js")

// sourceFiles lists the bundle's sources as web/build.mjs does: its
// build script, package.json and package-lock.json, and every file under
// src, relative to web with '/' separators, in byte order.
func sourceFiles(t *testing.T) []string {
	t.Helper()
	out := []string{"build.mjs", "package-lock.json", "package.json"}
	err := filepath.WalkDir(filepath.Join(webDir, "src"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(webDir, path)
		if err != nil {
			return err
		}
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	require.NoError(t, err)
	slices.Sort(out)
	return out
}

// readSources reads the bundle's sources, by name.
func readSources(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, rel := range sourceFiles(t) {
		b, err := os.ReadFile(filepath.Join(webDir, filepath.FromSlash(rel)))
		require.NoError(t, err)
		out[rel] = b
	}
	return out
}

// digestOf is web/build.mjs's sourcesDigest: for each source in byte
// order of its name, its name, a newline, its length, a newline and its
// bytes, hashed with SHA-256.
func digestOf(files map[string][]byte) string {
	h := sha256.New()
	for _, rel := range slices.Sorted(maps.Keys(files)) {
		b := files[rel]
		h.Write([]byte(rel + "\n" + strconv.Itoa(len(b)) + "\n"))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}

var digestLine = regexp.MustCompile(`(?m)^ \* sources-sha256: ([0-9a-f]{64}) \*/$`)

// recordedDigest reads the digest the bundle's header records.
func recordedDigest(t *testing.T, bundle []byte) string {
	t.Helper()
	head := bundle[:min(len(bundle), 1024)]
	m := digestLine.FindSubmatch(head)
	require.NotNil(t, m, "the bundle's header records no sources-sha256 line: %q", head)
	return string(m[1])
}

// TestBundleMatchesItsSources: the committed bundle was built from the
// sources committed beside it (its header's digest is theirs). It needs no
// npm; when it fails, run scripts/editor-bundle and commit the bundle.
func TestBundleMatchesItsSources(t *testing.T) {
	bundle, err := os.ReadFile(bundlePath)
	require.NoError(t, err)
	assert.Equal(t, digestOf(readSources(t)), recordedDigest(t, bundle),
		"%s does not match its sources in %s: run scripts/editor-bundle and commit the result", bundlePath, webDir)
	// The sources are what the bundle is made of.
	assert.Contains(t, sourceFiles(t), "src/editor.js")
	assert.Contains(t, string(bundle), "endpointkitCodeEditor")
}

// TestBundleDigestSeesEveryChange: the digest changes with any byte of
// any source, so that an edit not rebuilt cannot pass the test above.
func TestBundleDigestSeesEveryChange(t *testing.T) {
	files := readSources(t)
	want := digestOf(files)
	for rel, orig := range files {
		files[rel] = append(bytes.Clone(orig), ' ')
		assert.NotEqual(t, want, digestOf(files), "a space added to %s", rel)
		files[rel] = orig
	}
	files["src/new.js"] = nil
	assert.NotEqual(t, want, digestOf(files), "a new source")
	delete(files, "src/new.js")
	assert.Equal(t, want, digestOf(files))
}

// TestBundleRebuilds rebuilds the bundle with the installed packages and
// compares it byte for byte with the committed one. It runs where the
// packages are installed (scripts/editor-bundle ran npm ci, so it works
// offline), or with ENDPOINTKIT_BUNDLE_REBUILD=1, which installs them
// first; CI has neither and relies on TestBundleMatchesItsSources.
func TestBundleRebuilds(t *testing.T) {
	installed := false
	if _, err := os.Stat(filepath.Join(webDir, "node_modules", ".bin", "esbuild")); err == nil {
		installed = true
	}
	force := os.Getenv("ENDPOINTKIT_BUNDLE_REBUILD") == "1"
	if !installed && !force {
		t.Skip("the bundle's packages are not installed (scripts/editor-bundle installs them; or set ENDPOINTKIT_BUNDLE_REBUILD=1)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node to rebuild the bundle with")
	}
	if !installed {
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir = webDir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "npm ci: %s", out)
	}
	tmp := filepath.Join(t.TempDir(), "editor.bundle.js")
	cmd := exec.Command(node, "build.mjs", tmp)
	cmd.Dir = webDir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "node build.mjs: %s", out)
	got, err := os.ReadFile(tmp)
	require.NoError(t, err)
	want, err := os.ReadFile(bundlePath)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(got, want), "the rebuilt bundle (%d bytes) differs from the committed %s (%d bytes): run scripts/editor-bundle and commit the result", len(got), bundlePath, len(want))
}

// TestServesTheBundle: the page loads the bundle before its own script,
// and the handler serves it as JavaScript with the page's policy.
func TestServesTheBundle(t *testing.T) {
	h := editor.New(editor.WithDialect(" ClickHouse "))
	page := body(t, get(t, h, "GET", "/", nil))
	bundleAt := bytes.Index([]byte(page), []byte(`<script src="editor.bundle.js" defer></script>`))
	appAt := bytes.Index([]byte(page), []byte(`<script src="app.js" defer></script>`))
	require.GreaterOrEqual(t, bundleAt, 0, "the page loads the bundle")
	assert.Less(t, bundleAt, appAt, "the bundle runs before app.js, which uses it")
	assert.Contains(t, page, `<meta name="endpointkit-dialect" content="clickhouse">`)
	res := get(t, h, "GET", "/editor.bundle.js", nil)
	require.Equal(t, 200, res.StatusCode)
	assert.Equal(t, "text/javascript; charset=utf-8", res.Header.Get("Content-Type"))
	want, err := os.ReadFile(bundlePath)
	require.NoError(t, err)
	assert.Equal(t, string(want), body(t, res))
}
