package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// root is the repository's root, from this package's directory.
const root = "../.."

// pages are the documents whose examples the tests run, in the order they
// run: the README first, then docs/ with the HTTP API before the pages
// whose examples use what its examples saved.
var pages = []string{
	"README.md",
	"docs/http-api.md",
	"docs/security.md",
	"docs/scale.md",
	"docs/mcp.md",
	"docs/embedding.md",
	"docs/editor.md",
	"docs/server.md",
	"docs/engines.md",
	"docs/design.md",
}

// block is a fenced code block of a document.
type block struct {
	page string // its path from the root
	line int    // the line of its opening fence, from 1
	lang string // the fence's info string: sh, go, json, ...
	text string // its lines, each ending in "\n"
}

func (b block) String() string { return b.page + ":" + strconv.Itoa(b.line) }

// blocks are the fenced code blocks of page.
func blocks(t *testing.T, page string) []block {
	t.Helper()
	text := readDoc(t, page)
	var out []block
	var cur *block
	for i, line := range strings.SplitAfter(text, "\n") {
		trimmed := strings.TrimRight(line, "\n")
		switch {
		case cur == nil && strings.HasPrefix(trimmed, "```"):
			cur = &block{page: page, line: i + 1, lang: strings.TrimSpace(strings.TrimPrefix(trimmed, "```"))}
		case cur != nil && trimmed == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.text += trimmed + "\n"
		}
	}
	require.Nil(t, cur, "%s: a code block is not closed", page)
	return out
}

// docPages are README.md and every page of docs/, which TestPagesAreListed
// holds to pages.
func docPages(t *testing.T) []string {
	t.Helper()
	out := []string{"README.md"}
	md, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	for _, p := range md {
		out = append(out, "docs/"+filepath.Base(p))
	}
	return out
}

// TestPagesAreListed: every page of docs/ is one whose examples run.
func TestPagesAreListed(t *testing.T) {
	for _, p := range docPages(t) {
		require.Contains(t, pages, p, "%s is not in pages: its examples would not run", p)
	}
}

// TestBlocksHaveALanguage: every code block says what it holds, so that
// none escapes the tests by having no language; shell examples are sh.
func TestBlocksHaveALanguage(t *testing.T) {
	known := map[string]bool{"sh": true, "go": true, "json": true, "js": true, "text": true}
	for _, p := range pages {
		for _, b := range blocks(t, p) {
			require.True(t, known[b.lang], "%s: a code block of language %q (want one of sh, go, json, js, text)", b, b.lang)
		}
	}
}

// normalized is text with each line's leading and trailing blanks removed,
// and empty lines dropped, wrapped in newlines.
func normalized(text string) string {
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return "\n" + strings.Join(lines, "\n") + "\n"
}

// TestGoBlocksCompile: every Go block of the documents is a run of lines of
// a Go file of this package (the quick start and the insight examples run
// as Examples; the rest compiles), so that an example that would not
// compile fails the build here.
func TestGoBlocksCompile(t *testing.T) {
	files, err := filepath.Glob("*_test.go")
	require.NoError(t, err)
	var sources []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		sources = append(sources, normalized(string(b)))
	}
	n := 0
	for _, p := range pages {
		for _, b := range blocks(t, p) {
			if b.lang != "go" {
				continue
			}
			n++
			want := normalized(b.text)
			found := false
			for _, s := range sources {
				found = found || strings.Contains(s, want)
			}
			require.True(t, found, "%s: this Go block is not a run of lines of a Go file of internal/docs:\n%s", b, b.text)
		}
	}
	require.Greater(t, n, 10, "the Go blocks were not found")
}

// TestREADMEIsAFrontDoor: the README is at most 300 lines, starts with the
// two commands, and links every page of docs/.
func TestREADMEIsAFrontDoor(t *testing.T) {
	readme := readDoc(t, "README.md")
	require.LessOrEqual(t, strings.Count(readme, "\n"), 300, "README.md is longer than 300 lines")
	first := blocks(t, "README.md")[0]
	require.Contains(t, first.text, "go run ./examples/server")
	require.Contains(t, first.text, "go test ./...")
	for _, p := range docPages(t)[1:] {
		require.Contains(t, readme, "]("+p+")", "README.md does not link %s", p)
	}
}

// TestRouteTable: the HTTP API's route table is one table, with the
// schema, keys and embed-token routes among its rows.
func TestRouteTable(t *testing.T) {
	doc := readDoc(t, "docs/http-api.md")
	start := strings.Index(doc, "| method | path | body | success |")
	require.GreaterOrEqual(t, start, 0, "docs/http-api.md has no route table")
	var rows []string
	for _, l := range strings.Split(doc[start:], "\n")[2:] {
		if !strings.HasPrefix(l, "|") {
			break
		}
		rows = append(rows, l)
	}
	table := strings.Join(rows, "\n")
	for _, route := range []string{
		"| POST | `insight_variables/` |", "| POST | `endpoints/` |", "| POST | `endpoints/{name}/run` |",
		"| POST | `query/` |", "| GET | `schema/` |", "| POST | `keys/` |", "| GET | `keys/` |",
		"| DELETE | `keys/{key_id}/` |", "| POST | `embed_tokens/` |",
	} {
		require.Contains(t, table, route, "the route table lacks a row, or is cut before it")
	}
}

// TestLinks: every relative link of the documents names a file that
// exists, and a heading of it when it names one.
func TestLinks(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, p := range docPages(t) {
		for _, m := range link.FindAllStringSubmatch(readDoc(t, p), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := p
			if file != "" {
				path = filepath.ToSlash(filepath.Join(filepath.Dir(p), file))
			}
			_, err := os.Stat(filepath.Join(root, path))
			require.NoError(t, err, "%s links %s, which does not exist", p, target)
			if anchor != "" {
				require.Contains(t, anchors(t, path), anchor, "%s links %s: %s has no such heading", p, target, path)
			}
		}
	}
}

// anchors are the ids GitHub gives the headings of page.
func anchors(t *testing.T, page string) []string {
	t.Helper()
	var out []string
	inBlock := false
	for _, l := range strings.Split(readDoc(t, page), "\n") {
		if strings.HasPrefix(l, "```") {
			inBlock = !inBlock
		}
		if inBlock || !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.ToLower(strings.TrimSpace(strings.TrimLeft(l, "#")))
		var id strings.Builder
		for _, r := range h {
			switch {
			case r == ' ':
				id.WriteByte('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
				id.WriteRune(r)
			}
		}
		out = append(out, id.String())
	}
	return out
}

// readDoc is the text of the file at rel, a path from the module root.
func readDoc(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	require.NoError(t, err)
	return string(b)
}

// section is the part of the page at rel that starts with the line
// heading ("## Layout") and ends before the next heading of its level.
func section(t *testing.T, rel, heading string) string {
	t.Helper()
	text := readDoc(t, rel)
	start := strings.Index(text, "\n"+heading+"\n")
	require.GreaterOrEqual(t, start, 0, "%s has no %q section", rel, heading)
	text = text[start+1:]
	if end := strings.Index(text[len(heading):], "\n"+heading[:strings.Index(heading, " ")+1]); end >= 0 {
		text = text[:len(heading)+end+1]
	}
	return text
}
