package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// answer is the outcome of one curl command.
type answer struct {
	status int
	body   map[string]any
	raw    string
}

// runSession executes every curl command of the session, as curl would,
// and returns the answers in order.
func runSession(t *testing.T, script string, env map[string]string) []answer {
	t.Helper()
	cmds, err := shellCommands(script, func(k string) string { return env[k] })
	require.NoError(t, err)
	var answers []answer
	for _, cmd := range cmds {
		if cmd[0] == "echo" {
			continue
		}
		got, want := cmd[0], "curl"
		require.Equal(t, want, got, "the session runs only curl and echo: %q: cmd[0]", cmd)
		answers = append(answers, curl(t, cmd[1:]))
	}
	return answers
}

// curl performs the request of curl arguments args: -sS, -X, -H, -d and
// one URL, the options the session uses.
func curl(t *testing.T, args []string) answer {
	t.Helper()
	method, url := "", ""
	var body *string
	header := http.Header{}
	for i := 0; i < len(args); i++ {
		switch a := args[i]; a {
		case "-sS":
		case "-X", "-H", "-d":
			require.Less(t, i+1, len(args), "%s needs a value: %q", a, args)
			v := args[i+1]
			i++
			switch a {
			case "-X":
				method = v
			case "-H":
				k, val, ok := strings.Cut(v, ":")
				require.True(t, ok, "header %q: ok is false", v)
				header.Add(k, strings.TrimSpace(val))
			case "-d":
				body = &v
			}
		default:
			require.False(t, strings.HasPrefix(a, "-"), "unexpected curl option %q: strings.HasPrefix(a, \"-\") is true", a)
			v := url
			require.True(t, (v == ""), "two URLs: url = %v, want it empty", v)
			url = a
		}
	}
	if method == "" {
		method = "GET"
		if body != nil {
			method = "POST"
		}
	}
	var rd io.Reader
	if body != nil {
		rd = strings.NewReader(*body)
	}
	req, err := http.NewRequest(method, url, rd)
	require.NoError(t, err)
	req.Header = header
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	a := answer{status: res.StatusCode, raw: string(raw)}
	if len(raw) > 0 {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		require.NoError(t, dec.Decode(&a.body), "%s", raw)
	}
	return a
}

func statuses(answers []answer) []int {
	var s []int
	for _, a := range answers {
		s = append(s, a.status)
	}
	return s
}

// wantDaily is what the session's run answers for n demo events, which end
// at the day the server started (today): per day of the 7 days before
// today, purchases and distinct purchasers.
func wantDaily(n int) []any {
	type day struct {
		events int
		users  map[string]bool
	}
	days := map[string]*day{}
	to := demo.Day(time.Now())
	from := to.AddDate(0, 0, -7)
	_ = demo.GenerateUntil(n, demoSeed, to, func(e demo.Event) error {
		if e.Event != "purchase" || e.Timestamp.Before(from) || !e.Timestamp.Before(to) {
			return nil
		}
		k := e.Timestamp.Format(time.DateOnly)
		if days[k] == nil {
			days[k] = &day{users: map[string]bool{}}
		}
		days[k].events++
		days[k].users[e.DistinctID] = true
		return nil
	})
	keys := make([]string, 0, len(days))
	for k := range days {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	rows := []any{}
	for _, k := range keys {
		rows = append(rows, []any{k, json.Number(fmt.Sprint(days[k].events)), json.Number(fmt.Sprint(len(days[k].users)))})
	}
	return rows
}

// sessionStatuses are the statuses of the printed session's requests on a
// fresh database: three variables, the endpoint, the run, the refused run,
// the list.
var sessionStatuses = []int{201, 201, 201, 201, 200, 400, 200}

// TestPrintedSessionWorks starts the server and runs the curl session it
// prints, verbatim, against it.
func TestPrintedSessionWorks(t *testing.T) {
	const n = 3000
	s := start(t, []string{"-api-key", "test-key", "-demo-events", fmt.Sprint(n)}, nil)
	answers := runSession(t, s.session(t), nil)
	if got, want := statuses(answers), sessionStatuses; !reflect.DeepEqual(got, want) {
		t.Fatalf("%v: statuses(answers) = %+v, want %+v", answers, got, want)
	}

	run := answers[4].body
	assert.Equal(t, "daily_events", run["name"])
	assert.Equal(t, []any{"day", "events", "users"}, run["columns"])
	want := wantDaily(n)
	v := want
	require.NotEmpty(t, v, "the session's range holds purchases: want is empty")
	assert.Equal(t, want, run["results"])
	assert.Equal(t, "Required variable(s) 'to' not provided", answers[5].body["detail"])
	rows, ok := answers[6].body["results"].([]any)
	if assert.True(t, ok, "len(answers[6].body[\"results\"]) = %d, want %d: %v", len(rows), 1, answers[6].body["results"]) {
		assert.Len(t, rows, 1, "len(answers[6].body[\"results\"]) = %d, want %d: %v", len(rows), 1, answers[6].body["results"])
	}

	require.NoError(t, s.stop())
	assert.Contains(t, s.out.String(), "Shutting down")
}

func TestShellQuote(t *testing.T) {
	for _, s := range []string{"", "plain", "it's", "a b", `"$HOME"`, "'", "\\n"} {
		cmds, err := shellCommands("echo "+shellQuote(s), func(string) string { return "EXPANDED" })
		require.NoError(t, err)
		got, want := cmds, ([][]string{{"echo", s}})
		assert.Equal(t, want, got, "%q: cmds", s)
	}
}

// TestPrintedSessionInBash pastes the session into a real shell with the
// real curl, where the machine has them: the Go reader above is a model of
// the shell, this is the shell.
func TestPrintedSessionInBash(t *testing.T) {
	bash, errBash := exec.LookPath("bash")
	_, errCurl := exec.LookPath("curl")
	if errBash != nil || errCurl != nil {
		t.Skip("bash or curl not installed")
	}
	s := start(t, []string{"-api-key", "it's-a-$key", "-demo-events", "3000"}, nil)
	cmd := exec.Command(bash, "-e")
	cmd.Stdin = strings.NewReader(s.session(t))
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var bodies []string
	for _, l := range lines {
		if l != "" {
			bodies = append(bodies, l)
		}
	}
	got := len(bodies)
	require.Len(t, sessionStatuses, got, "%s: len(bodies) = %d, want %d: %v", out, got, len(sessionStatuses), bodies)
	var run map[string]any
	dec := json.NewDecoder(strings.NewReader(bodies[4]))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&run))
	if got, want := run["results"], wantDaily(3000); !reflect.DeepEqual(got, want) {
		t.Errorf("run[\"results\"] = %+v, want %+v", got, want)
	}
	assert.Contains(t, bodies[5], "Required variable(s) 'to' not provided")
}

// TestDatabaseLine: the banner says a database is temporary only when it
// is: a -dsn database persists (issue 24: on PostgreSQL it said temporary).
func TestDatabaseLine(t *testing.T) {
	for _, tc := range []struct {
		cfg       config
		temporary bool
		says      string
	}{
		{config{driver: "sqlite"}, true, "temporary (deleted at exit"},
		{config{driver: "sqlite", dbPath: "/tmp/x.db"}, false, "/tmp/x.db (store: /tmp/x-store.db)"},
		{config{driver: "postgres", dsn: "postgres://h/db"}, false, "PostgreSQL database of -dsn, kept after exit (store: the same database"},
		{config{driver: "mysql", dsn: "u@/db", storeDSN: "u@/store"}, false, "MySQL database of -dsn, kept after exit (store: the -store-dsn database"},
		{config{driver: "clickhouse", dsn: "clickhouse://h:9000/db"}, true, "ClickHouse database of -dsn, kept after exit (store: a temporary SQLite file"},
		{config{driver: "clickhouse", dsn: "clickhouse://h:9000/db", storePath: "/tmp/s.db"}, false, "(store: /tmp/s.db)"},
	} {
		line := databaseLine(tc.cfg)
		assert.Contains(t, line, tc.says, "%v", tc.cfg.driver)
		got, want := strings.Contains(line, "temporary"), tc.temporary
		assert.Equal(t, want, got, "%s: %s: strings.Contains(line, \"temporary\")", tc.cfg.driver, line)
	}
}
