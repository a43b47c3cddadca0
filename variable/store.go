package variable

import "context"

// Store keeps variable records, scoped by project. The endpoint service calls
// it after Normalize has checked a record; MemoryStore is the in-memory
// implementation, and package variable/storetest is the conformance suite
// that every implementation must pass.
//
// Guidelines for implementers:
//
//   - Persist, don't judge. A Store does not validate or correct what it is
//     given (no Normalize, no trimming, no case folding): ids and code names
//     are compared exactly as given. The only refusals are the ErrNotFound and
//     ErrConflict documented on each method, plus errors of the storage
//     itself (a canceled context among them).
//   - Errors that mean ErrNotFound or ErrConflict must wrap those sentinels so
//     that errors.Is finds them; add the id or code name to the message.
//   - Projects are isolated: the same id or code_name may exist in two
//     projects, and no method ever sees or touches another project's records.
//   - Returned values never alias stored ones, and stored values never alias
//     arguments: a caller may modify the Values slice or a slice DefaultValue
//     of what it passed or got back without changing the store.
//   - DefaultValue must come back with the same JSON encoding it went in with
//     (a store that keeps JSON text may return float64(5) for int64(5)).
//   - Every method is safe for concurrent use, and Create and Update check
//     their conflicts atomically with the write: two concurrent Creates of the
//     same code_name give one success and one ErrConflict.
type Store interface {
	// Create adds v, whose ID the caller has set. It returns ErrConflict when
	// the project already has a variable with v.ID or with v.CodeName.
	Create(ctx context.Context, project string, v Variable) error
	// Get returns the variable with the id, or ErrNotFound.
	Get(ctx context.Context, project, id string) (Variable, error)
	// GetMany returns the variables with the given ids, keyed by id. Ids that
	// are unknown in the project are simply absent from the map.
	GetMany(ctx context.Context, project string, ids []string) (map[string]Variable, error)
	// List returns every variable of the project, ordered by code_name
	// compared byte by byte (as Go compares strings, and SQL's BINARY or "C"
	// collation), so "Beta" < "_x" < "alpha".
	List(ctx context.Context, project string) ([]Variable, error)
	// Update replaces the variable with v.ID. It returns ErrNotFound when there
	// is none, and ErrConflict when v.CodeName is used by another variable of
	// the project.
	Update(ctx context.Context, project string, v Variable) error
	// Delete removes the variable with the id, or returns ErrNotFound. Its
	// code_name may then be used again.
	Delete(ctx context.Context, project, id string) error
}
