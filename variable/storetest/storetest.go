// Package storetest is the conformance suite for variable.Store
// implementations. Every implementation runs it from its own tests:
//
//	func TestStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) variable.Store { return newMyStore(t) })
//	}
//
// The suite checks the contract written on variable.Store: CRUD, the
// ErrNotFound and ErrConflict sentinels, project isolation, ordering, that
// records never alias the caller's values, and safety under concurrent use.
// It only stores records that variable.Normalize accepts, and compares
// default values by their JSON encoding, so a store that keeps JSON text
// passes.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/endpointkit/endpointkit/variable"
	"github.com/google/uuid"
)

// Run runs the conformance suite as subtests of t. newStore is called once
// per subtest and must return an empty store.
func Run(t *testing.T, newStore func(t *testing.T) variable.Store) {
	t.Helper()
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, s variable.Store)
	}{
		{"CreateGet", testCreateGet},
		{"GetNotFound", testGetNotFound},
		{"CreateConflict", testCreateConflict},
		{"GetMany", testGetMany},
		{"List", testList},
		{"Update", testUpdate},
		{"UpdateNotFound", testUpdateNotFound},
		{"UpdateConflict", testUpdateConflict},
		{"Delete", testDelete},
		{"ProjectIsolation", testProjectIsolation},
		{"NoAliasing", testNoAliasing},
		{"Concurrent", testConcurrent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, newStore(t))
		})
	}
}

const (
	projectA = "project-a"
	projectB = "project-b"
)

// samples returns one normalized variable of every type, with every field in
// use, so that a round trip exercises each column a store may have.
func samples(t *testing.T) []variable.Variable {
	t.Helper()
	vs := []variable.Variable{
		{ID: uuid.NewString(), Name: "Country", Type: variable.String, DefaultValue: "US"},
		{ID: uuid.NewString(), Name: "Min amount", CodeName: "min_amount", Type: variable.Number, DefaultValue: 12},
		{ID: uuid.NewString(), Name: "Ratio", Type: variable.Number, DefaultValue: 0.25},
		{ID: uuid.NewString(), Name: "Active", Type: variable.Boolean, DefaultValue: true},
		{ID: uuid.NewString(), Name: "From", CodeName: "date_from", Type: variable.Date, DefaultValue: "-7d"},
		{ID: uuid.NewString(), Name: "Plan", Type: variable.List, Values: []string{"free", "pro", "team"}, DefaultValue: "pro"},
		{ID: uuid.NewString(), Name: "Browsers", Type: variable.List, Values: []string{"Chrome", "Firefox", "Safari"}, IsMulti: true, DefaultValue: []string{"Chrome", "Safari"}},
		{ID: uuid.NewString(), Name: "No default", Type: variable.String},
	}
	for i := range vs {
		if err := vs[i].Normalize(); err != nil {
			t.Fatalf("sample %d does not normalize: %v", i, err)
		}
	}
	return vs
}

func record(t *testing.T, codeName string) variable.Variable {
	t.Helper()
	v := variable.Variable{ID: uuid.NewString(), Name: codeName, CodeName: codeName, Type: variable.String}
	if err := v.Normalize(); err != nil {
		t.Fatalf("record %q: %v", codeName, err)
	}
	return v
}

func mustCreate(t *testing.T, s variable.Store, project string, v variable.Variable) {
	t.Helper()
	if err := s.Create(context.Background(), project, v); err != nil {
		t.Fatalf("Create(%q, %s): %v", project, v.CodeName, err)
	}
}

// jsonOf is how records are compared: it treats int64(5), float64(5) and
// json.Number("5") as the same default, and nil and empty Values alike.
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("json.Marshal(%#v): %v", v, err)
	}
	return string(b)
}

func assertSame(t *testing.T, what string, got, want variable.Variable) {
	t.Helper()
	if g, w := jsonOf(t, got), jsonOf(t, want); g != w {
		t.Errorf("%s:\n got  %s\n want %s", what, g, w)
	}
}

func assertIs(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: got error %v, want one that errors.Is %v", what, err, target)
	}
}

func testCreateGet(t *testing.T, s variable.Store) {
	ctx := context.Background()
	vs := samples(t)
	for _, v := range vs {
		mustCreate(t, s, projectA, v)
	}
	for _, v := range vs {
		got, err := s.Get(ctx, projectA, v.ID)
		if err != nil {
			t.Fatalf("Get(%s): %v", v.CodeName, err)
		}
		assertSame(t, "Get("+v.CodeName+")", got, v)
	}
}

func testGetNotFound(t *testing.T, s variable.Store) {
	ctx := context.Background()
	mustCreate(t, s, projectA, record(t, "a"))
	_, err := s.Get(ctx, projectA, uuid.NewString())
	assertIs(t, "Get of an unknown id", err, variable.ErrNotFound)
	_, err = s.Get(ctx, "no-such-project", uuid.NewString())
	assertIs(t, "Get in an empty project", err, variable.ErrNotFound)
}

func testCreateConflict(t *testing.T, s variable.Store) {
	ctx := context.Background()
	orig := record(t, "country")
	mustCreate(t, s, projectA, orig)

	sameID := record(t, "other")
	sameID.ID = orig.ID
	assertIs(t, "Create with a used id", s.Create(ctx, projectA, sameID), variable.ErrConflict)

	sameCode := record(t, "country")
	assertIs(t, "Create with a used code_name", s.Create(ctx, projectA, sameCode), variable.ErrConflict)

	got, err := s.Get(ctx, projectA, orig.ID)
	if err != nil {
		t.Fatalf("Get after refused creates: %v", err)
	}
	assertSame(t, "record after refused creates", got, orig)
	list, err := s.List(ctx, projectA)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 {
		t.Errorf("List after refused creates has %d records, want 1", len(list))
	}
}

func testGetMany(t *testing.T, s variable.Store) {
	ctx := context.Background()
	a, b, c := record(t, "a"), record(t, "b"), record(t, "c")
	for _, v := range []variable.Variable{a, b, c} {
		mustCreate(t, s, projectA, v)
	}
	elsewhere := record(t, "elsewhere")
	mustCreate(t, s, projectB, elsewhere)
	unknown := uuid.NewString()

	got, err := s.GetMany(ctx, projectA, []string{c.ID, unknown, a.ID, elsewhere.ID})
	if err != nil {
		t.Fatalf("GetMany: %v", err)
	}
	if len(got) != 2 {
		t.Errorf("GetMany returned %d records, want 2 (a and c): %v", len(got), got)
	}
	for _, want := range []variable.Variable{a, c} {
		v, ok := got[want.ID]
		if !ok {
			t.Errorf("GetMany lacks %s", want.CodeName)
			continue
		}
		assertSame(t, "GetMany["+want.CodeName+"]", v, want)
	}
	for _, id := range []string{unknown, elsewhere.ID, b.ID} {
		if _, ok := got[id]; ok {
			t.Errorf("GetMany holds %s, which was not asked for or is not in the project", id)
		}
	}

	dup, err := s.GetMany(ctx, projectA, []string{b.ID, b.ID})
	if err != nil {
		t.Fatalf("GetMany with a repeated id: %v", err)
	}
	if len(dup) != 1 {
		t.Errorf("GetMany with a repeated id returned %d records, want 1", len(dup))
	} else {
		assertSame(t, "GetMany with a repeated id", dup[b.ID], b)
	}

	for name, ids := range map[string][]string{"nil": nil, "empty": {}, "unknown only": {unknown}} {
		got, err := s.GetMany(ctx, projectA, ids)
		if err != nil {
			t.Errorf("GetMany(%s): %v", name, err)
		}
		if len(got) != 0 {
			t.Errorf("GetMany(%s) returned %d records, want 0", name, len(got))
		}
	}
}

func testList(t *testing.T, s variable.Store) {
	ctx := context.Background()
	empty, err := s.List(ctx, projectA)
	if err != nil {
		t.Fatalf("List of an empty project: %v", err)
	}
	if len(empty) != 0 {
		t.Fatalf("List of an empty project has %d records", len(empty))
	}
	// Created out of order, with names that sort differently from code names.
	byCode := map[string]variable.Variable{}
	for _, code := range []string{"zeta", "alpha", "mid_2", "Beta", "mid_10", "_under"} {
		v := record(t, code)
		v.Name = "name of " + code
		mustCreate(t, s, projectA, v)
		byCode[code] = v
	}
	list, err := s.List(ctx, projectA)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	// Byte order, which is what both Go and SQL's BINARY collation give.
	want := []string{"Beta", "_under", "alpha", "mid_10", "mid_2", "zeta"}
	if len(list) != len(want) {
		t.Fatalf("List has %d records, want %d", len(list), len(want))
	}
	for i, v := range list {
		if v.CodeName != want[i] {
			t.Errorf("List[%d].CodeName = %q, want %q (order by code_name)", i, v.CodeName, want[i])
			continue
		}
		assertSame(t, "List["+v.CodeName+"]", v, byCode[v.CodeName])
	}
}

func testUpdate(t *testing.T, s variable.Store) {
	ctx := context.Background()
	orig := record(t, "country")
	mustCreate(t, s, projectA, orig)

	changed := variable.Variable{
		ID: orig.ID, Name: "Plan", CodeName: "plan", Type: variable.List,
		Values: []string{"free", "pro"}, IsMulti: true, DefaultValue: []string{"pro"},
	}
	if err := changed.Normalize(); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(ctx, projectA, changed); err != nil {
		t.Fatalf("Update: %v", err)
	}
	got, err := s.Get(ctx, projectA, orig.ID)
	if err != nil {
		t.Fatalf("Get after Update: %v", err)
	}
	assertSame(t, "Get after Update", got, changed)

	// Keeping one's own code name is no conflict.
	changed.Name = "Plans"
	changed.DefaultValue = nil
	if err := s.Update(ctx, projectA, changed); err != nil {
		t.Fatalf("Update keeping the code_name: %v", err)
	}
	got, err = s.Get(ctx, projectA, orig.ID)
	if err != nil {
		t.Fatal(err)
	}
	assertSame(t, "Get after second Update", got, changed)

	// The old code name is free again.
	mustCreate(t, s, projectA, record(t, "country"))
}

func testUpdateNotFound(t *testing.T, s variable.Store) {
	ctx := context.Background()
	mustCreate(t, s, projectA, record(t, "a"))
	assertIs(t, "Update of an unknown id", s.Update(ctx, projectA, record(t, "b")), variable.ErrNotFound)
	list, err := s.List(ctx, projectA)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 {
		t.Errorf("Update of an unknown id changed the project: %d records, want 1", len(list))
	}
}

func testUpdateConflict(t *testing.T, s variable.Store) {
	ctx := context.Background()
	a, b := record(t, "a"), record(t, "b")
	mustCreate(t, s, projectA, a)
	mustCreate(t, s, projectA, b)
	clash := b
	clash.CodeName = "a"
	clash.Name = "renamed"
	assertIs(t, "Update to another variable's code_name", s.Update(ctx, projectA, clash), variable.ErrConflict)
	got, err := s.Get(ctx, projectA, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	assertSame(t, "record after a refused Update", got, b)
}

func testDelete(t *testing.T, s variable.Store) {
	ctx := context.Background()
	a, b := record(t, "a"), record(t, "b")
	mustCreate(t, s, projectA, a)
	mustCreate(t, s, projectA, b)
	if err := s.Delete(ctx, projectA, a.ID); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	_, err := s.Get(ctx, projectA, a.ID)
	assertIs(t, "Get after Delete", err, variable.ErrNotFound)
	assertIs(t, "second Delete", s.Delete(ctx, projectA, a.ID), variable.ErrNotFound)
	assertIs(t, "Delete of an unknown id", s.Delete(ctx, projectA, uuid.NewString()), variable.ErrNotFound)
	if got, err := s.GetMany(ctx, projectA, []string{a.ID, b.ID}); err != nil || len(got) != 1 {
		t.Errorf("GetMany after Delete: %d records, err %v; want only b", len(got), err)
	}
	list, err := s.List(ctx, projectA)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != b.ID {
		t.Errorf("List after Delete = %v, want only b", list)
	}
	// A deleted variable frees its id and code name.
	again := record(t, "a")
	again.ID = a.ID
	mustCreate(t, s, projectA, again)
}

func testProjectIsolation(t *testing.T, s variable.Store) {
	ctx := context.Background()
	inA := record(t, "country")
	mustCreate(t, s, projectA, inA)

	// The same code name, and even the same id, may exist in another project.
	inB := record(t, "country")
	inB.ID = inA.ID
	inB.Name = "Country in B"
	mustCreate(t, s, projectB, inB)
	onlyB := record(t, "only_b")
	mustCreate(t, s, projectB, onlyB)

	got, err := s.Get(ctx, projectA, inA.ID)
	if err != nil {
		t.Fatal(err)
	}
	assertSame(t, "A's record", got, inA)
	got, err = s.Get(ctx, projectB, inB.ID)
	if err != nil {
		t.Fatal(err)
	}
	assertSame(t, "B's record", got, inB)

	_, err = s.Get(ctx, projectA, onlyB.ID)
	assertIs(t, "Get of B's record from A", err, variable.ErrNotFound)
	if m, err := s.GetMany(ctx, projectA, []string{onlyB.ID}); err != nil || len(m) != 0 {
		t.Errorf("GetMany of B's record from A: %v, %v; want none", m, err)
	}
	wrong := onlyB
	wrong.Name = "hijacked"
	assertIs(t, "Update of B's record through A", s.Update(ctx, projectA, wrong), variable.ErrNotFound)
	assertIs(t, "Delete of B's record through A", s.Delete(ctx, projectA, onlyB.ID), variable.ErrNotFound)

	listA, err := s.List(ctx, projectA)
	if err != nil {
		t.Fatal(err)
	}
	if len(listA) != 1 {
		t.Errorf("List(A) has %d records, want 1", len(listA))
	}

	// Deleting in A leaves B alone.
	if err := s.Delete(ctx, projectA, inA.ID); err != nil {
		t.Fatal(err)
	}
	listB, err := s.List(ctx, projectB)
	if err != nil {
		t.Fatal(err)
	}
	if len(listB) != 2 {
		t.Fatalf("List(B) has %d records after a delete in A, want 2", len(listB))
	}
	assertSame(t, "B's record after a delete in A", listB[0], inB)
	assertSame(t, "B's other record", listB[1], onlyB)
}

func testNoAliasing(t *testing.T, s variable.Store) {
	ctx := context.Background()
	v := variable.Variable{
		ID: uuid.NewString(), Name: "Browsers", Type: variable.List,
		Values: []string{"Chrome", "Firefox"}, IsMulti: true, DefaultValue: []string{"Chrome"},
	}
	if err := v.Normalize(); err != nil {
		t.Fatal(err)
	}
	want := jsonOf(t, v)

	passed := v
	passed.Values = []string{"Chrome", "Firefox"}
	passed.DefaultValue = []string{"Chrome"}
	mustCreate(t, s, projectA, passed)
	passed.Values[0] = "changed after Create"
	passed.DefaultValue.([]string)[0] = "changed after Create"

	check := func(after string) {
		t.Helper()
		got, err := s.Get(ctx, projectA, v.ID)
		if err != nil {
			t.Fatal(err)
		}
		if g := jsonOf(t, got); g != want {
			t.Errorf("stored record changed after %s:\n got  %s\n want %s", after, g, want)
		}
	}
	check("the caller modified what it passed to Create")

	mutate := func(x variable.Variable) {
		if len(x.Values) > 0 {
			x.Values[0] = "mutated"
		}
		switch d := x.DefaultValue.(type) {
		case []string:
			d[0] = "mutated"
		case []any:
			d[0] = "mutated"
		}
	}
	got, err := s.Get(ctx, projectA, v.ID)
	if err != nil {
		t.Fatal(err)
	}
	mutate(got)
	check("the caller modified what Get returned")

	many, err := s.GetMany(ctx, projectA, []string{v.ID})
	if err != nil {
		t.Fatal(err)
	}
	mutate(many[v.ID])
	check("the caller modified what GetMany returned")

	list, err := s.List(ctx, projectA)
	if err != nil {
		t.Fatal(err)
	}
	mutate(list[0])
	check("the caller modified what List returned")

	upd := v
	upd.Values = []string{"Chrome", "Firefox"}
	upd.DefaultValue = []string{"Chrome"}
	if err := s.Update(ctx, projectA, upd); err != nil {
		t.Fatal(err)
	}
	mutate(upd)
	check("the caller modified what it passed to Update")
}

// concurrentWorkers is how many goroutines the concurrency tests run.
const concurrentWorkers = 8

func testConcurrent(t *testing.T, s variable.Store) {
	testConcurrentRecords(t, s)
	testRacingCreates(t, s)
}

// testConcurrentRecords creates, reads and updates distinct records from
// many goroutines: every record must be there, updated.
func testConcurrentRecords(t *testing.T, s variable.Store) {
	ctx := context.Background()
	const workers = concurrentWorkers
	const perWorker = 10
	var wg sync.WaitGroup
	errs := make(chan error, workers*perWorker*4)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < perWorker; i++ {
				createReadUpdate(ctx, s, fmt.Sprintf("w%d_%d", w, i), errs)
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	list, err := s.List(ctx, projectA)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != workers*perWorker {
		t.Errorf("after concurrent creates List has %d records, want %d", len(list), workers*perWorker)
	}
	for _, v := range list {
		if v.Name != "updated" {
			t.Errorf("%s: Name = %q, want the concurrent update", v.CodeName, v.Name)
		}
	}
}

// createReadUpdate creates a record of codeName in projectA, gets it, lists
// the project and renames the record to "updated", sending each failure to
// errs.
func createReadUpdate(ctx context.Context, s variable.Store, codeName string, errs chan<- error) {
	v := variable.Variable{
		ID: uuid.NewString(), Name: "v", CodeName: codeName,
		Type: variable.List, Values: []string{"x", "y"}, DefaultValue: "x",
	}
	if err := s.Create(ctx, projectA, v); err != nil {
		errs <- fmt.Errorf("Create %s: %w", v.CodeName, err)
		return
	}
	if _, err := s.Get(ctx, projectA, v.ID); err != nil {
		errs <- fmt.Errorf("Get %s: %w", v.CodeName, err)
	}
	if _, err := s.List(ctx, projectA); err != nil {
		errs <- fmt.Errorf("List: %w", err)
	}
	v.Name = "updated"
	if err := s.Update(ctx, projectA, v); err != nil {
		errs <- fmt.Errorf("Update %s: %w", v.CodeName, err)
	}
}

// testRacingCreates races creates of one code name: exactly one wins, the
// others conflict.
func testRacingCreates(t *testing.T, s variable.Store) {
	ctx := context.Background()
	const workers = concurrentWorkers
	var wins, conflicts, others int
	var mu sync.Mutex
	var wg sync.WaitGroup
	contenders := make([]variable.Variable, workers)
	for w := range contenders {
		contenders[w] = record(t, "contested")
	}
	for _, c := range contenders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.Create(ctx, projectB, c)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case errors.Is(err, variable.ErrConflict):
				conflicts++
			default:
				others++
				t.Errorf("racing Create: %v", err)
			}
		}()
	}
	wg.Wait()
	if wins != 1 || conflicts != workers-1 {
		t.Errorf("racing creates of one code_name: %d succeeded, %d conflicted, %d failed otherwise; want 1 and %d", wins, conflicts, others, workers-1)
	}
}
