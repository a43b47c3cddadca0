package endpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/insight"
	"github.com/endpointkit/endpointkit/internal/apierror"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/google/uuid"
)

// CreateRequest is the input of Create (the JSON body of POST endpoints/).
type CreateRequest struct {
	Name           string `json:"name"`
	Description    string `json:"description"`
	Query          *Query `json:"query"`
	IsActive       *bool  `json:"is_active"`
	IsMaterialized bool   `json:"is_materialized"`
	// DataFreshnessSeconds is one of DataFreshnessValues(); nil means
	// DefaultDataFreshness.
	DataFreshnessSeconds *int `json:"data_freshness_seconds"`
	// Materialization settings; see the Endpoint fields of the same names.
	MaterializationFreshness Seconds                  `json:"materialization_freshness"`
	MaterializationBuckets   map[string]engine.Bucket `json:"materialization_buckets"`
	MaterializationTail      string                   `json:"materialization_tail_column"`
	OptionalBreakdowns       []string                 `json:"optional_breakdown_properties"`
}

// UpdateRequest is the input of Update (the JSON body of PATCH); nil fields
// are left as they are.
type UpdateRequest struct {
	Name           *string `json:"name"`
	Description    *string `json:"description"`
	Query          *Query  `json:"query"`
	IsActive       *bool   `json:"is_active"`
	IsMaterialized *bool   `json:"is_materialized"`
	// DataFreshnessSeconds is one of DataFreshnessValues().
	DataFreshnessSeconds *int `json:"data_freshness_seconds"`
	// Materialization settings; an empty map or list clears them.
	MaterializationFreshness *Seconds                  `json:"materialization_freshness"`
	MaterializationBuckets   *map[string]engine.Bucket `json:"materialization_buckets"`
	MaterializationTail      *string                   `json:"materialization_tail_column"`
	OptionalBreakdowns       *[]string                 `json:"optional_breakdown_properties"`
	// Deleted, alone in a request, soft-deletes the endpoint (true; see
	// SoftDelete) or restores the one last deleted under the name (false;
	// see Restore; for a live endpoint it changes nothing).
	Deleted *bool `json:"deleted"`
}

// Create validates req and stores a new endpoint with version 1. IsActive
// defaults to true.
func (s *Service) Create(ctx context.Context, project string, req CreateRequest) (Endpoint, error) {
	if err := checkName(req.Name); err != nil {
		return Endpoint{}, err
	}
	if err := checkDescription(req.Description); err != nil {
		return Endpoint{}, err
	}
	if req.Query == nil {
		return Endpoint{}, required("query")
	}
	freshness := DefaultDataFreshness
	if req.DataFreshnessSeconds != nil {
		if err := checkDataFreshness(*req.DataFreshnessSeconds); err != nil {
			return Endpoint{}, err
		}
		freshness = *req.DataFreshnessSeconds
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	c, err := s.compileQuery(ctx, project, driver.Query(*req.Query))
	if err != nil {
		return Endpoint{}, err
	}
	described, warning, err := s.checkQuery(ctx, project, req.Name, c)
	if err != nil {
		return Endpoint{}, err
	}
	now := s.now()
	e := driver.Endpoint{
		ID:                   uuid.NewString(),
		ProjectID:            project,
		Name:                 req.Name,
		Description:          req.Description,
		Query:                c.query,
		IsActive:             req.IsActive == nil || *req.IsActive,
		IsMaterialized:       req.IsMaterialized,
		CurrentVersion:       1,
		DataFreshnessSeconds: freshness,
		VersionsCount:        1,
		CreatedAt:            now,
		UpdatedAt:            now,

		MaterializationFreshness:  time.Duration(req.MaterializationFreshness),
		MaterializationBuckets:    nonEmptyMap(req.MaterializationBuckets),
		MaterializationTailColumn: req.MaterializationTail,
		OptionalBreakdowns:        nonEmptyList(req.OptionalBreakdowns),
	}
	if err := s.checkMaterialization(ctx, &e, c); err != nil {
		return Endpoint{}, err
	}
	first := driver.Version{EndpointID: e.ID, Number: 1, Query: c.query, CreatedAt: now}
	s.recordColumns(c, &first, described)
	if err := s.cfg.Endpoints.Create(ctx, e, first); err != nil {
		if errors.Is(err, ErrConflict) {
			return Endpoint{}, nameTaken()
		}
		return Endpoint{}, storeError(err, nil)
	}
	s.cache.put(cacheKey{project, e.ID, 1}, c, now, s.cache.generation())
	s.requestRefreshIfPending(&e, c)
	view := s.endpointView(ctx, &e)
	view.CheckWarning = warning
	return view, nil
}

// Update applies req to the endpoint named name; a changed query creates a
// new version, and other changes do not. A query equal to the current one
// is no change. An update that fails a check changes nothing.
func (s *Service) Update(ctx context.Context, project, name string, req UpdateRequest) (Endpoint, error) {
	if req.Deleted != nil {
		return s.setDeleted(ctx, project, name, req)
	}
	next, drop, warning, err := s.update(ctx, project, name, req)
	// The table of an endpoint no longer materialized is dropped once the
	// write lock is released, so that no other write waits on the drop.
	s.dropLater(ctx, drop)
	if err != nil {
		return Endpoint{}, err
	}
	view := s.endpointView(ctx, &next)
	view.CheckWarning = warning
	return view, nil
}

// update is Update under the write lock; it returns the stored table to
// drop, if any.
func (s *Service) update(ctx context.Context, project, name string, req UpdateRequest) (next driver.Endpoint, drop, warning string, err error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	cur, err := s.get(ctx, project, name)
	if err != nil {
		return driver.Endpoint{}, "", "", err
	}
	next = cur
	renamed, err := s.applyFields(ctx, project, &next, req)
	if err != nil {
		return driver.Endpoint{}, "", "", err
	}
	now := s.now()
	version, c, warning, err := s.applyQuery(ctx, project, &cur, &next, req, now)
	if err != nil {
		return driver.Endpoint{}, "", "", err
	}
	if err := s.checkMaterialization(ctx, &next, c); err != nil {
		return driver.Endpoint{}, "", "", err
	}
	if version == nil && sameEndpoint(next, cur) {
		return cur, "", "", nil
	}
	next.UpdatedAt = now
	if err := s.cfg.Endpoints.Update(ctx, next, version); err != nil {
		return driver.Endpoint{}, "", "", updateError(err, name, renamed)
	}
	if version != nil {
		s.cache.put(cacheKey{project, next.ID, version.Number}, c, now, s.cache.generation())
	}
	if cur.IsMaterialized && !next.IsMaterialized {
		next.MaterializationState, drop = s.dematerialize(ctx, &next)
	}
	s.requestRefreshIfPending(&next, c)
	return next, drop, warning, nil
}

// applyFields sets the fields of next that req names, other than the query;
// renamed reports a new name, which was checked to be free.
func (s *Service) applyFields(ctx context.Context, project string, next *driver.Endpoint, req UpdateRequest) (renamed bool, err error) {
	if req.Name != nil && *req.Name != next.Name {
		if err := s.checkRename(ctx, project, *req.Name); err != nil {
			return false, err
		}
		next.Name, renamed = *req.Name, true
	}
	if req.DataFreshnessSeconds != nil {
		if err := checkDataFreshness(*req.DataFreshnessSeconds); err != nil {
			return false, err
		}
		next.DataFreshnessSeconds = *req.DataFreshnessSeconds
	}
	if req.Description != nil {
		if err := checkDescription(*req.Description); err != nil {
			return false, err
		}
	}
	setIf(&next.Description, req.Description)
	setIf(&next.IsActive, req.IsActive)
	setIf(&next.IsMaterialized, req.IsMaterialized)
	if req.MaterializationFreshness != nil {
		next.MaterializationFreshness = time.Duration(*req.MaterializationFreshness)
	}
	if req.MaterializationBuckets != nil {
		next.MaterializationBuckets = nonEmptyMap(*req.MaterializationBuckets)
	}
	setIf(&next.MaterializationTailColumn, req.MaterializationTail)
	if req.OptionalBreakdowns != nil {
		next.OptionalBreakdowns = nonEmptyList(*req.OptionalBreakdowns)
	}
	return renamed, nil
}

// setIf sets *dst to *v when v is not nil: a field of an UpdateRequest.
func setIf[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// applyQuery compiles the query of req, if any, and makes it next's new
// version when it differs from cur's. It returns the new version (nil
// when none) and the compiled query the materialization checks need: the
// new one, or cur's when the update touches materialization without a
// query, or nil when nothing needs one.
func (s *Service) applyQuery(ctx context.Context, project string, cur, next *driver.Endpoint, req UpdateRequest, now time.Time) (*driver.Version, *compiled, string, error) {
	var version *driver.Version
	var warning string
	if req.Query != nil {
		c, err := s.compileQuery(ctx, project, driver.Query(*req.Query))
		if err != nil {
			return nil, nil, "", err
		}
		if !sameQuery(c.query, cur.Query) {
			described, w, err := s.checkQuery(ctx, project, next.Name, c)
			if err != nil {
				return nil, nil, "", err
			}
			warning = w
			next.Query = c.query
			next.CurrentVersion = cur.CurrentVersion + 1
			next.VersionsCount = cur.VersionsCount + 1
			version = &driver.Version{EndpointID: cur.ID, Number: next.CurrentVersion, Query: c.query, CreatedAt: now}
			s.recordColumns(c, version, described)
		}
		return version, c, warning, nil
	}
	if next.IsMaterialized || req.MaterializationBuckets != nil || req.MaterializationTail != nil || req.OptionalBreakdowns != nil {
		c, err := s.compiledVersion(ctx, cur, cur.CurrentVersion)
		return nil, c, "", err
	}
	return nil, nil, "", nil
}

// updateError is the error of Update when the store refused the write.
func updateError(err error, name string, renamed bool) error {
	switch {
	case errors.Is(err, ErrNotFound):
		return endpointNotFound(name)
	case errors.Is(err, ErrConflict) && renamed:
		return nameTaken()
	case errors.Is(err, ErrConflict):
		return conflictf(CodeConflict, "", "Endpoint '%s' was changed by another request; retry.", name)
	}
	return storeError(err, nil)
}

// checkRename checks a new name, and that the project has no endpoint of
// that name. The store checks again atomically; this check words the usual
// case precisely.
func (s *Service) checkRename(ctx context.Context, project, name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	_, err := s.liveByName(ctx, project, name)
	switch {
	case err == nil:
		return nameTaken()
	case errors.Is(err, ErrNotFound):
		return nil
	}
	return storeError(err, nil)
}

func nameTaken() *Error {
	return conflictf(CodeConflict, "name", "An endpoint with this name already exists for this project.")
}

func endpointNotFound(name string) *Error {
	return notFoundf("Endpoint '%s' not found.", name)
}

// sameQuery reports whether two normalized queries are the same, so that
// saving an unchanged query makes no version.
func sameQuery(a, b driver.Query) bool {
	ja, erra := Query(a).MarshalJSON()
	jb, errb := Query(b).MarshalJSON()
	if erra != nil || errb != nil {
		return false
	}
	var va, vb any
	if json.Unmarshal(ja, &va) != nil || json.Unmarshal(jb, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

// sameEndpoint reports whether an update changed none of the fields an
// update without a new version can change.
func sameEndpoint(a, b driver.Endpoint) bool {
	return a.Name == b.Name && a.Description == b.Description &&
		a.IsActive == b.IsActive && a.IsMaterialized == b.IsMaterialized &&
		a.DataFreshnessSeconds == b.DataFreshnessSeconds &&
		a.MaterializationFreshness == b.MaterializationFreshness &&
		maps.Equal(a.MaterializationBuckets, b.MaterializationBuckets) &&
		a.MaterializationTailColumn == b.MaterializationTailColumn &&
		slices.Equal(a.OptionalBreakdowns, b.OptionalBreakdowns)
}

func nonEmptyMap(m map[string]engine.Bucket) map[string]engine.Bucket {
	if len(m) == 0 {
		return nil
	}
	return maps.Clone(m)
}

func nonEmptyList(l []string) []string {
	if len(l) == 0 {
		return nil
	}
	return slices.Clone(l)
}

// Get returns the endpoint named name.
func (s *Service) Get(ctx context.Context, project, name string) (Endpoint, error) {
	// last_executed_at of the runs that ended before.
	if err := s.Flush(ctx); err != nil {
		return Endpoint{}, err
	}
	e, err := s.get(ctx, project, name)
	if err != nil {
		return Endpoint{}, err
	}
	return s.endpointView(ctx, &e), nil
}

// get returns the live endpoint named name: every route but Restore finds
// an endpoint through it (or through liveByName), so that a soft-deleted
// one is a 404 like an unknown one.
func (s *Service) get(ctx context.Context, project, name string) (driver.Endpoint, error) {
	e, err := s.liveByName(ctx, project, name)
	if err != nil {
		return driver.Endpoint{}, storeError(err, func() *Error { return endpointNotFound(name) })
	}
	e.ProjectID = project
	return e, nil
}

// liveByName is the store's endpoint named name in project if it lives:
// ErrNotFound for a soft-deleted one, whatever name a store keeps it
// under, and for a name no live endpoint can have (checkName refuses it),
// such as one with a slash.
func (s *Service) liveByName(ctx context.Context, project, name string) (driver.Endpoint, error) {
	if !validName(name) {
		return driver.Endpoint{}, fmt.Errorf("%w: no live endpoint can be named %q", ErrNotFound, name)
	}
	e, err := s.cfg.Endpoints.Get(ctx, project, name)
	if err != nil {
		return driver.Endpoint{}, err
	}
	if e.DeletedAt != nil {
		return driver.Endpoint{}, fmt.Errorf("%w: endpoint %q of project %q is deleted", ErrNotFound, name, project)
	}
	return e, nil
}

// List returns the endpoints of project ordered by name; never nil.
func (s *Service) List(ctx context.Context, project string) ([]Endpoint, error) {
	if err := s.Flush(ctx); err != nil {
		return nil, err
	}
	list, err := s.cfg.Endpoints.List(ctx, project)
	if err != nil {
		return nil, storeError(err, nil)
	}
	for i := range list {
		list[i].ProjectID = project
	}
	list = s.live(ctx, list)
	out := make([]Endpoint, len(list))
	for i := range list {
		out[i] = s.endpointView(ctx, &list[i])
	}
	return out, nil
}

// Delete removes the endpoint named name and its versions, then drops its
// stored tables, best effort: once the write lock is released, and for at
// most a second, so that neither this delete nor any other write waits on
// a refresh that holds the database (SQLite has one writer). A table left
// behind serves nothing and goes with the next RemoveOrphans; a refresh
// of the endpoint under way drops what it built when it notices.
func (s *Service) Delete(ctx context.Context, project, name string) error {
	e, err := s.delete(ctx, project, name)
	if err != nil {
		return err
	}
	s.dropTables(ctx, &e)
	return nil
}

func (s *Service) delete(ctx context.Context, project, name string) (driver.Endpoint, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	e, err := s.get(ctx, project, name)
	if err != nil {
		return driver.Endpoint{}, err
	}
	if err := s.cfg.Endpoints.Delete(ctx, project, e.ID); err != nil {
		return driver.Endpoint{}, storeError(err, func() *Error { return endpointNotFound(name) })
	}
	s.executed.Forget(e.ID)
	// Best effort: a log left behind is unreachable (ids are not reused)
	// and ages out.
	_ = s.runLog.DeleteEndpoint(context.WithoutCancel(ctx), project, e.ID)
	return e, nil
}

// checkName enforces the name rule: it appears in URL paths, so it is kept
// to ASCII letters, digits, '-' and '_', starting with a letter, at most 128
// characters (^[a-zA-Z][a-zA-Z0-9_-]{0,127}$).
func checkName(name string) *Error {
	if name == "" {
		return required("name")
	}
	if !validName(name) {
		return invalidf(CodeInvalidInput, "name", "Invalid name '%s'. Must start with a letter, contain only alphanumeric characters, hyphens, or underscores, and be between 1 and 128 characters long.", name)
	}
	return nil
}

// checkDescription refuses a description that no store can hold the same
// way: a NUL character (PostgreSQL cannot store it in text) or text that is
// not UTF-8.
func checkDescription(d string) *Error {
	switch {
	case strings.IndexByte(d, 0) >= 0:
		return invalidf(CodeInvalidInput, "description", "Invalid description: the text holds a NUL character (\\u0000), which databases cannot store in text.")
	case !utf8.ValidString(d):
		return invalidf(CodeInvalidInput, "description", "Invalid description: the text is not valid UTF-8.")
	}
	return nil
}

// validName reports whether name matches ^[a-zA-Z][a-zA-Z0-9_-]{0,127}$.
func validName(name string) bool { return apierror.ValidName(name) }

// DefaultDeletedRetention is how long a soft-deleted endpoint can be
// restored (see Config.DeletedRetention).
const DefaultDeletedRetention = 30 * 24 * time.Hour

// nameBeforeDelete is the name of the soft-deleted endpoint e. A
// soft-deleted endpoint keeps its name, its state being DeletedAt (stores
// keep names unique among live endpoints only); a Store written for an
// older version of this package may still hold it under the name
// "<name>/<id>", which is read as <name>.
func nameBeforeDelete(e *driver.Endpoint) string {
	return strings.TrimSuffix(e.Name, "/"+e.ID)
}

// SoftDelete hides the endpoint named name: every route answers 404 for it
// and its name is free for a new endpoint at once, while its record,
// versions, run log and stored tables are kept for
// Config.DeletedRetention, within which Restore brings it back. Past the
// retention it is deleted for good (see purgeDeleted). It returns the
// endpoint as it was, with DeletedAt set.
func (s *Service) SoftDelete(ctx context.Context, project, name string) (Endpoint, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	cur, err := s.get(ctx, project, name)
	if err != nil {
		return Endpoint{}, err
	}
	now := s.now()
	next := cur
	next.DeletedAt, next.UpdatedAt = &now, now
	if err := s.cfg.Endpoints.Update(ctx, next, nil); err != nil {
		return Endpoint{}, updateError(err, name, false)
	}
	return s.endpointView(ctx, &next), nil
}

// Restore brings back the endpoint of project most recently soft-deleted
// under name, within Config.DeletedRetention, as it was (versions, run
// log, settings; its stored table serves again once fresh). It is a 404
// when there is none and a 409 when a live endpoint has taken the name
// meanwhile.
func (s *Service) Restore(ctx context.Context, project, name string) (Endpoint, error) {
	if err := checkName(name); err != nil {
		return Endpoint{}, err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	list, err := s.cfg.Endpoints.List(ctx, project)
	if err != nil {
		return Endpoint{}, storeError(err, nil)
	}
	now := s.now()
	found, err := s.deletedNamed(list, name, now)
	if err != nil {
		return Endpoint{}, err
	}
	if err := s.checkRename(ctx, project, name); err != nil {
		return Endpoint{}, err
	}
	next := *found
	next.ProjectID, next.Name, next.DeletedAt, next.UpdatedAt = project, name, nil, now
	if err := s.cfg.Endpoints.Update(ctx, next, nil); err != nil {
		return Endpoint{}, updateError(err, name, true)
	}
	if c, err := s.compiledVersion(ctx, &next, next.CurrentVersion); err == nil {
		s.requestRefreshIfPending(&next, c)
	}
	return s.endpointView(ctx, &next), nil
}

// deletedNamed is the endpoint of list that Restore brings back under
// name: the one most recently soft-deleted under it within the retention,
// or the 404 naming none.
func (s *Service) deletedNamed(list []driver.Endpoint, name string, now time.Time) (*driver.Endpoint, error) {
	var found *driver.Endpoint
	for i := range list {
		e := &list[i]
		if e.DeletedAt == nil || nameBeforeDelete(e) != name || s.expired(e, now) {
			continue
		}
		if found == nil || e.DeletedAt.After(*found.DeletedAt) {
			found = e
		}
	}
	if found == nil {
		return nil, notFoundf("No endpoint named '%s' was deleted in the last %s.", name, s.cfg.DeletedRetention)
	}
	return found, nil
}

// restoreRefreshes reports whether restoring name (an update whose only
// field is deleted false) starts a refresh, found as setDeleted and
// Restore find it: a live endpoint of that name is answered as it is (no
// refresh); otherwise the endpoint restored starts one when it is
// materialized. Nothing to restore is Restore's 404, so that a refused
// restore costs no budget.
func (s *Service) restoreRefreshes(ctx context.Context, project, name string) (bool, error) {
	if err := checkName(name); err != nil {
		return false, err
	}
	_, err := s.liveByName(ctx, project, name)
	switch {
	case err == nil:
		return false, nil
	case !errors.Is(err, ErrNotFound):
		return false, storeError(err, nil)
	}
	list, err := s.cfg.Endpoints.List(ctx, project)
	if err != nil {
		return false, storeError(err, nil)
	}
	found, err := s.deletedNamed(list, name, s.now())
	if err != nil {
		return false, err
	}
	return found.IsMaterialized, nil
}

// setDeleted is an Update whose request sets Deleted, which must come
// alone.
func (s *Service) setDeleted(ctx context.Context, project, name string, req UpdateRequest) (Endpoint, error) {
	if err := deletedAlone(req); err != nil {
		return Endpoint{}, err
	}
	if *req.Deleted {
		return s.SoftDelete(ctx, project, name)
	}
	if e, err := s.Get(ctx, project, name); err == nil || !errors.Is(err, ErrNotFound) {
		return e, err
	}
	return s.Restore(ctx, project, name)
}

// deletedAlone refuses an update that sets Deleted with another field.
func deletedAlone(req UpdateRequest) error {
	rest := req
	rest.Deleted = nil
	if rest != (UpdateRequest{}) {
		return invalidf(CodeInvalidInput, "deleted", "deleted must be the only field of its request; delete or restore first, then change the endpoint.")
	}
	return nil
}

// usingName names e in a message about what uses a variable: a
// soft-deleted endpoint by its former name, said deleted.
func usingName(e *driver.Endpoint) string {
	if e.DeletedAt != nil {
		return nameBeforeDelete(e) + " (deleted)"
	}
	return e.Name
}

// Version is one version of an endpoint as GET endpoints/{name}/versions/
// shows it: an immutable snapshot of its query (every change of the query
// creates the next version; numbers start at 1), the variables a run of it
// takes, when it was saved, and its materialization.
type Version struct {
	Version   int       `json:"version"`
	Query     Query     `json:"query"`
	CreatedAt time.Time `json:"created_at"`
	IsCurrent bool      `json:"is_current"`
	// Variables are what a run of this version takes, by code name. Empty
	// when the version no longer compiles (a variable it used was
	// changed); Materialization.Reason then says why.
	Variables       []RunVariable          `json:"variables"`
	Materialization VersionMaterialization `json:"materialization"`
}

// RunVariable is a variable as a run sees it: its definition (for a SQL
// endpoint, the data-management variable; for an insight endpoint, a
// breakdown property or date_from and date_to) and whether a run must give
// it.
type RunVariable struct {
	ID       string        `json:"id,omitempty"`
	Name     string        `json:"name"`
	CodeName string        `json:"code_name"`
	Type     variable.Type `json:"type"`
	IsMulti  bool          `json:"is_multi,omitempty"`
	Values   []string      `json:"values,omitempty"`
	Required bool          `json:"required"`
}

// VersionMaterialization is a version's materialization: whether it can be
// materialized with the endpoint's current settings (and why not), and
// whether the endpoint's stored table was built from it.
type VersionMaterialization struct {
	CanMaterialize     bool       `json:"can_materialize"`
	Reason             string     `json:"reason"`
	Materialized       bool       `json:"materialized"`
	LastMaterializedAt *time.Time `json:"last_materialized_at"`
}

// Versions returns every version of the endpoint named name, oldest
// first.
func (s *Service) Versions(ctx context.Context, project, name string) ([]Version, error) {
	e, err := s.get(ctx, project, name)
	if err != nil {
		return nil, err
	}
	vs, err := s.cfg.Endpoints.Versions(ctx, project, e.ID)
	if err != nil {
		return nil, storeError(err, func() *Error { return endpointNotFound(name) })
	}
	out := make([]Version, len(vs))
	for i := range vs {
		out[i] = s.versionView(ctx, &e, vs[i])
	}
	return out, nil
}

// Version returns version n of the endpoint named name.
func (s *Service) Version(ctx context.Context, project, name string, n int) (Version, error) {
	e, err := s.get(ctx, project, name)
	if err != nil {
		return Version{}, err
	}
	v, err := s.version(ctx, &e, n)
	if err != nil {
		return Version{}, err
	}
	return s.versionView(ctx, &e, v), nil
}

// version reads version n of e; a 404 names it when there is none.
func (s *Service) version(ctx context.Context, e *driver.Endpoint, n int) (driver.Version, error) {
	if n < 1 {
		return driver.Version{}, invalidf(CodeInvalidInput, "version", "Version must be a positive integer, got %d.", n)
	}
	v, err := s.cfg.Endpoints.Version(ctx, e.ProjectID, e.ID, n)
	if err != nil {
		return driver.Version{}, storeError(err, func() *Error {
			return notFoundf("Version %d not found for endpoint '%s'", n, e.Name)
		})
	}
	return v, nil
}

// versionView is v of e as Versions and Version show it.
func (s *Service) versionView(ctx context.Context, e *driver.Endpoint, v driver.Version) Version {
	info := Version{
		Version: v.Number, Query: Query(v.Query), CreatedAt: v.CreatedAt,
		IsCurrent: v.Number == e.CurrentVersion, Variables: []RunVariable{},
	}
	st := &e.MaterializationState
	if e.IsMaterialized && st.Table != "" && st.At != nil && builtVersion(st.Built) == v.Number {
		at := *st.At
		info.Materialization.Materialized, info.Materialization.LastMaterializedAt = true, &at
	}
	c, err := s.compiledAt(ctx, e, v.Number, s.now())
	if err != nil {
		info.Materialization.Reason = "the query cannot be compiled: " + errorDetail(err)
		return info
	}
	info.Variables = runVariables(e, c, v.Number)
	if vd := s.verdict(ctx, c, e.MaterializationBuckets, e.MaterializationTailColumn); vd.ok {
		info.Materialization.CanMaterialize = true
	} else {
		info.Materialization.Reason = vd.reason
	}
	return info
}

// runVariables lists the variables a run of version n of e takes, sorted
// by code name. A SQL run needs every one. An inline insight run may omit
// any; a run of a materialized insight endpoint's current version takes
// only the breakdowns, each required unless listed in OptionalBreakdowns.
func runVariables(e *driver.Endpoint, c *compiled, n int) []RunVariable {
	out := []RunVariable{}
	if c.insight == nil {
		for _, v := range c.vars {
			out = append(out, RunVariable{
				ID: v.ID, Name: v.Name, CodeName: v.CodeName, Type: v.Type,
				IsMulti: v.IsMulti, Values: slices.Clone(v.Values), Required: true,
			})
		}
		return out
	}
	materialized := e.IsMaterialized && n == e.CurrentVersion
	for _, name := range c.insight.Variables(materialized) {
		rv := RunVariable{Name: name, CodeName: name, Type: variable.String}
		switch name {
		case insight.DateFrom, insight.DateTo:
			rv.Type = variable.Date
		default:
			rv.Required = materialized && !slices.Contains(e.OptionalBreakdowns, name)
		}
		out = append(out, rv)
	}
	slices.SortFunc(out, func(a, b RunVariable) int { return strings.Compare(a.CodeName, b.CodeName) })
	return out
}

// RunSchema describes how to run one version of an endpoint: what a
// client needs to call it (and package endpoint/openapi to describe it).
type RunSchema struct {
	Name        string
	Description string
	Kind        string
	Version     int
	IsCurrent   bool
	// Materialized tells that runs of this version may read the stored
	// table.
	Materialized bool
	Variables    []RunVariable
	// Columns and Types are the columns a SQL run answers, as the database
	// described the query when the version was saved; Kinds the JSON form
	// of each (ColumnKindOf). Empty for an insight endpoint.
	Columns, Types []string
	Kinds          []ColumnKind
	// DefaultLimit and MaxLimit bound the limit of a SQL run.
	DefaultLimit, MaxLimit int
}

// RunSchema describes version n (0: the current one) of the endpoint named
// name. A SQL version's columns are those it was saved with; a version
// saved before versions kept them is described now (run once with LIMIT 0
// and placeholder values, no row read) and keeps them from then on; a
// database failure is the run's 502.
func (s *Service) RunSchema(ctx context.Context, project, name string, n int) (RunSchema, error) {
	e, err := s.get(ctx, project, name)
	if err != nil {
		return RunSchema{}, err
	}
	if n == 0 {
		n = e.CurrentVersion
	}
	if _, err := s.version(ctx, &e, n); err != nil {
		return RunSchema{}, err
	}
	c, err := s.compiledAt(ctx, &e, n, s.now())
	if err != nil {
		return RunSchema{}, err
	}
	rs := RunSchema{
		Name: e.Name, Description: e.Description, Kind: c.query.Kind, Version: n,
		IsCurrent: n == e.CurrentVersion, Materialized: e.IsMaterialized && n == e.CurrentVersion,
		Variables: runVariables(&e, c, n), Columns: []string{}, Types: []string{},
		DefaultLimit: s.cfg.DefaultLimit, MaxLimit: s.cfg.MaxLimit,
	}
	if c.insight != nil {
		return rs, nil
	}
	if sh := s.versionShape(ctx, &e, c, n); sh != nil {
		rs.Columns, rs.Types, rs.Kinds = slices.Clone(sh.columns), slices.Clone(sh.types), slices.Clone(sh.kinds)
		return rs, nil
	}
	// Not described: run the description now, for its error.
	res, err := s.describe(ctx, &e, c)
	if err != nil {
		return RunSchema{}, err
	}
	sh := newShape(s.engine(), res.Columns, res.Types)
	rs.Columns, rs.Types, rs.Kinds = sh.columns, sh.types, sh.kinds
	return rs, nil
}

// sampleValue is a coerced value of v's type.
func sampleValue(v variable.Variable) any {
	switch v.Type {
	case variable.Number:
		// 1, not 0: an engine that folds constants (ClickHouse, and
		// PostgreSQL's custom plans) would divide by zero at the check of
		// a save (checkQuery) where a run's value does not.
		return int64(1)
	case variable.Boolean:
		return false
	case variable.Date:
		return variable.Timestamp{Time: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), DateOnly: true}
	case variable.List:
		first := ""
		if len(v.Values) > 0 {
			first = v.Values[0]
		}
		if v.IsMulti {
			return []string{first}
		}
		return first
	}
	return ""
}

// VariablePatch is the input of UpdateVariable; nil fields are left as they
// are. A DefaultValue pointing at nil clears the default.
type VariablePatch struct {
	Name         *string   `json:"name"`
	CodeName     *string   `json:"code_name"`
	Type         *string   `json:"type"`
	DefaultValue *any      `json:"default_value"`
	Values       *[]string `json:"values"`
	IsMulti      *bool     `json:"is_multi"`
}

// CreateVariable validates v, gives it an id when it has none, derives its
// code_name from its name when it has none, and stores it. A code_name (or
// id) the project already has is a 409.
func (s *Service) CreateVariable(ctx context.Context, project string, v variable.Variable) (variable.Variable, error) {
	if v.ID == "" {
		v.ID = uuid.NewString()
	}
	if err := v.Normalize(); err != nil {
		return variable.Variable{}, definitionError(err)
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.cfg.Variables.Create(ctx, project, v); err != nil {
		if errors.Is(err, variable.ErrConflict) {
			if _, gerr := s.cfg.Variables.Get(ctx, project, v.ID); gerr == nil {
				return variable.Variable{}, conflictf(CodeConflict, "id", "A variable with id %s already exists in this project.", v.ID)
			}
			return variable.Variable{}, codeNameTaken(v.CodeName)
		}
		return variable.Variable{}, variableStoreError(err, v.ID)
	}
	return v, nil
}

// GetVariable returns the variable with id.
func (s *Service) GetVariable(ctx context.Context, project, id string) (variable.Variable, error) {
	canon, ok := canonicalID(id)
	if !ok {
		return variable.Variable{}, variableNotFound(id)
	}
	v, err := s.cfg.Variables.Get(ctx, project, canon)
	if err != nil {
		return variable.Variable{}, variableStoreError(err, id)
	}
	return v, nil
}

// ListVariables returns the variables of project ordered by code_name;
// never nil.
func (s *Service) ListVariables(ctx context.Context, project string) ([]variable.Variable, error) {
	list, err := s.cfg.Variables.List(ctx, project)
	if err != nil {
		return nil, variableStoreError(err, "")
	}
	if list == nil {
		list = []variable.Variable{}
	}
	return list, nil
}

// UpdateVariable applies patch to the variable with id. The code_name and
// is_multi of a variable that an endpoint uses cannot change (409 naming
// the endpoint): the endpoint's query refers to it by code_name and was
// checked for list positions with its is_multi. Other changes, such as the
// type, apply to the next run of every endpoint that uses the variable.
func (s *Service) UpdateVariable(ctx context.Context, project, id string, patch VariablePatch) (variable.Variable, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	cur, err := s.GetVariable(ctx, project, id)
	if err != nil {
		return variable.Variable{}, err
	}
	next := patch.apply(cur)
	if err := next.Normalize(); err != nil {
		return variable.Variable{}, definitionError(err)
	}
	if err := s.checkVariableChange(ctx, project, cur, next); err != nil {
		return variable.Variable{}, err
	}
	if err := s.cfg.Variables.Update(ctx, project, next); err != nil {
		if errors.Is(err, variable.ErrConflict) {
			return variable.Variable{}, codeNameTaken(next.CodeName)
		}
		return variable.Variable{}, variableStoreError(err, id)
	}
	s.cache.purge(project, nil)
	return next, nil
}

// apply returns cur with the fields of p set; an empty code name is made
// from the name.
func (p VariablePatch) apply(cur variable.Variable) variable.Variable {
	next := cur
	next.Values = slices.Clone(cur.Values)
	setIf(&next.Name, p.Name)
	if p.CodeName != nil {
		next.CodeName = *p.CodeName
		if next.CodeName == "" {
			next.CodeName = variable.CodeNameFrom(next.Name)
		}
	}
	if p.Type != nil {
		next.Type = variable.Type(*p.Type)
	}
	setIf(&next.DefaultValue, p.DefaultValue)
	if p.Values != nil {
		next.Values = slices.Clone(*p.Values)
	}
	setIf(&next.IsMulti, p.IsMulti)
	return next
}

// checkVariableChange refuses a new code name or multiplicity for a
// variable that an endpoint uses: its queries name it that way.
func (s *Service) checkVariableChange(ctx context.Context, project string, cur, next variable.Variable) error {
	if next.CodeName == cur.CodeName && next.IsMulti == cur.IsMulti {
		return nil
	}
	users, err := s.endpointsUsing(ctx, project, cur.ID)
	if err != nil {
		return err
	}
	if len(users) > 0 {
		field := "code_name"
		if next.CodeName == cur.CodeName {
			field = "is_multi"
		}
		return conflictf(CodeVariableInUse, field, "Variable '%s' is used by endpoint '%s'; its %s cannot change.", cur.CodeName, users[0], field)
	}
	return nil
}

// DeleteVariable removes the variable with id; a variable that the current
// or any stored version of an endpoint uses is refused with ErrConflict,
// since every run of that version would fail.
func (s *Service) DeleteVariable(ctx context.Context, project, id string) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	v, err := s.GetVariable(ctx, project, id)
	if err != nil {
		return err
	}
	users, err := s.endpointsUsing(ctx, project, v.ID)
	if err != nil {
		return err
	}
	if len(users) > 0 {
		return conflictf(CodeVariableInUse, "", "Variable '%s' is used by endpoint '%s' and cannot be deleted.", v.CodeName, users[0])
	}
	if err := s.cfg.Variables.Delete(ctx, project, v.ID); err != nil {
		return variableStoreError(err, id)
	}
	s.cache.purge(project, nil)
	return nil
}

// endpointsUsing returns the names, sorted, of the endpoints of project
// whose current or any stored version refers to the variable with id. It
// reads every version: variable writes are rare and must be right. A
// soft-deleted endpoint counts, as it can be restored.
func (s *Service) endpointsUsing(ctx context.Context, project, id string) ([]string, error) {
	list, err := s.cfg.Endpoints.List(ctx, project)
	if err != nil {
		return nil, storeError(err, nil)
	}
	var names []string
	for _, e := range list {
		if usesVariable(e.Query, id) {
			names = append(names, usingName(&e))
			continue
		}
		versions, err := s.cfg.Endpoints.Versions(ctx, project, e.ID)
		if errors.Is(err, ErrNotFound) {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, storeError(err, nil)
		}
		for _, v := range versions {
			if usesVariable(v.Query, id) {
				names = append(names, usingName(&e))
				break
			}
		}
	}
	slices.Sort(names)
	return names, nil
}

func usesVariable(q driver.Query, id string) bool {
	_, ok := q.Variables[id]
	return ok
}

func canonicalID(id string) (string, bool) {
	u, err := uuid.Parse(id)
	if err != nil {
		return "", false
	}
	return u.String(), true
}

func codeNameTaken(codeName string) *Error {
	return conflictf(CodeConflict, "code_name", "A variable with code_name '%s' already exists in this project.", codeName)
}

func variableNotFound(id string) *Error {
	return notFoundf("Variable '%s' not found.", id)
}

// definitionError turns a rejected definition into a 400 on its field.
func definitionError(err error) error {
	var de *variable.DefinitionError
	if errors.As(err, &de) {
		return withCause(invalidf(CodeInvalidInput, de.Field, "Invalid %s: %s", de.Field, de.Message), err)
	}
	return withCause(invalidf(CodeInvalidInput, "", "Invalid variable: %s", err), err)
}

// variableStoreError maps an error of the variable store.
func variableStoreError(err error, id string) error {
	if errors.Is(err, variable.ErrNotFound) {
		return variableNotFound(id)
	}
	return storeError(err, nil)
}

// DefaultDataFreshness is the data_freshness_seconds of an endpoint that
// sets none: a day, as in PostHog.
const DefaultDataFreshness = 86400

// dataFreshnessValues are the values data_freshness_seconds may take, as in
// PostHog: 15 and 30 minutes, 1, 6, 12 and 24 hours, and a week. An array,
// so that no caller can change what validation reads.
var dataFreshnessValues = [...]int{900, 1800, 3600, 21600, 43200, 86400, 604800}

// DataFreshnessValues returns the values data_freshness_seconds may take,
// in increasing order, as in PostHog: 15 and 30 minutes, 1, 6, 12 and 24
// hours, and a week. The slice is the caller's own.
func DataFreshnessValues() []int {
	return slices.Clone(dataFreshnessValues[:])
}

// checkDataFreshness refuses a data_freshness_seconds that is not one of
// dataFreshnessValues, naming them.
func checkDataFreshness(n int) error {
	if slices.Contains(dataFreshnessValues[:], n) {
		return nil
	}
	allowed := make([]string, len(dataFreshnessValues))
	for i, v := range dataFreshnessValues {
		allowed[i] = strconv.Itoa(v)
	}
	return invalidf(CodeInvalidInput, "data_freshness_seconds",
		"Invalid data_freshness_seconds %d. Expected one of: %s.", n, strings.Join(allowed, ", "))
}
