package driver

import (
	"context"
	"errors"
	"time"
)

// Store persists endpoints and their versions, scoped by project.
//
// Guidelines for implementers: a Store persists what it is given; it does not
// validate or correct input (the Service does). Every method is safe for
// concurrent use. Values returned never alias stored ones. Projects are
// isolated: nothing of one project is visible through another's id. A write
// either happens whole or not at all. Errors: ErrNotFound for an unknown
// endpoint or version, ErrConflict for a duplicate name among the live
// endpoints of a project (see Endpoint.DeletedAt), a
// version number that already exists, or an Update whose version does not
// follow the stored one (see Update); wrap them (fmt.Errorf("...: %w")) if
// you add context. The conformance suite in endpoint/storetest states the
// contract as tests; run it against every implementation.
type Store interface {
	// Create stores a new endpoint together with its first version.
	Create(ctx context.Context, e Endpoint, first Version) error
	// Update replaces the endpoint with e.ID in e.ProjectID (a rename
	// included). When next is not nil it is appended as a new version in the
	// same write.
	//
	// Update is a compare-and-swap on the version, so that two writers that
	// read the same endpoint cannot move it back to an older query: with next
	// nil, the stored CurrentVersion must equal e.CurrentVersion; with next
	// set, next.Number must be the stored CurrentVersion plus one. Otherwise
	// Update changes nothing and returns ErrConflict.
	Update(ctx context.Context, e Endpoint, next *Version) error
	// MarkExecuted sets the LastExecutedAt of the endpoint with id in
	// project to at, unless the stored value is already later; nothing else
	// changes (not UpdatedAt, not the version). It is separate from Update so
	// that a run never overwrites a concurrent edit.
	MarkExecuted(ctx context.Context, project, id string, at time.Time) error
	// SetMaterialization replaces the MaterializationState of the endpoint
	// with id in project; nothing else changes. Create stores the state it
	// is given and Update keeps the stored one, so that a refresh and an
	// edit never overwrite each other.
	SetMaterialization(ctx context.Context, project, id string, st MaterializationState) error
	// ListMaterialized returns the endpoints of every project whose
	// IsMaterialized is set, each with its ProjectID, ordered by project
	// and then by name. Service.RefreshStale walks it.
	ListMaterialized(ctx context.Context) ([]Endpoint, error)
	// Get returns the live endpoint (DeletedAt nil) named name in project;
	// ErrNotFound when there is none, soft-deleted ones of that name
	// notwithstanding.
	Get(ctx context.Context, project, name string) (Endpoint, error)
	// List returns the endpoints of project, the soft-deleted ones
	// included, ordered by name and then by id.
	List(ctx context.Context, project string) ([]Endpoint, error)
	// Delete removes the endpoint with id in project and all its versions.
	Delete(ctx context.Context, project, id string) error
	// Version returns version number n of the endpoint with id in project.
	Version(ctx context.Context, project, id string, n int) (Version, error)
	// Versions returns all versions of the endpoint with id, oldest first.
	Versions(ctx context.Context, project, id string) ([]Version, error)
	// SetVersionColumns replaces the Columns and Types of version n of the
	// endpoint with id in project; nothing else changes. The Service calls
	// it for a version saved without them, once it has described it, and
	// when an answer shows a type the description left unnamed. An unknown
	// endpoint or version is ErrNotFound.
	SetVersionColumns(ctx context.Context, project, id string, n int, columns, types []string) error
}

// The errors a Store (and a variable store) returns, compared with
// errors.Is; wrap them to add context. The Service answers ErrNotFound
// with a 404 and ErrConflict with a 409, and any other error of a Store as
// a failing backend (502) without showing its text.
var (
	// ErrNotFound is an unknown endpoint or version.
	ErrNotFound = errors.New("driver: not found")
	// ErrConflict is a write that collides with what is stored: a name
	// taken, a version number that exists, an Update that does not follow
	// the stored version.
	ErrConflict = errors.New("driver: conflict")
)
