package materialize

import (
	"reflect"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/sql/engine"
)

// The parser panics on "/*!*/"; parse must turn that into an error.
func TestParseRecoversFromParserPanic(t *testing.T) {
	_, err := parse("/*!*/", lex("/*!*/", engine.MySQL), nil)
	if err := err; err == nil || !strings.Contains(err.Error(), "the SQL parser failed") {
		t.Fatalf("error %v does not contain %q", err, "the SQL parser failed")
	}
	a, err := Analyze("/*!*/", Options{Engine: engine.MySQL})
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if a.Materializable() {
		t.Fatalf("a.Materializable() is true")
	}
	if got, want := a.Reasons[0].Code, CodeUnparsable; got != want {
		t.Fatalf("a.Reasons[0].Code = %q, want %q", got, want)
	}
}

// Queries the parser cannot read are not materializable, and the reason
// quotes the parser's position, mapped back to the original text.
func TestParseErrorsQuotePosition(t *testing.T) {
	cases := []struct{ name, query, want string }{
		{"literals quoted as written", "SELECT a FROM t WHERE a = {variables.a} 'a\\1'", `near 'a\1'`},
		{"padded placeholder", "SELECT a FROM t WHERE a = {variables.a}0", "near '0'"},
		{"placeholder in message", "SELECT a FROM t WHERE a = {variables.a} {variables.b}", "{variables.b}"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := Analyze(c.query, Options{Engine: engine.SQLite})
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if a.Materializable() {
				t.Fatalf("a.Materializable() is true")
			}
			if got, want := a.Reasons[0].Code, CodeUnparsable; got != want {
				t.Fatalf("a.Reasons[0].Code = %q, want %q", got, want)
			}
			if s, sub := a.Reason(), c.want; !strings.Contains(s, sub) {
				t.Fatalf("%q does not contain %q", s, sub)
			}
		})
	}
}

// TestUnsupportedConstructsSayWhich: SQL its engine runs, in a shape
// materialization does not take, is refused with that reason, not with
// the parser's error ("syntax error at position 5 near 'with'").
func TestUnsupportedConstructsSayWhich(t *testing.T) {
	for _, c := range []struct {
		d           engine.Engine
		query, want string
	}{
		{engine.SQLite, "WITH p AS (SELECT 1) SELECT count(*) FROM p WHERE a = {variables.a}", "WITH (common table expressions)"},
		{engine.PostgreSQL, "SELECT count(*) OVER (PARTITION BY a) FROM t WHERE a = {variables.a}", "window functions (OVER)"},
		{engine.PostgreSQL, "SELECT a FROM t\nWHERE a IS DISTINCT FROM {variables.a}", "IS [NOT] DISTINCT FROM"},
		{engine.PostgreSQL, "SELECT a FROM t WHERE a ~ '^x' AND b = {variables.a}", "the operator ~"},
		{engine.PostgreSQL, "SELECT ts AT TIME ZONE 'UTC' AS t, count(*) FROM t WHERE b = {variables.a} GROUP BY 1", "AT TIME ZONE"},
		{engine.PostgreSQL, "SELECT count(*) FROM t WHERE ts > now() - interval '1 day' AND b = {variables.a}", "interval literals"},
	} {
		a, err := Analyze(c.query, Options{Engine: c.d})
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if a.Materializable() {
			t.Fatalf("%v: a.Materializable() is true", c.query)
		}
		if got, want := a.Reasons[0].Code, CodeUnsupportedQuery; got != want {
			t.Fatalf("%s: %s: a.Reasons[0].Code = %q, want %q", c.query, a.Reason(), got, want)
		}
		if s, sub := a.Reason(), c.want; !strings.Contains(s, sub) {
			t.Fatalf("%q does not contain %q", s, sub)
		}
		if s, sub := a.Reason(), "parser"; strings.Contains(s, sub) {
			t.Fatalf("%q contains %q", s, sub)
		}
	}
}

func TestParseOriginalOffsets(t *testing.T) {
	src := "SELECT a FROM t WHERE a = {variables.long_name} AND b = 1"
	phs, err := placeholder.Scan(src)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	p, err := parse(src, lex(src, engine.SQLite), phs)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got, want := p.names, ([]string{"long_name"}); !reflect.DeepEqual(got, want) {
		t.Fatalf("p.names = %+v, want %+v", got, want)
	}
	// " AND" follows the placeholder in both texts.
	after := phs[0].End
	parsedAfter := len("SELECT a FROM t WHERE a = ") + len(" :v1 ")
	if got, want := p.original(parsedAfter), after; got != want {
		t.Fatalf("p.original(parsedAfter) = %v, want %v", got, want)
	}
	if got, want := p.original(3), 3; got != want {
		t.Fatalf("p.original(3) = %v, want %v", got, want)
	}
}

func TestBindIndex(t *testing.T) {
	src := "SELECT a FROM t WHERE a = {variables.x} AND b = {variables.y}"
	p, err := parse(src, lex(src, engine.SQLite), []placeholder.Placeholder{
		{Name: "x", Start: 26, End: 39}, {Name: "y", Start: 48, End: 61}})
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	var got []int
	for _, f := range findBinds(p.stmt) {
		got = append(got, f.index)
	}
	if got, want := got, ([]int{1, 2}); !reflect.DeepEqual(got, want) {
		t.Fatalf("got = %+v, want %+v", got, want)
	}
}
