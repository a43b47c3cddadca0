package driver

import (
	"context"
	"errors"
)

// ErrWriteLimit is the error (in the chain of an ExecWithin's error) of
// statements that grew the database past the bytes they were given.
var ErrWriteLimit = errors.New("driver: the statements wrote past their byte limit")

// ExecBounder is an Executor that can bound what its statements write
// while they run. The Service builds a materialized table with it, when
// the Executor has it, so that a table over Config.MaxMaterializedBytes
// fails as it grows rather than once written in full.
type ExecBounder interface {
	// ExecWithin is Exec, failing with an error wrapping ErrWriteLimit
	// once the statements have grown the database by more than maxBytes
	// (about: engines count in pages). maxBytes <= 0 is no bound.
	ExecWithin(ctx context.Context, stmts []Statement, tx bool, maxBytes int64) error
}
