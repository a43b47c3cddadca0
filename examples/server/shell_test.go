package main

import (
	"fmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"strings"
	"testing"
)

// shellCommands splits a POSIX shell script into commands of expanded
// words. It knows what the printed session uses, and fails on anything
// else rather than guess: single and double quotes, backslash escapes and
// line continuations, $NAME and ${NAME} (assignments of earlier commands
// first, then env), comments, and commands ended by a newline or ";".
// Assignments (NAME=value) are applied and not returned.
func shellCommands(script string, env func(string) string) ([][]string, error) {
	vars := map[string]string{}
	lookup := func(name string) string {
		if v, ok := vars[name]; ok {
			return v
		}
		return env(name)
	}
	var (
		cmds   [][]string
		words  []string
		cur    strings.Builder
		inWord bool
	)
	endWord := func() {
		if inWord {
			words = append(words, cur.String())
		}
		cur.Reset()
		inWord = false
	}
	endCommand := func() {
		endWord()
		if len(words) == 0 {
			return
		}
		if name, value, ok := strings.Cut(words[0], "="); ok && len(words) == 1 && isName(name) {
			vars[name] = value
		} else {
			cmds = append(cmds, words)
		}
		words = nil
	}
	// expand reads $NAME or ${NAME} at s[i] == '$' and returns the value
	// and the index after it.
	expand := func(s string, i int) (string, int, error) {
		j := i + 1
		if j < len(s) && s[j] == '{' {
			end := strings.IndexByte(s[j:], '}')
			if end < 0 {
				return "", 0, fmt.Errorf("unclosed ${ at %d", i)
			}
			return lookup(s[j+1 : j+end]), j + end + 1, nil
		}
		for j < len(s) && (s[j] == '_' || 'a' <= s[j] && s[j] <= 'z' || 'A' <= s[j] && s[j] <= 'Z' || j > i+1 && '0' <= s[j] && s[j] <= '9') {
			j++
		}
		if j == i+1 {
			return "", 0, fmt.Errorf("bare $ at %d", i)
		}
		return lookup(s[i+1 : j]), j, nil
	}
	for i := 0; i < len(script); {
		c := script[i]
		switch {
		case c == '\\' && i+1 < len(script) && script[i+1] == '\n':
			i += 2
		case c == '\\' && i+1 < len(script):
			cur.WriteByte(script[i+1])
			inWord = true
			i += 2
		case c == '\'':
			end := strings.IndexByte(script[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("unclosed ' at %d", i)
			}
			cur.WriteString(script[i+1 : i+1+end])
			inWord = true
			i += end + 2
		case c == '"':
			i++
			for {
				if i >= len(script) {
					return nil, fmt.Errorf(`unclosed " in script`)
				}
				d := script[i]
				if d == '"' {
					i++
					break
				}
				switch {
				case d == '\\' && i+1 < len(script) && strings.IndexByte("\"\\$`", script[i+1]) >= 0:
					cur.WriteByte(script[i+1])
					i += 2
				case d == '$':
					v, next, err := expand(script, i)
					if err != nil {
						return nil, err
					}
					cur.WriteString(v)
					i = next
				case d == '`':
					return nil, fmt.Errorf("command substitution at %d", i)
				default:
					cur.WriteByte(d)
					i++
				}
			}
			inWord = true
		case c == '$':
			v, next, err := expand(script, i)
			if err != nil {
				return nil, err
			}
			cur.WriteString(v)
			inWord = true
			i = next
		case c == '#' && !inWord:
			for i < len(script) && script[i] != '\n' {
				i++
			}
		case c == ' ' || c == '\t':
			endWord()
			i++
		case c == '\n' || c == ';':
			endCommand()
			i++
		case strings.IndexByte("|&<>()`*?[", c) >= 0:
			return nil, fmt.Errorf("unsupported shell syntax %q at %d", c, i)
		default:
			cur.WriteByte(c)
			inWord = true
			i++
		}
	}
	endCommand()
	return cmds, nil
}

func isName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// TestShellCommands checks the test's own shell reader, so that a session
// it accepts is one a shell would run the same way.
func TestShellCommands(t *testing.T) {
	env := func(k string) string { return map[string]string{"HOME": "/root", "K": "from-env"}[k] }
	cases := []struct {
		script string
		want   [][]string
	}{
		{"echo a b", [][]string{{"echo", "a", "b"}}},
		{"echo 'a b' \"c d\"", [][]string{{"echo", "a b", "c d"}}},
		{"X='it'\\''s'\necho \"$X\"", [][]string{{"echo", "it's"}}},
		{"K=mine\necho \"$K\" ${HOME}x", [][]string{{"echo", "mine", "/rootx"}}},
		{"echo $K; echo \"a\\\"b\"", [][]string{{"echo", "from-env"}, {"echo", `a"b`}}},
		{"# comment\ncurl -X POST \\\n  -d '{\n \"a\": 1\n}'", [][]string{{"curl", "-X", "POST", "-d", "{\n \"a\": 1\n}"}}},
		{"echo a#b", [][]string{{"echo", "a#b"}}},
	}
	for _, c := range cases {
		got, err := shellCommands(c.script, env)
		require.NoError(t, err, "%v", c.script)
		assert.Equal(t, c.want, got, "%v", c.script)
	}
	for _, bad := range []string{"echo 'a", `echo "a`, "echo a | cat", "echo $(id)", "echo `id`", "echo $"} {
		_, err := shellCommands(bad, env)
		assert.Error(t, err, "%v: got no error, want one", bad)
	}
}
