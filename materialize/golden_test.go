package materialize

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata")

// goldenOptions reads a case's optional options.txt: lines "dialect: X",
// "date: a b" (Date variables) and "bucket: a=week".
func goldenOptions(t *testing.T, dir string) Options {
	opts := Options{Engine: engine.SQLite, Types: map[string]variable.Type{}, Buckets: map[string]engine.Bucket{}}
	data, err := os.ReadFile(filepath.Join(dir, "options.txt"))
	if os.IsNotExist(err) {
		return opts
	}
	require.NoError(t, err)
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		key, value, ok := strings.Cut(line, ":")
		require.True(t, ok, "options line %q: ok is false", line)
		value = strings.TrimSpace(value)
		switch key {
		case "dialect":
			opts.Engine, err = engine.ByName(value)
			require.NoError(t, err)
		case "date":
			for _, name := range strings.Fields(value) {
				opts.Types[name] = variable.Date
			}
		case "bucket":
			name, b, _ := strings.Cut(value, "=")
			opts.Buckets[name] = engine.Bucket(b)
		default:
			t.Fatalf("unknown option %q", key)
		}
	}
	return opts
}

// goldenValue is the value each variable gets for the golden read: a date
// that starts a minute, hour, day, week (Monday) and month at once.
func goldenValue(opts Options, name string) any {
	if opts.Types[name] == variable.Date {
		return variable.Timestamp{Time: time.Date(2025, 9, 1, 0, 0, 0, 0, time.UTC), DateOnly: true}
	}
	return "v"
}

func verdictText(a *Analysis) string {
	var b strings.Builder
	fmt.Fprintf(&b, "materializable: %v\n", a.Materializable())
	for _, r := range a.Reasons {
		fmt.Fprintf(&b, "reason: %s: %s\n", r.Code, r.Located())
	}
	for _, v := range a.Variables {
		fmt.Fprintf(&b, "variable %s:", v.Name)
		if v.Reason != nil {
			fmt.Fprintf(&b, " %s\n", v.Reason.Code)
			continue
		}
		if v.Kind == KindRead {
			b.WriteString(" read (bound in the read query)\n")
			continue
		}
		if v.Column == "" {
			b.WriteString(" not analysed\n")
			continue
		}
		fmt.Fprintf(&b, " %s column %s operators %s", v.Kind, v.Column, strings.Join(v.Operators, " "))
		if v.Bucket != "" {
			fmt.Fprintf(&b, " bucket %s", v.Bucket)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestGolden replays every case of testdata: its verdict, pre-compute
// query, read query, a page of the read (limit 11, offset 20) and the
// refresh statements. go test -run TestGolden -update rewrites them.
func TestGolden(t *testing.T) {
	dirs, err := filepath.Glob("testdata/*/query.sql")
	require.NoError(t, err)
	a, b := len(dirs), 25
	require.True(t, (a >= b), "len(dirs) = %v, want >= %v", a, b)
	codes := map[Code]bool{}
	for _, q := range dirs {
		dir := filepath.Dir(q)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			query, err := os.ReadFile(q)
			require.NoError(t, err)
			opts := goldenOptions(t, dir)
			a, err := Analyze(strings.TrimSuffix(string(query), "\n"), opts)
			require.NoError(t, err)
			for _, r := range a.Reasons {
				codes[r.Code] = true
			}
			got := map[string]string{"verdict": verdictText(a)}
			if a.Plan != nil {
				got["precompute.sql"] = a.Plan.Precompute() + "\n"
				values := map[string]any{}
				for _, v := range a.Variables {
					values[v.Name] = goldenValue(opts, v.Name)
				}
				read, args, err := a.Plan.Read("stored", values)
				require.NoError(t, err)
				{
					uses := 0
					for _, v := range a.Variables {
						uses += len(v.Operators)
						if v.Kind == KindRead { // bound once where the query has it
							uses++
						}
					}
					if !strings.Contains(read, "stored_parts") { // a merged read binds the edges too
						require.Len(t, args, uses)
					}
					got["read.sql"] = read + "\n"
					page, pargs, err := a.Plan.ReadPage("stored", values, 11, 20)
					require.NoError(t, err)
					require.Len(t, pargs, len(args)+2)
					if got, want := fmt.Sprint(pargs[:len(args)]), fmt.Sprint(args); got != want {
						t.Fatalf("fmt.Sprint(pargs[:len(args)]) = %q, want %q", got, want)
					}
					got["page.sql"] = page + "\n"
				}
				r, err := a.Plan.Refresh("stored")
				require.NoError(t, err)
				got["refresh.sql"] = strings.Join(r.Statements(), ";\n") + ";\n"
			}
			for _, name := range []string{"verdict", "precompute.sql", "read.sql", "page.sql", "refresh.sql"} {
				path := filepath.Join(dir, name)
				want, ok := got[name]
				if *update {
					if ok {
						require.NoError(t, os.WriteFile(path, []byte(want), 0o644))
					} else {
						_ = os.Remove(path)
					}
					continue
				}
				data, err := os.ReadFile(path)
				if !ok {
					require.True(t, os.IsNotExist(err), "%s should not exist for a query that is not materializable: os.IsNotExist(err) is false", path)
					continue
				}
				require.NoError(t, err, "run go test -run TestGolden -update")
				require.Equal(t, want, string(data), "%v", path)
			}
		})
	}
	if !*update {
		for _, c := range []Code{CodeUnparsable, CodeUnsupportedQuery, CodeNotInWhere, CodeUnsupportedOperator,
			CodeInExpression, CodeUnderOr, CodeNotColumn, CodeNotRowExpression, CodeNotDeterministic,
			CodeDifferentColumns, CodeAggregate} {
			require.True(t, (codes[c]), "no golden case has the reason code %s: codes[c] is false", c)
		}
	}
}
