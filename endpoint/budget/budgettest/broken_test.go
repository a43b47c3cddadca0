package budgettest_test

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/budget"
	"github.com/endpointkit/endpointkit/endpoint/budget/budgettest"
	"github.com/endpointkit/endpointkit/internal/flawcheck"
)

// TestMemory runs the suite on the in-process Counter.
func TestMemory(t *testing.T) {
	t.Parallel() // the suite sleeps: with the other tests
	budgettest.Run(t, func(t *testing.T) budget.Counter {
		return budget.NewMemory(budget.MemoryConfig{})
	}, budgettest.Options{})
}

// flawed is a counter store that breaks one promise of the contract,
// named by flaw, to show that the suite catches each kind of broken store
// rather than passing anything. Without a flaw it is a correct shared
// store (it passes the suite with Options.Shared).
type flawed struct {
	flaw string
	s    *shared
}

type shared struct {
	mu sync.Mutex
	m  map[string]*budget.Window
}

func (f *flawed) Take(_ context.Context, key string, limit int64, window time.Duration) (budget.Decision, error) {
	if f.flaw != "no-check" {
		if err := budget.Check(key, limit, window); err != nil {
			return budget.Decision{}, err
		}
	} else if limit < 1 || window <= 0 {
		return budget.Decision{Allowed: true}, nil // would divide by zero below
	}
	id := key + "\x00" + window.String()
	switch f.flaw {
	case "shares-keys":
		id = key[:min(len(key), 40)] + "\x00" + window.String() // keys cut short
	case "ignores-window":
		id = key
	}
	now := time.Now()
	f.s.mu.Lock()
	w := f.s.m[id]
	if w == nil {
		w = &budget.Window{}
		f.s.m[id] = w
	}
	if f.flaw == "racy" {
		// Reads, then writes after a pause: not one atomic step.
		cp := *w
		f.s.mu.Unlock()
		time.Sleep(time.Millisecond)
		d := cp.Take(now, limit, window)
		f.s.mu.Lock()
		*w = cp
		f.s.mu.Unlock()
		return d, nil
	}
	defer f.s.mu.Unlock()
	switch f.flaw {
	case "never-forgets":
		if w.Start.IsZero() {
			w.Start = now.Truncate(window)
		}
		if budget.Fits(0, w.Curr, limit, 0, window) {
			w.Curr++
			return budget.Decision{Allowed: true, Count: w.Curr}, nil
		}
		return budget.Decision{Count: w.Curr, RetryAfter: window}, nil
	case "fixed-window":
		w.Advance(now, window)
		w.Prev = 0
	}
	d := w.Take(now, limit, window)
	switch f.flaw {
	case "no-limit":
		if !d.Allowed {
			w.Curr++
			d = budget.Decision{Allowed: true, Count: w.Curr}
		}
	case "counts-refusals":
		if !d.Allowed {
			w.Curr++
			d.Count = w.Curr
		}
	case "short-retry":
		if !d.Allowed {
			d.RetryAfter = time.Millisecond
		}
	case "wrong-count":
		d.Count = 0
	}
	return d, nil
}

// brokenCounters names each flaw and the check of the suite that must
// fail on it.
var brokenCounters = map[string]string{
	"no-limit":        "Admits",
	"wrong-count":     "Admits",
	"counts-refusals": "RefusalCountsNothing",
	"shares-keys":     "Keys",
	"ignores-window":  "Windows",
	"racy":            "Concurrent",
	"short-retry":     "Admits",
	"never-forgets":   "RetryAfter",
	"fixed-window":    "Sliding",
	"no-check":        "Invalid",
	"per-instance":    "Shared",
}

const flawEnv = "ENDPOINTKIT_BUDGETTEST_FLAW"

// TestBrokenCounter runs the suite on the counter with the flaw named by
// $ENDPOINTKIT_BUDGETTEST_FLAW (none: a correct one, which must pass).
func TestBrokenCounter(t *testing.T) {
	t.Parallel() // the suite sleeps: with the other tests
	flaw := os.Getenv(flawEnv)
	var mu sync.Mutex
	stores := map[string]*shared{}
	budgettest.Run(t, func(t *testing.T) budget.Counter {
		mu.Lock()
		defer mu.Unlock()
		s := stores[t.Name()]
		if s == nil || flaw == "per-instance" {
			s = &shared{m: map[string]*budget.Window{}}
			stores[t.Name()] = s
		}
		return &flawed{flaw: flaw, s: s}
	}, budgettest.Options{Shared: true})
}

// TestSuiteCatchesBrokenCounters: the suite fails each flawed counter, in
// the check meant to catch it, in a child process (a failing subtest
// would fail this test) that runs that check alone: the others sleep
// through windows (RetryAfter, Sliding) and prove nothing of the flaw.
func TestSuiteCatchesBrokenCounters(t *testing.T) {
	t.Parallel() // the children sleep: with the other tests
	if flawcheck.Child(flawEnv) {
		t.Skip("child process")
	}
	if testing.Short() {
		t.Skip("runs a check of the suite once per flaw (up to 4 s each)")
	}
	for flaw, check := range brokenCounters {
		t.Run(flaw, func(t *testing.T) {
			t.Parallel()
			flawcheck.RequireCaught(t, "TestBrokenCounter", flawEnv, flaw, check, "a counter")
		})
	}
}
