package storetest_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/endpointkit/endpointkit/variable"
	"github.com/endpointkit/endpointkit/variable/storetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sliceStore is a second, deliberately plain Store (a slice behind a mutex)
// whose flaws can be switched on one at a time, to show that the suite
// catches each kind of broken store rather than passing anything.
type sliceStore struct {
	flaw string
	mu   sync.Mutex
	recs []rec
}

type rec struct {
	project string
	v       variable.Variable
}

func (s *sliceStore) lock() func() {
	if s.flaw == "racy" {
		return func() {}
	}
	s.mu.Lock()
	return s.mu.Unlock
}

func (s *sliceStore) copyOf(v variable.Variable) variable.Variable {
	if s.flaw == "aliasing" {
		return v
	}
	v.Values = slices.Clone(v.Values)
	if d, ok := v.DefaultValue.([]string); ok {
		v.DefaultValue = slices.Clone(d)
	}
	return v
}

func (s *sliceStore) same(a, b string) bool {
	return s.flaw == "shared-projects" || a == b
}

func (s *sliceStore) find(project, id string) int {
	for i, r := range s.recs {
		if s.same(r.project, project) && r.v.ID == id {
			return i
		}
	}
	return -1
}

func (s *sliceStore) codeTaken(project string, v variable.Variable) bool {
	if s.flaw == "no-code-name-check" {
		return false
	}
	for _, r := range s.recs {
		if s.same(r.project, project) && r.v.ID != v.ID && r.v.CodeName == v.CodeName {
			return true
		}
	}
	return false
}

func (s *sliceStore) Create(_ context.Context, project string, v variable.Variable) error {
	defer s.lock()()
	if s.find(project, v.ID) >= 0 || s.codeTaken(project, v) {
		return fmt.Errorf("%w: %s", variable.ErrConflict, v.CodeName)
	}
	s.recs = append(s.recs, rec{project, s.copyOf(v)})
	return nil
}

func (s *sliceStore) Get(_ context.Context, project, id string) (variable.Variable, error) {
	defer s.lock()()
	i := s.find(project, id)
	if i < 0 {
		if s.flaw == "plain-errors" {
			return variable.Variable{}, fmt.Errorf("no variable %s", id)
		}
		return variable.Variable{}, fmt.Errorf("%w: %s", variable.ErrNotFound, id)
	}
	return s.copyOf(s.recs[i].v), nil
}

func (s *sliceStore) GetMany(_ context.Context, project string, ids []string) (map[string]variable.Variable, error) {
	defer s.lock()()
	out := map[string]variable.Variable{}
	for _, id := range ids {
		if i := s.find(project, id); i >= 0 {
			out[id] = s.copyOf(s.recs[i].v)
		}
	}
	return out, nil
}

func (s *sliceStore) List(_ context.Context, project string) ([]variable.Variable, error) {
	defer s.lock()()
	var out []variable.Variable
	for _, r := range s.recs {
		if s.same(r.project, project) {
			out = append(out, s.copyOf(r.v))
		}
	}
	if s.flaw != "unordered" {
		sort.Slice(out, func(i, j int) bool { return out[i].CodeName < out[j].CodeName })
	}
	return out, nil
}

func (s *sliceStore) Update(_ context.Context, project string, v variable.Variable) error {
	defer s.lock()()
	i := s.find(project, v.ID)
	if i < 0 {
		return fmt.Errorf("%w: %s", variable.ErrNotFound, v.ID)
	}
	if s.codeTaken(project, v) {
		return fmt.Errorf("%w: %s", variable.ErrConflict, v.CodeName)
	}
	if s.flaw == "update-drops-values" {
		v.Values = nil
	}
	s.recs[i].v = s.copyOf(v)
	return nil
}

func (s *sliceStore) Delete(_ context.Context, project, id string) error {
	defer s.lock()()
	i := s.find(project, id)
	if i < 0 {
		return fmt.Errorf("%w: %s", variable.ErrNotFound, id)
	}
	if s.flaw != "delete-noop" {
		s.recs = slices.Delete(s.recs, i, i+1)
	}
	return nil
}

func TestSliceStorePasses(t *testing.T) {
	flaw := os.Getenv("STORETEST_FLAW")
	storetest.Run(t, func(t *testing.T) variable.Store { return &sliceStore{flaw: flaw} })
}

// TestSuiteCatchesFlaws runs the suite against each flawed store in a child
// process (a failing suite would fail this test otherwise) and expects it to
// fail in the named subtest.
func TestSuiteCatchesFlaws(t *testing.T) {
	if os.Getenv("STORETEST_FLAW") != "" {
		t.Skip("child process")
	}
	for flaw, subtest := range map[string]string{
		"aliasing":            "NoAliasing",
		"no-code-name-check":  "CreateConflict",
		"shared-projects":     "ProjectIsolation",
		"unordered":           "List",
		"plain-errors":        "GetNotFound",
		"update-drops-values": "Update",
		"delete-noop":         "Delete",
	} {
		t.Run(flaw, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestSliceStorePasses$", "-test.count=1")
			cmd.Env = append(os.Environ(), "STORETEST_FLAW="+flaw)
			out, err := cmd.CombinedOutput()
			require.Error(t, err, "the suite passed a store with flaw %q:\n%s", flaw, out)
			want := "--- FAIL: TestSliceStorePasses/" + subtest + " "
			assert.Contains(t, string(out), want, "flaw %q: want a failure in %s, got:\n%s", flaw, subtest, out)
		})
	}
}
