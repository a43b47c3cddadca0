package executortest_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/executortest"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/internal/stmt"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
)

// broken wraps a working executor and breaks one promise of the contract.
// A nil field keeps the inner behaviour.
type broken struct {
	inner   driver.Executor
	dialect func(engine.Engine) engine.Engine
	ctx     func(context.Context) context.Context
	sql     func(q string, args []any) (string, []any)
	// querySQL is sql for Query only.
	querySQL func(q string, args []any) (string, []any)
	result   func(*driver.Result, error) (*driver.Result, error)
	err      func(error) error
	// writes runs a Query that is not a SELECT as Exec would, on a
	// connection that may write.
	writes bool
	// bounds changes the Bounds the inner executor is given.
	bounds func(driver.Bounds) driver.Bounds
	// cutRows reads (and weighs) every row and cuts them to MaxRows
	// after, as the Service once did for an executor without bounds.
	cutRows bool
	// exec replaces Exec.
	exec func(ctx context.Context, inner driver.Executor, stmts []driver.Statement, tx bool) error
	// queryRows, when set, makes the executor a driver.RowQuerier whose
	// QueryRows it is.
	queryRows func(ctx context.Context, inner driver.RowQuerier, st driver.Statement, b driver.Bounds, sink driver.RowSink) (*driver.Result, error)
}

// brokenRows is a broken executor with QueryRows.
type brokenRows struct{ *broken }

func (b brokenRows) QueryRows(ctx context.Context, st driver.Statement, bounds driver.Bounds, sink driver.RowSink) (*driver.Result, error) {
	return b.queryRows(ctx, b.inner.(driver.RowQuerier), st, bounds, sink)
}

// deafSink drops the errors of the sink it wraps.
type deafSink struct{ driver.RowSink }

func (d deafSink) Row(row []any) error { _ = d.RowSink.Row(row); return nil }

func (b *broken) Engine() engine.Engine {
	if b.dialect != nil {
		return b.dialect(b.inner.Engine())
	}
	return b.inner.Engine()
}

func (b *broken) before(ctx context.Context, q string, args []any) (context.Context, string, []any) {
	if b.ctx != nil {
		ctx = b.ctx(ctx)
	}
	if b.sql != nil {
		q, args = b.sql(q, args)
	}
	return ctx, q, args
}

func (b *broken) Query(ctx context.Context, st driver.Statement, bounds driver.Bounds) (*driver.Result, error) {
	ctx, q, args := b.before(ctx, st.SQL(), st.Args())
	if b.querySQL != nil {
		q, args = b.querySQL(q, args)
	}
	if b.writes && !strings.HasPrefix(q, "SELECT") {
		return &driver.Result{Columns: []string{}, Types: []string{}, Rows: [][]any{}}, b.inner.Exec(ctx, []driver.Statement{stmt.New(q, args)}, driver.Write{Tx: false})
	}
	given := bounds
	if b.bounds != nil {
		bounds = b.bounds(bounds)
	}
	if b.cutRows {
		bounds.MaxRows = 0
	}
	res, err := b.inner.Query(ctx, stmt.New(q, args), bounds)
	if err != nil && b.err != nil {
		err = b.err(err)
	}
	if b.result != nil {
		res, err = b.result(res, err)
	}
	if b.cutRows && res != nil && given.MaxRows > 0 {
		res.Rows = res.Rows[:min(len(res.Rows), given.MaxRows)]
	}
	return res, err
}

func (b *broken) Exec(ctx context.Context, stmts []driver.Statement, tx driver.Write) error {
	if b.exec != nil {
		return b.exec(ctx, b.inner, stmts, tx.Tx)
	}
	out := make([]driver.Statement, len(stmts))
	for i, st := range stmts {
		var q string
		var args []any
		ctx, q, args = b.before(ctx, st.SQL(), st.Args())
		out[i] = stmt.New(q, args)
	}
	err := b.inner.Exec(ctx, out, tx)
	if err != nil && b.err != nil {
		err = b.err(err)
	}
	return err
}

// eachValue returns a result transform that replaces every value by f's.
func eachValue(f func(any) any) func(*driver.Result, error) (*driver.Result, error) {
	return func(res *driver.Result, err error) (*driver.Result, error) {
		if res != nil {
			for _, row := range res.Rows {
				for i, v := range row {
					row[i] = f(v)
				}
			}
		}
		return res, err
	}
}

// interpolate writes the arguments into the text in place of the '?'
// markers, quoting text with quote.
func interpolate(quote func(string) string) func(string, []any) (string, []any) {
	return func(q string, args []any) (string, []any) {
		var b strings.Builder
		n := 0
		for i := 0; i < len(q); i++ {
			if q[i] != '?' || n >= len(args) {
				b.WriteByte(q[i])
				continue
			}
			switch v := args[n].(type) {
			case string:
				b.WriteString(quote(v))
			case int64:
				b.WriteString(strconv.FormatInt(v, 10))
			case float64:
				b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
			default:
				panic("interpolate: unexpected argument")
			}
			n++
		}
		return b.String(), args[n:]
	}
}

// brokenCase is a broken executor and the checks that must catch it, and
// no others.
type brokenCase struct {
	name  string
	wrap  broken
	fails []string
}

// brokenExecutors each break one promise of the contract.
var brokenExecutors = []brokenCase{
	{"intact", broken{}, nil},
	{"nil engine", broken{dialect: func(engine.Engine) engine.Engine { return nil }}, []string{"Engine"}},
	{"text as bytes", broken{result: eachValue(func(v any) any {
		if s, ok := v.(string); ok {
			return []byte(s)
		}
		return v
	})}, []string{"BoundArgumentsNotInterpolated", "BoundMaxBytes", "BoundMaxRows", "ConcurrentQuery", "QueryValues"}},
	{"NULL as empty text", broken{result: eachValue(func(v any) any {
		if v == nil {
			return ""
		}
		return v
	})}, []string{"BoundMaxBytes", "BoundMaxRows", "ConcurrentQuery", "QueryValues"}},
	{"integers as float64", broken{result: eachValue(func(v any) any {
		if n, ok := v.(int64); ok {
			return float64(n)
		}
		return v
	})}, []string{"BoundArgumentsNotInterpolated", "BoundMaxBytes", "BoundMaxRows", "BoundTimeout", "Canceled", "DeadlineExceeded", "EngineError", "ExecCreatesFillsAndDrops", "ExecInOrderAndInTransaction", "QueryIsReadOnly", "QueryValues"}},
	{"columns sorted by name", broken{result: func(res *driver.Result, err error) (*driver.Result, error) {
		if res != nil {
			order := make([]int, len(res.Columns))
			for i := range order {
				order[i] = i
			}
			sort.SliceStable(order, func(a, b int) bool { return res.Columns[order[a]] < res.Columns[order[b]] })
			permute := func(s []any) []any {
				out := make([]any, len(s))
				for i, j := range order {
					out[i] = s[j]
				}
				return out
			}
			cols := make([]string, len(order))
			for i, j := range order {
				cols[i] = res.Columns[j]
			}
			res.Columns = cols
			for k, row := range res.Rows {
				res.Rows[k] = permute(row)
			}
		}
		return res, err
	}}, []string{"QueryValues"}},
	{"no types", broken{result: func(res *driver.Result, err error) (*driver.Result, error) {
		if res != nil {
			res.Types = nil
		}
		return res, err
	}}, []string{"QueryValues", "ZeroRows"}},
	{"error for no rows", broken{result: func(res *driver.Result, err error) (*driver.Result, error) {
		if err == nil && len(res.Rows) == 0 {
			return nil, errors.New("no rows")
		}
		return res, err
	}}, []string{"ExecCreatesFillsAndDrops", "ZeroRows"}},
	{"panics on engine errors", broken{err: func(err error) error { panic(err) }},
		[]string{"BoundMaxBytes", "BoundTimeout", "Canceled", "DeadlineExceeded", "EngineError", "ExecCreatesFillsAndDrops", "ExecInOrderAndInTransaction", "QueryIsReadOnly"}},
	// Its writes (any query not a SELECT) run without bounds.
	{"writes through Query", broken{writes: true}, []string{"BoundTimeout", "QueryIsReadOnly"}},
	{"ignores MaxRows", broken{bounds: func(b driver.Bounds) driver.Bounds { b.MaxRows = 0; return b }},
		[]string{"BoundMaxBytes", "BoundMaxRows"}},
	{"ignores MaxBytes", broken{bounds: func(b driver.Bounds) driver.Bounds { b.MaxBytes = 0; return b }},
		[]string{"BoundMaxBytes"}},
	// Rows past MaxRows weighed against MaxBytes refuse a page that fits.
	{"weighs rows past MaxRows", broken{cutRows: true}, []string{"BoundMaxBytes"}},
	{"ignores Timeout", broken{bounds: func(b driver.Bounds) driver.Bounds { b.Timeout = 0; return b }},
		[]string{"BoundTimeout"}},
	{"Exec outside a transaction", broken{exec: func(ctx context.Context, x driver.Executor, stmts []driver.Statement, _ bool) error {
		for _, st := range stmts {
			if err := x.Exec(ctx, []driver.Statement{st}, driver.Write{Tx: false}); err != nil {
				return err
			}
		}
		return nil
	}}, []string{"ExecInOrderAndInTransaction"}},
	{"Exec past a failure", broken{exec: func(ctx context.Context, x driver.Executor, stmts []driver.Statement, tx bool) error {
		var errs []error
		for _, st := range stmts {
			errs = append(errs, x.Exec(ctx, []driver.Statement{st}, driver.Write{Tx: tx}))
		}
		return errors.Join(errs...)
	}}, []string{"ExecInOrderAndInTransaction"}},
	{"intact QueryRows", broken{queryRows: func(ctx context.Context, x driver.RowQuerier, st driver.Statement, b driver.Bounds, sink driver.RowSink) (*driver.Result, error) {
		return x.QueryRows(ctx, st, b, sink)
	}}, nil},
	{"QueryRows ignores MaxBytes", broken{queryRows: func(ctx context.Context, x driver.RowQuerier, st driver.Statement, b driver.Bounds, sink driver.RowSink) (*driver.Result, error) {
		b.MaxBytes = 0
		return x.QueryRows(ctx, st, b, sink)
	}}, []string{"QueryRows"}},
	{"QueryRows drops the sink's error", broken{queryRows: func(ctx context.Context, x driver.RowQuerier, st driver.Statement, b driver.Bounds, sink driver.RowSink) (*driver.Result, error) {
		return x.QueryRows(ctx, st, b, deafSink{sink})
	}}, []string{"QueryRows"}},
	{"QueryRows keeps the rows in its result", broken{queryRows: func(ctx context.Context, x driver.RowQuerier, st driver.Statement, b driver.Bounds, sink driver.RowSink) (*driver.Result, error) {
		res, err := x.QueryRows(ctx, st, b, sink)
		if err == nil && res != nil {
			res.Rows = [][]any{{int64(1), "ann"}}
		}
		return res, err
	}}, []string{"QueryRows"}},
	{"ignores the context", broken{ctx: func(context.Context) context.Context { return context.Background() }},
		[]string{"Canceled", "DeadlineExceeded"}},
	{"flattens errors", broken{err: func(err error) error { return errors.New(err.Error()) }},
		[]string{"BoundMaxBytes", "Canceled", "DeadlineExceeded"}},
	{"interpolates arguments", broken{sql: interpolate(func(s string) string { return "'" + s + "'" })},
		[]string{"BoundArgumentsNotInterpolated"}},
	// Values that reach the text of a query widen its WHERE.
	{"interpolates query arguments", broken{querySQL: interpolate(func(s string) string { return "'" + s + "'" })},
		[]string{"BoundArgumentsNotInterpolated"}},
	// Escaping for another engine lets the values that engine would have
	// escaped change the statement.
	{"escapes text for MySQL", broken{sql: interpolate(func(s string) string {
		return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
	})}, []string{"BoundArgumentsNotInterpolated"}},
	// Escaping right is the limit of the suite (see the package doc):
	// SQLite's escaping passes, but for NUL, which ends SQLite's text.
	{"escapes text for SQLite", broken{sql: interpolate(func(s string) string {
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	})}, []string{"BoundArgumentsNotInterpolated"}},
}

// newSQLite is the working executor the broken ones wrap.
func newSQLite(t *testing.T) driver.Executor {
	db := testdb.SQLite(t)
	return sqlexec.New(db, engine.SQLite)
}

const brokenEnv = "EXECUTORTEST_BROKEN"

// TestBrokenExecutor runs the suite on the broken executor that
// TestSuiteCatchesBrokenExecutors names, in a process of its own, so
// that the failures it must produce fail only that process.
func TestBrokenExecutor(t *testing.T) {
	name := os.Getenv(brokenEnv)
	if name == "" {
		t.Skip("run by TestSuiteCatchesBrokenExecutors")
	}
	i := slices.IndexFunc(brokenExecutors, func(c brokenCase) bool { return c.name == name })
	require.GreaterOrEqual(t, i, 0, "no broken executor %q", name)
	executortest.Run(t, func(t *testing.T) driver.Executor {
		b := brokenExecutors[i].wrap
		b.inner = newSQLite(t)
		if b.queryRows != nil {
			return brokenRows{&b}
		}
		return &b
	})
}

var failed = regexp.MustCompile(`(?m)^\s*--- FAIL: TestBrokenExecutor/(\S+)`)

// TestSuiteCatchesBrokenExecutors: the suite fails exactly the checks of
// the promise each broken executor breaks, and reports a panic as a
// failure rather than crashing. The broken executors run in parallel,
// each in a process of its own on a SQLite database of its own.
func TestSuiteCatchesBrokenExecutors(t *testing.T) {
	for _, c := range brokenExecutors {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run=^TestBrokenExecutor$", "-test.v", "-test.count=1", "-test.timeout=120s")
			cmd.Env = append(os.Environ(), brokenEnv+"="+c.name)
			out, err := cmd.CombinedOutput()
			var got []string
			for _, m := range failed.FindAllStringSubmatch(string(out), -1) {
				got = append(got, m[1])
			}
			slices.Sort(got)
			require.True(t, slices.Equal(got, c.fails), "failed checks = %q, want %q\n%s", got, c.fails, out)
			wantCode := 0
			if len(c.fails) > 0 {
				wantCode = 1
			}
			var exit *exec.ExitError
			switch {
			case err != nil && !errors.As(err, &exit):
				t.Fatalf("running the suite: %v", err)
			case cmd.ProcessState.ExitCode() != wantCode:
				t.Fatalf("exit code %d, want %d (2 is a crash)\n%s", cmd.ProcessState.ExitCode(), wantCode, out)
			}
		})
	}
}
