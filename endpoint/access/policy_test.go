package access

import (
	"context"
	"testing"
)

func TestStaticRulesPerProject(t *testing.T) {
	tables := []Table{{Name: "events", Columns: []string{"a"}}}
	s, err := NewStatic(Rules{Tables: tables}, map[string]Rules{"2": {}})
	if err != nil {
		t.Fatal(err)
	}
	// NewStatic keeps its own copy.
	tables[0].Name, tables[0].Columns[0] = "secrets", "b"
	r1, err := s.Rules(context.Background(), "1")
	if err != nil || len(r1.Tables) != 1 || r1.Tables[0].Name != "events" || r1.Tables[0].Columns[0] != "a" {
		t.Fatalf("project 1: %+v, %v", r1, err)
	}
	if err := Check("SELECT a FROM events", r1); err != nil {
		t.Fatal(err)
	}
	r2, _ := s.Rules(context.Background(), "2")
	if err := Check("SELECT a FROM events", r2); err == nil {
		t.Fatal("project 2 has rules of its own, without events")
	}
}

func TestFunctionAllowlist(t *testing.T) {
	rs, err := compileRules(&Rules{Functions: []string{"my_fn"}})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{
		"count": true, "COUNT": true, "JSONExtractString": true, "countIf": true,
		"uniqExactIf": true, "sumArrayIf": true, "avgOrNull": true, "quantileTDigestIf": true,
		"my_fn": true, "MY_FN": true,
		"pg_read_file": false, "load_extension": false, "sleep": false, "fileIf": false,
		"countIfIfIfIf": false, "ifIf": false, "dictGetString": false, "\u212aount": false,
	} {
		if got := rs.functionAllowed(name); got != want {
			t.Errorf("functionAllowed(%q) = %v, want %v", name, got, want)
		}
	}
}
