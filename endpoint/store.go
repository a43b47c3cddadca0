package endpoint

import "context"

// Store persists endpoints and their versions, scoped by project.
//
// Guidelines for implementers: a Store persists what it is given; it does not
// validate or correct input (the Service does). Every method is safe for
// concurrent use. Values returned never alias stored ones. Projects are
// isolated: nothing of one project is visible through another's id. A write
// either happens whole or not at all. Errors: ErrNotFound for an unknown
// endpoint or version, ErrConflict for a duplicate name in a project or a
// version number that already exists; wrap them (fmt.Errorf("...: %w")) if
// you add context. The conformance suite in endpoint/storetest states the
// contract as tests; run it against every implementation.
type Store interface {
	// Create stores a new endpoint together with its first version.
	Create(ctx context.Context, e Endpoint, first Version) error
	// Update replaces the endpoint with e.ID in e.ProjectID (a rename
	// included). When next is not nil it is appended as a new version in the
	// same write.
	Update(ctx context.Context, e Endpoint, next *Version) error
	// Get returns the endpoint named name in project.
	Get(ctx context.Context, project, name string) (Endpoint, error)
	// List returns the endpoints of project ordered by name.
	List(ctx context.Context, project string) ([]Endpoint, error)
	// Delete removes the endpoint with id in project and all its versions.
	Delete(ctx context.Context, project, id string) error
	// Version returns version number n of the endpoint with id in project.
	Version(ctx context.Context, project, id string, n int) (Version, error)
	// Versions returns all versions of the endpoint with id, oldest first.
	Versions(ctx context.Context, project, id string) ([]Version, error)
}
