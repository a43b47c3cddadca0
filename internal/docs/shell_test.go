package docs

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/internal/exampleserver"
)

// notRun are the shell lines of the documents that no test runs, by their
// first words, each with why. Every other line of a sh block is a curl
// request run against the example server, or a go command checked
// against the code (checkGo).
var notRun = map[string]string{
	"claude mcp add":     "needs Claude Code; TestMCPOverHTTP (examples/server) runs the same URL and header",
	"scripts/engines up": "installs and starts database servers; .ci/run runs it before the suite",
}

// The example server of the shell examples: its key, metrics key and
// embed secret, and the day its demo events end, which the documents'
// answers assume.
const (
	docsKey        = "docs-example-key"
	docsMetricsKey = "docs-metrics-key"
	docsEmbed      = "docs-embed-secret-0123456789"
	docsDemoEnd    = "2025-06-01"
)

// serverBinary builds examples/server once per test binary.
var serverBinary = exampleserver.Binary

// command is one shell command of a block: its lines joined, with the
// status codes its trailing comment expects of its curl requests.
type command struct {
	text  string // as written, continuation lines included
	curls int    // curl requests it sends
	want  []int  // from its comment: "# -> 201"
}

var (
	wantStatus = regexp.MustCompile(`#\s*->\s*([0-9]{3})`)
	curlWord   = regexp.MustCompile(`(^|[\s(|;])curl\s`)
	assigned   = regexp.MustCompile(`(?:^|\s)([A-Z][A-Z0-9_]*)=`)
)

// commands splits a sh block into its commands: a line ending in a
// backslash, or inside a single-quoted word, continues on the next line.
// Comment lines are dropped.
func commands(text string) []command {
	var out []command
	var cur strings.Builder
	quoted := false
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if cur.Len() == 0 && (strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#")) {
			continue
		}
		cur.WriteString(line + "\n")
		comment := -1
		for i := 0; i < len(line); i++ {
			switch {
			case line[i] == '\'':
				quoted = !quoted
			case line[i] == '#' && !quoted && (i == 0 || line[i-1] == ' '):
				comment = i
			}
			if comment >= 0 {
				break
			}
		}
		code := line
		if comment >= 0 {
			code = line[:comment]
		}
		if quoted || strings.HasSuffix(strings.TrimRight(code, " "), "\\") {
			continue
		}
		c := command{text: cur.String()}
		c.curls = len(curlWord.FindAllString(stripQuoted(c.text), -1))
		if comment >= 0 {
			for _, m := range wantStatus.FindAllStringSubmatch(line[comment:], -1) {
				n, _ := strconv.Atoi(m[1])
				c.want = append(c.want, n)
			}
		}
		out = append(out, c)
		cur.Reset()
	}
	return out
}

// stripQuoted is s without its single-quoted words and comments, so that a
// "curl" inside a JSON body or a comment is not counted.
func stripQuoted(s string) string {
	var b strings.Builder
	quoted := false
	for _, line := range strings.Split(s, "\n") {
		for i := 0; i < len(line); i++ {
			if line[i] == '\'' {
				quoted = !quoted
				continue
			}
			if !quoted && line[i] == '#' && (i == 0 || line[i-1] == ' ') {
				break
			}
			if !quoted {
				b.WriteByte(line[i])
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// shellRunner runs the curl blocks in one working directory, keeping the
// variables a block assigns (TOKEN=$(curl ...)) for the blocks after it.
type shellRunner struct {
	dir, state, codes string
	base              string
	env               []string
}

// wrapper is the curl the blocks call: curl itself, with the status code
// of each request appended to $EK_CODES and the body written as curl
// would write it.
const wrapper = `set -eo pipefail
curl() {
	local body status
	body=$(mktemp)
	status=$(command curl -sS -o "$body" -w '%{http_code}' "$@") || { rm -f "$body"; return 1; }
	echo "$status" >> "$EK_CODES"
	cat "$body"
	rm -f "$body"
}
[ -f "$EK_STATE" ] && . "$EK_STATE"
`

// run runs block b and checks each curl request's status against what its
// command's comment says.
func (r *shellRunner) run(t *testing.T, b block, cmds []command) {
	t.Helper()
	require.NoError(t, os.WriteFile(r.codes, nil, 0o644))
	script := strings.NewReplacer("http://127.0.0.1:8080", r.base, "localhost:8080", strings.TrimPrefix(r.base, "http://")).Replace(b.text)
	var keep strings.Builder
	seen := map[string]bool{}
	for _, m := range assigned.FindAllStringSubmatch(stripQuoted(b.text), -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			fmt.Fprintf(&keep, "printf '%%s=%%q\\n' %s \"$%s\" >> \"$EK_STATE\"\n", m[1], m[1])
		}
	}
	cmd := exec.Command("bash", "-c", wrapper+script+"\n"+keep.String())
	cmd.Dir = r.dir
	cmd.Env = r.env
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s: the block failed:\n%s\noutput:\n%s", b, b.text, out)
	codes, err := os.ReadFile(r.codes)
	require.NoError(t, err)
	var got []int
	for _, f := range strings.Fields(string(codes)) {
		n, _ := strconv.Atoi(f)
		got = append(got, n)
	}
	var want []int
	for _, c := range cmds {
		want = append(want, c.want...)
	}
	assert.Equal(t, want, got, "%s: the status codes of the block's requests (want: its # -> comments)\n%s\noutput:\n%s", b, b.text, out)
}

// TestShellExamples runs every curl request of the documents' sh blocks,
// in the order of pages and of each page, against one example server, and
// checks the status each one's comment names (# -> 201); a go command is
// checked against the code (checkGo). A request without a status comment,
// or a line that is neither, fails the test, unless notRun names it.
func TestShellExamples(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s on PATH: the shell examples run in bash, as curl requests whose answers jq reads (scripts/engines up tools installs curl and jq)", tool)
		}
	}

	type runnable struct {
		b    block
		cmds []command
	}
	var curlBlocks []runnable
	goLines := 0
	for _, p := range pages {
		for _, b := range blocks(t, p) {
			if b.lang != "sh" {
				continue
			}
			cmds := commands(b.text)
			curls, gos, others := 0, 0, 0
			for _, c := range cmds {
				words := strings.Fields(c.text)
				switch {
				case c.curls > 0:
					require.Len(t, c.want, c.curls, "%s: each curl request needs its status in a comment (# -> 200):\n%s", b, c.text)
					curls++
				case len(words) > 0 && words[0] == "go":
					checkGo(t, b, c.text)
					gos++
				case notRunReason(c.text) != "":
					t.Logf("%s: not run (%s): %s", b, notRunReason(c.text), strings.TrimSpace(c.text))
				default:
					others++ // cat, jq, an assignment: run with the requests around it
				}
			}
			require.False(t, curls > 0 && gos > 0, "%s: a block mixes curl requests and go commands", b)
			require.False(t, others > 0 && curls == 0, "%s: a block of commands that are neither curl requests nor go commands:\n%s", b, b.text)
			if curls > 0 {
				curlBlocks = append(curlBlocks, runnable{b, cmds})
			}
			goLines += gos
		}
	}
	require.NotEmpty(t, curlBlocks, "no curl examples found")
	require.NotZero(t, goLines, "no go commands found")

	base := exampleserver.Start(t, "-api-key", docsKey, "-metrics-key", docsMetricsKey, "-embed-secret", docsEmbed,
		"-demo-end", docsDemoEnd, "-demo-events", "3000")
	dir := t.TempDir()
	r := &shellRunner{
		dir:   dir,
		state: filepath.Join(dir, ".state"),
		codes: filepath.Join(dir, ".codes"),
		base:  base,
	}
	r.env = append(os.Environ(),
		"KEY="+docsKey,
		"URL="+base+"/api/projects/1",
		"METRICS_KEY="+docsMetricsKey,
		"EK_STATE="+r.state,
		"EK_CODES="+r.codes,
	)
	for _, c := range curlBlocks {
		r.run(t, c.b, c.cmds)
	}
}

// notRunReason is why the command is not run, or "".
func notRunReason(text string) string {
	for prefix, why := range notRun {
		if strings.HasPrefix(strings.TrimSpace(text), prefix) {
			return why
		}
	}
	return ""
}

// checkGo checks a go command of the documents against the code, without
// running it: the packages it names exist, a go run's flags are the
// program's, and its -run and -bench patterns match a function of the
// packages' tests.
func checkGo(t *testing.T, b block, text string) {
	t.Helper()
	args := shellWords(strings.ReplaceAll(text, "\\\n", " "))
	if i := indexOf(args, "#"); i >= 0 {
		args = args[:i]
	}
	require.GreaterOrEqual(t, len(args), 2, "%s: %q", b, text)
	switch args[1] {
	case "run":
		require.GreaterOrEqual(t, len(args), 3, "%s: %q", b, text)
		dir := filepath.Join(root, args[2])
		src := goSources(t, dir, false)
		require.Contains(t, src, "package main", "%s: %s is not a program", b, args[2])
		for _, a := range args[3:] {
			// A word with a space is a quoted value (-server-args '-x y'), not a flag.
			if name, ok := strings.CutPrefix(a, "-"); ok && !strings.Contains(a, " ") {
				name, _, _ = strings.Cut(name, "=")
				require.Contains(t, src, strconv.Quote(name), "%s: %s has no flag -%s", b, args[2], name)
			}
		}
	case "test":
		var pkgs, patterns []string
		for i := 2; i < len(args); i++ {
			a := args[i]
			switch {
			case a == "-run" || a == "-bench":
				i++
				require.Less(t, i, len(args), "%s: %s without a pattern", b, a)
				patterns = append(patterns, args[i])
			case a == "-tags":
				i++
				for _, tag := range strings.Split(args[i], " ") {
					require.Contains(t, []string{"long", "chdb"}, tag, "%s: unknown build tag %q", b, tag)
				}
			case a == "-timeout" || a == "-count" || a == "-benchtime":
				i++
			case strings.HasPrefix(a, "-"):
			default:
				pkgs = append(pkgs, a)
			}
		}
		require.NotEmpty(t, pkgs, "%s: %q names no package", b, text)
		var tests string
		for _, p := range pkgs {
			if p == "./..." {
				continue
			}
			tests += goSources(t, filepath.Join(root, strings.TrimSuffix(p, "/")), true)
		}
		funcs := regexp.MustCompile(`(?m)^func ((?:Test|Benchmark|Example|Fuzz)\w*)\(`).FindAllStringSubmatch(tests, -1)
		for _, pat := range patterns {
			if pat == "^$" || pat == "." {
				continue
			}
			re, err := regexp.Compile(strings.Split(pat, "/")[0])
			require.NoError(t, err, "%s: the pattern %q", b, pat)
			matched := false
			for _, f := range funcs {
				matched = matched || re.MatchString(f[1])
			}
			require.True(t, matched, "%s: %q matches no test or benchmark of %v", b, pat, pkgs)
		}
	default:
		t.Fatalf("%s: go %s is not checked: %q", b, args[1], text)
	}
}

// goSources is the text of the Go files of dir, its tests' (any build tag)
// when tests, else the others'.
func goSources(t *testing.T, dir string, tests bool) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "%s holds no Go file", dir)
	var b strings.Builder
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") != tests {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		b.Write(src)
	}
	return b.String()
}

// shellWords splits s into words as a POSIX shell would, for the simple
// quoting of the documents' go commands.
func shellWords(s string) []string {
	var out []string
	var cur strings.Builder
	in := false
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// TestServerFlagsDocumented: every flag of examples/server is named in
// docs/server.md.
func TestServerFlagsDocumented(t *testing.T) {
	bin, err := serverBinary()
	require.NoError(t, err)
	out, _ := exec.Command(bin, "-h").CombinedOutput() // -h exits 2 after the usage
	flags := regexp.MustCompile(`(?m)^\s+-([a-z][a-z0-9-]*)`).FindAllStringSubmatch(string(out), -1)
	require.Greater(t, len(flags), 20, "the usage of examples/server lists no flags:\n%s", out)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "server.md"))
	require.NoError(t, err)
	for _, f := range flags {
		assert.Regexp(t, "[` ]-"+regexp.QuoteMeta(f[1])+"[^a-z0-9-]", string(doc), "docs/server.md does not name the flag -%s", f[1])
	}
}
