package endpoint

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

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

// expired reports whether the soft-deleted e is past its retention at now.
func (s *Service) expired(e *driver.Endpoint, now time.Time) bool {
	return e.DeletedAt != nil && !now.Before(e.DeletedAt.Add(s.cfg.DeletedRetention))
}

// live drops the soft-deleted endpoints of list, in place, and deletes
// for good those past their retention (best effort: one that fails is
// tried again at the next listing, and is logged). Every listing of
// endpoints goes through it, so that deleted ones are invisible.
func (s *Service) live(ctx context.Context, list []driver.Endpoint) []driver.Endpoint {
	now := s.now()
	out := list[:0]
	for _, e := range list {
		switch {
		case e.DeletedAt == nil:
			out = append(out, e)
		case s.expired(&e, now):
			s.purgeDeleted(ctx, e)
		}
	}
	return out
}

// purgeDeleted deletes the soft-deleted e for good: its record, versions,
// run log and stored tables.
func (s *Service) purgeDeleted(ctx context.Context, e driver.Endpoint) {
	ctx = context.WithoutCancel(ctx)
	err := s.cfg.Endpoints.Delete(ctx, e.ProjectID, e.ID)
	if err != nil && !errors.Is(err, ErrNotFound) {
		s.cfg.Observer.ObserveRefresh(ctx, RefreshEvent{Project: e.ProjectID, Endpoint: nameBeforeDelete(&e), Trigger: "purge", Rows: -1, Err: err})
		return
	}
	s.executed.forget(e.ID)
	_ = s.runLog.DeleteEndpoint(ctx, e.ProjectID, e.ID)
	s.dropTables(ctx, &e)
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
