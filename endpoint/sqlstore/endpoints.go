package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

// endpoints is the driver.Store view of a Store.
type endpoints Store

var _ driver.Store = (*endpoints)(nil)

// Create implements driver.Store. The endpoint and its first version are
// written in one transaction. first is stored as a version of e, whatever
// its EndpointID says.
func (s *endpoints) Create(ctx context.Context, e driver.Endpoint, first driver.Version) error {
	row, err := endpointRow(e)
	if err != nil {
		return err
	}
	ver, err := versionRow(e.ProjectID, e.ID, first)
	if err != nil {
		return err
	}
	err = (*Store)(s).inTx(ctx, func(tx *sql.Tx) error {
		if found, err := exists(ctx, tx, s.q.epExists, e.ProjectID, e.ID); err != nil || found {
			return orConflict(err, "endpoint id %q already exists in project %q", e.ID, e.ProjectID)
		}
		if err := s.checkName(ctx, tx, e); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, s.q.epInsert, append([]any{e.ProjectID}, row...)...); err != nil {
			return fmt.Errorf("sqlstore: creating endpoint %q: %w", e.Name, err)
		}
		if _, err := tx.ExecContext(ctx, s.q.verInsert, ver...); err != nil {
			return fmt.Errorf("sqlstore: creating version %d of endpoint %q: %w", first.Number, e.Name, err)
		}
		return nil
	})
	return endpointConflict(err, e)
}

// Update implements driver.Store. The endpoint and next, if any, are
// written in one transaction: when next cannot be written, e is not either.
// LastExecutedAt is written too, as given.
func (s *endpoints) Update(ctx context.Context, e driver.Endpoint, next *driver.Version) error {
	row, err := endpointRow(e)
	if err != nil {
		return err
	}
	var ver []any
	if next != nil {
		if ver, err = versionRow(e.ProjectID, e.ID, *next); err != nil {
			return err
		}
	}
	err = (*Store)(s).inTx(ctx, func(tx *sql.Tx) error {
		// The row is locked (FOR UPDATE on PostgreSQL and MySQL; SQLite's
		// write lock is already held) so that the version compared is still
		// the stored one at the commit.
		var stored int64
		err := tx.QueryRowContext(ctx, s.q.epCurrentVersion, e.ProjectID, e.ID).Scan(&stored)
		if errors.Is(err, sql.ErrNoRows) {
			return endpointNotFound(e.ProjectID, e.ID)
		}
		if err != nil {
			return fmt.Errorf("sqlstore: reading endpoint %q: %w", e.ID, err)
		}
		if err := compareVersion(e, next, int(stored)); err != nil {
			return err
		}
		if err := s.checkName(ctx, tx, e); err != nil {
			return err
		}
		if next != nil {
			if found, err := exists(ctx, tx, s.q.verExists, e.ProjectID, e.ID, next.Number); err != nil || found {
				return orConflict(err, "version %d of endpoint %q already exists", next.Number, e.Name)
			}
		}
		// row[0] is the id; the state, last, is SetMaterialization's.
		args := append(row[1:len(row)-1:len(row)-1], e.ProjectID, e.ID)
		if _, err := tx.ExecContext(ctx, s.q.epUpdate, args...); err != nil {
			return fmt.Errorf("sqlstore: updating endpoint %q: %w", e.Name, err)
		}
		if next != nil {
			if _, err := tx.ExecContext(ctx, s.q.verInsert, ver...); err != nil {
				return fmt.Errorf("sqlstore: creating version %d of endpoint %q: %w", next.Number, e.Name, err)
			}
		}
		return nil
	})
	return endpointConflict(err, e)
}

// compareVersion is Update's compare-and-swap: without next, e must carry
// the stored version; with next, next must be the one after it.
func compareVersion(e driver.Endpoint, next *driver.Version, stored int) error {
	if next == nil && e.CurrentVersion != stored {
		return fmt.Errorf("%w: endpoint %q is at version %d, the update was made from version %d",
			driver.ErrConflict, e.Name, stored, e.CurrentVersion)
	}
	if next != nil && next.Number != stored+1 {
		return fmt.Errorf("%w: endpoint %q is at version %d, the next version must be %d, not %d",
			driver.ErrConflict, e.Name, stored, stored+1, next.Number)
	}
	return nil
}

// MarkExecuted implements driver.Store. It is one statement, so a run
// takes no lock beyond the row it writes and never touches the other
// columns; the time only moves forward, so runs that finish out of order
// leave the latest.
func (s *endpoints) MarkExecuted(ctx context.Context, project, id string, at time.Time) error {
	when, err := formatTime(at)
	if err != nil {
		return fmt.Errorf("sqlstore: recording a run of endpoint %q: %w", id, err)
	}
	res, err := (*Store)(s).exec(ctx, s.q.epMarkExecuted, when, project, id, when)
	if err != nil {
		return fmt.Errorf("sqlstore: recording a run of endpoint %q: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("sqlstore: recording a run of endpoint %q: %w", id, err)
	}
	if n > 0 {
		return nil
	}
	// Nothing written: the endpoint is unknown or already has a later run.
	var one int
	err = (*Store)(s).queryRow(ctx, s.q.epExists, project, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return endpointNotFound(project, id)
	}
	if err != nil {
		return fmt.Errorf("sqlstore: recording a run of endpoint %q: %w", id, err)
	}
	return nil
}

// SetMaterialization implements driver.Store: one statement that writes
// the state column only.
func (s *endpoints) SetMaterialization(ctx context.Context, project, id string, st driver.MaterializationState) error {
	state, err := marshalState(st)
	if err != nil {
		return fmt.Errorf("sqlstore: endpoint %q: %w", id, err)
	}
	res, err := (*Store)(s).exec(ctx, s.q.epSetMaterialization, state, project, id)
	if err != nil {
		return fmt.Errorf("sqlstore: recording the materialization of endpoint %q: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("sqlstore: recording the materialization of endpoint %q: %w", id, err)
	}
	if n == 0 {
		// MySQL counts changed rows only; an unchanged state is no error.
		var one int
		err = (*Store)(s).queryRow(ctx, s.q.epExists, project, id).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return endpointNotFound(project, id)
		}
		if err != nil {
			return fmt.Errorf("sqlstore: recording the materialization of endpoint %q: %w", id, err)
		}
	}
	return nil
}

// ListMaterialized implements driver.Store.
func (s *endpoints) ListMaterialized(ctx context.Context) ([]driver.Endpoint, error) {
	rows, err := (*Store)(s).query(ctx, s.q.epListMaterialized)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: listing materialized endpoints: %w", err)
	}
	defer rows.Close()
	out := []driver.Endpoint{}
	for rows.Next() {
		var project string
		e, err := scanEndpoint(rows, &project)
		if err != nil {
			return nil, fmt.Errorf("sqlstore: listing materialized endpoints: %w", err)
		}
		e.ProjectID = project
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlstore: listing materialized endpoints: %w", err)
	}
	return out, nil
}

// checkName returns ErrConflict when e lives and another live endpoint
// of e's project is named e.Name: soft-deleted endpoints keep their names,
// which any number of them may share with each other and with one live
// endpoint (the unique index liveNameIndex holds the same rule).
func (s *endpoints) checkName(ctx context.Context, tx *sql.Tx, e driver.Endpoint) error {
	if e.DeletedAt != nil {
		return nil
	}
	found, err := exists(ctx, tx, s.q.epNameUse, e.ProjectID, e.Name, e.ID)
	if err != nil || found {
		return orConflict(err, "an endpoint named %q already exists in project %q", e.Name, e.ProjectID)
	}
	return nil
}

// Get implements driver.Store: the live endpoint named name.
func (s *endpoints) Get(ctx context.Context, project, name string) (driver.Endpoint, error) {
	e, err := scanEndpoint((*Store)(s).queryRow(ctx, s.q.epGet, project, name))
	if errors.Is(err, sql.ErrNoRows) {
		return driver.Endpoint{}, fmt.Errorf("%w: no live endpoint named %q in project %q", driver.ErrNotFound, name, project)
	}
	if err != nil {
		return driver.Endpoint{}, fmt.Errorf("sqlstore: reading endpoint %q: %w", name, err)
	}
	e.ProjectID = project
	return e, nil
}

// List implements driver.Store.
func (s *endpoints) List(ctx context.Context, project string) ([]driver.Endpoint, error) {
	rows, err := (*Store)(s).query(ctx, s.q.epList, project)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: listing endpoints: %w", err)
	}
	defer rows.Close()
	out := []driver.Endpoint{}
	for rows.Next() {
		e, err := scanEndpoint(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlstore: listing endpoints: %w", err)
		}
		e.ProjectID = project
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlstore: listing endpoints: %w", err)
	}
	return out, nil
}

// Delete implements driver.Store.
func (s *endpoints) Delete(ctx context.Context, project, id string) error {
	return (*Store)(s).inTx(ctx, func(tx *sql.Tx) error {
		// The endpoint row goes first: deleting it waits for an Update that
		// holds it, so the versions deleted next include one that Update
		// added (a later statement sees it at READ COMMITTED).
		res, err := tx.ExecContext(ctx, s.q.epDelete, project, id)
		if err != nil {
			return fmt.Errorf("sqlstore: deleting endpoint %q: %w", id, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("sqlstore: deleting endpoint %q: %w", id, err)
		}
		if n == 0 {
			return endpointNotFound(project, id)
		}
		if _, err := tx.ExecContext(ctx, s.q.epDeleteVersions, project, id); err != nil {
			return fmt.Errorf("sqlstore: deleting versions of endpoint %q: %w", id, err)
		}
		return nil
	})
}

// Version implements driver.Store.
func (s *endpoints) Version(ctx context.Context, project, id string, n int) (driver.Version, error) {
	v, err := scanVersion((*Store)(s).queryRow(ctx, s.q.verGet, project, id, n))
	if errors.Is(err, sql.ErrNoRows) {
		return driver.Version{}, fmt.Errorf("%w: no version %d of endpoint %q in project %q", driver.ErrNotFound, n, id, project)
	}
	if err != nil {
		return driver.Version{}, fmt.Errorf("sqlstore: reading version %d of endpoint %q: %w", n, id, err)
	}
	return v, nil
}

// SetVersionColumns implements driver.Store: one statement, which writes
// the version's columns_json only.
func (s *endpoints) SetVersionColumns(ctx context.Context, project, id string, n int, columns, types []string) error {
	cols, err := marshalColumns(columns, types)
	if err != nil {
		return fmt.Errorf("sqlstore: version %d of endpoint %q: %w", n, id, err)
	}
	err = (*Store)(s).inTx(ctx, func(tx *sql.Tx) error {
		// Checked first: MySQL counts only the rows an UPDATE changed, so
		// a version whose columns were already these would seem missing.
		if found, err := exists(ctx, tx, s.q.verExists, project, id, n); err != nil || !found {
			if err == nil {
				err = fmt.Errorf("%w: no version %d of endpoint %q in project %q", driver.ErrNotFound, n, id, project)
			}
			return err
		}
		_, err := tx.ExecContext(ctx, s.q.verSetColumns, cols, project, id, n)
		return err
	})
	if err != nil && !errors.Is(err, driver.ErrNotFound) {
		return fmt.Errorf("sqlstore: writing the columns of version %d of endpoint %q: %w", n, id, err)
	}
	return err
}

// Versions implements driver.Store. An unknown endpoint is ErrNotFound;
// a known one always has at least its first version.
func (s *endpoints) Versions(ctx context.Context, project, id string) ([]driver.Version, error) {
	rows, err := (*Store)(s).query(ctx, s.q.verList, project, id)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: listing versions of endpoint %q: %w", id, err)
	}
	defer rows.Close()
	var out []driver.Version
	for rows.Next() {
		v, err := scanVersion(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlstore: listing versions of endpoint %q: %w", id, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlstore: listing versions of endpoint %q: %w", id, err)
	}
	if len(out) == 0 {
		return nil, endpointNotFound(project, id)
	}
	return out, nil
}

func endpointNotFound(project, id string) error {
	return fmt.Errorf("%w: no endpoint with id %q in project %q", driver.ErrNotFound, id, project)
}

// orConflict returns err when it is not nil, and an ErrConflict with the
// message otherwise; it serves checks whose "found" means a conflict.
func orConflict(err error, format string, args ...any) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("%w: "+format, append([]any{driver.ErrConflict}, args...)...)
}

// endpointConflict turns a driver's unique-key error into ErrConflict.
func endpointConflict(err error, e driver.Endpoint) error {
	if err == nil || errors.Is(err, driver.ErrConflict) || !isUniqueViolation(err) {
		return err
	}
	return fmt.Errorf("%w: endpoint %q in project %q: %w", driver.ErrConflict, e.Name, e.ProjectID, err)
}
