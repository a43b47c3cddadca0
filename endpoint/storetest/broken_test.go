package storetest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/endpoint/storetest"
	"github.com/endpointkit/endpointkit/internal/flawcheck"
)

// broken wraps a working store (memstore.Store) and breaks one
// promise of the contract, named by flaw, to show that the suite catches
// each kind of broken store rather than passing anything.
type broken struct {
	driver.Store
	flaw string

	mu   sync.Mutex
	seen map[string]map[string]driver.VariableRef // "aliasing": the maps Get gave out
}

func (b *broken) Create(ctx context.Context, e driver.Endpoint, first driver.Version) error {
	switch b.flaw {
	case "drops-test-values":
		e.Query, first.Query = dropValues(e.Query), dropValues(first.Query)
	case "reformats-test-values":
		e.Query, first.Query = compactValues(e.Query), compactValues(first.Query)
	case "drops-settings":
		e.MaterializationBuckets, e.MaterializationTailColumn = nil, ""
	case "names-unique-among-all":
		// A deleted record's name is taken, as the stores kept it before.
		if list, err := b.Store.List(ctx, e.ProjectID); err == nil {
			for _, cur := range list {
				if cur.Name == e.Name {
					return fmt.Errorf("%w: name %q taken", driver.ErrConflict, e.Name)
				}
			}
		}
	}
	return b.Store.Create(ctx, e, first)
}

func (b *broken) Update(ctx context.Context, e driver.Endpoint, next *driver.Version) error {
	if b.flaw == "drops-description" {
		e.Description = ""
	}
	if b.flaw == "restore-evicts-live" && e.DeletedAt == nil {
		// A restore onto a live name pushes the live record out.
		if cur, err := b.Store.Get(ctx, e.ProjectID, e.Name); err == nil && cur.ID != e.ID {
			_ = b.Store.Delete(ctx, e.ProjectID, cur.ID)
		}
	}
	err := b.Store.Update(ctx, e, next)
	if b.flaw == "no-compare-and-swap" && next == nil && errors.Is(err, driver.ErrConflict) {
		// Writes over whatever is stored.
		list, lerr := b.Store.List(ctx, e.ProjectID)
		if lerr != nil {
			return lerr
		}
		for _, cur := range list {
			if cur.ID == e.ID {
				e.CurrentVersion = cur.CurrentVersion
				return b.Store.Update(ctx, e, nil)
			}
		}
	}
	return err
}

func (b *broken) Get(ctx context.Context, project, name string) (driver.Endpoint, error) {
	if b.flaw == "shared-projects" && project != "1" {
		if e, err := b.Store.Get(ctx, "1", name); err == nil {
			return e, nil
		}
	}
	e, err := b.Store.Get(ctx, project, name)
	if b.flaw == "gets-deleted" && errors.Is(err, driver.ErrNotFound) {
		list, _ := b.Store.List(ctx, project)
		for _, cur := range list {
			if cur.Name == name {
				return cur, nil
			}
		}
	}
	if b.flaw == "plain-errors" && errors.Is(err, driver.ErrNotFound) {
		return e, fmt.Errorf("no endpoint %q", name)
	}
	if b.flaw == "aliasing" && err == nil && e.Query.Variables != nil {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.seen == nil {
			b.seen = map[string]map[string]driver.VariableRef{}
		}
		if vars, ok := b.seen[e.ID]; ok {
			e.Query.Variables = vars
		} else {
			b.seen[e.ID] = e.Query.Variables
		}
	}
	return e, err
}

func (b *broken) List(ctx context.Context, project string) ([]driver.Endpoint, error) {
	list, err := b.Store.List(ctx, project)
	if b.flaw == "unordered" {
		slices.Reverse(list)
	}
	return list, err
}

func (b *broken) MarkExecuted(ctx context.Context, project, id string, at time.Time) error {
	if b.flaw == "ignores-mark-executed" {
		return nil
	}
	return b.Store.MarkExecuted(ctx, project, id, at)
}

func (b *broken) Delete(ctx context.Context, project, id string) error {
	if b.flaw == "delete-noop" {
		if _, err := b.Store.Versions(ctx, project, id); err != nil {
			return err
		}
		return nil
	}
	return b.Store.Delete(ctx, project, id)
}

func (b *broken) SetMaterialization(ctx context.Context, project, id string, st driver.MaterializationState) error {
	if b.flaw == "drops-state" {
		st.Table = ""
	}
	return b.Store.SetMaterialization(ctx, project, id, st)
}

func dropValues(q driver.Query) driver.Query {
	vars := make(map[string]driver.VariableRef, len(q.Variables))
	for id, ref := range q.Variables {
		ref.Value = nil
		vars[id] = ref
	}
	q.Variables = vars
	return q
}

func compactValues(q driver.Query) driver.Query {
	vars := make(map[string]driver.VariableRef, len(q.Variables))
	for id, ref := range q.Variables {
		if ref.Value != nil {
			var v any
			if err := json.Unmarshal(ref.Value, &v); err == nil {
				ref.Value, _ = json.Marshal(v)
			}
		}
		vars[id] = ref
	}
	q.Variables = vars
	return q
}

// brokenStores names each flaw and a check of the suite that must fail on
// it (others may fail too).
var brokenStores = map[string]string{
	"drops-test-values":      "CreateGet",
	"reformats-test-values":  "CreateGet",
	"drops-settings":         "MaterializationSettings",
	"drops-description":      "UpdateFields",
	"no-compare-and-swap":    "StaleWriter",
	"shared-projects":        "ProjectIsolation",
	"plain-errors":           "GetNotFound",
	"aliasing":               "NoAliasing",
	"unordered":              "List",
	"ignores-mark-executed":  "MarkExecuted",
	"delete-noop":            "Delete",
	"drops-state":            "SetMaterialization",
	"gets-deleted":           "SoftDeletedKeepTheirName",
	"names-unique-among-all": "SoftDeletedKeepTheirName",
	"restore-evicts-live":    "SoftDeletedKeepTheirName",
}

const flawEnv = "ENDPOINT_STORETEST_FLAW"

// TestBrokenStore runs the suite on the store with the flaw
// TestSuiteCatchesBrokenStores names (none: the intact store, which must
// pass), in a process of its own, so that the failures it must produce
// fail only that process.
func TestBrokenStore(t *testing.T) {
	flaw := os.Getenv(flawEnv)
	storetest.Run(t, func(t *testing.T) driver.Store {
		return &broken{Store: memstore.New(), flaw: flaw}
	})
}

// TestSuiteCatchesBrokenStores: the suite fails each flawed store, in the
// check of the promise it breaks.
func TestSuiteCatchesBrokenStores(t *testing.T) {
	if flawcheck.Child(flawEnv) {
		t.Skip("child process")
	}
	for flaw, check := range brokenStores {
		t.Run(flaw, func(t *testing.T) {
			t.Parallel()
			flawcheck.RequireCaught(t, "TestBrokenStore", flawEnv, flaw, check, "a store")
		})
	}
}
