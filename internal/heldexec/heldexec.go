// Package heldexec is a driver.Executor for tests that holds each query
// until the test lets it go, so that runs are in flight together for as
// long as a test needs (a flight others join, a slot of a limit); and Fake,
// built on it, the one fake executor tests share, with options (a fixed
// answer, failures, waiting for cancel, hooks, a record of every query).
package heldexec

import (
	"context"
	"sync"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

// Executor wraps an Executor: while held, each query sends on Started
// and waits until Release (or its context's end).
type Executor struct {
	driver.Executor
	// Started receives once a query is held.
	Started chan struct{}
	// Only, when set, selects the queries Hold holds; the others pass.
	Only func(driver.Statement) bool

	mu   sync.Mutex
	gate chan struct{} // nil: not held
}

// New wraps x, with room on Started for buffer queries held at once
// before one waits for the test to take it.
func New(x driver.Executor, buffer int) *Executor {
	return &Executor{Executor: x, Started: make(chan struct{}, buffer)}
}

// Hold makes the queries that start from now on wait.
func (x *Executor) Hold() {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.gate == nil {
		x.gate = make(chan struct{})
	}
}

// Release lets the held queries go, and those that start after.
func (x *Executor) Release() {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.gate != nil {
		close(x.gate)
		x.gate = nil
	}
}

// Query implements driver.Executor.
func (x *Executor) Query(ctx context.Context, st driver.Statement, b driver.Bounds) (*driver.Result, error) {
	if err := x.pass(ctx, st); err != nil {
		return nil, err
	}
	return x.Executor.Query(ctx, st, b)
}

// pass waits while st is held: until Release, or ctx's end (its error).
func (x *Executor) pass(ctx context.Context, st driver.Statement) error {
	x.mu.Lock()
	gate := x.gate
	x.mu.Unlock()
	if gate != nil && (x.Only == nil || x.Only(st)) {
		return x.wait(ctx, gate)
	}
	return nil
}

// hold waits while the executor is held, whatever the statement.
func (x *Executor) hold(ctx context.Context) error {
	x.mu.Lock()
	gate := x.gate
	x.mu.Unlock()
	if gate == nil {
		return nil
	}
	return x.wait(ctx, gate)
}

// wait tells Started and waits until gate closes or ctx ends (its error).
func (x *Executor) wait(ctx context.Context, gate chan struct{}) error {
	x.Started <- struct{}{}
	select {
	case <-gate:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
