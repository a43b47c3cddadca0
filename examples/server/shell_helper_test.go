package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
		require.NoError(t, err, c.script)
		assert.Equal(t, c.want, got, c.script)
	}
	for _, bad := range []string{"echo 'a", `echo "a`, "echo a | cat", "echo $(id)", "echo `id`", "echo $"} {
		_, err := shellCommands(bad, env)
		assert.Error(t, err, bad)
	}
}
