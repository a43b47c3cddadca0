package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMigrateDeletedNames: version 9 gives the endpoints that version 8
// stored soft-deleted under "<name>/<id>" their own names back, on SQLite,
// PostgreSQL and MySQL; names are then unique among live rows only, the
// database's unique index holding the rule by itself.
func TestMigrateDeletedNames(t *testing.T) {
	type target struct {
		name    string
		dialect engine.Store
		open    func(t *testing.T) *sql.DB
	}
	targets := []target{{"sqlite", engine.SQLite, func(t *testing.T) *sql.DB {
		db := testdb.SQLite(t)
		return db
	}}}
	for _, e := range engines {
		targets = append(targets, target{e.name, e.dialect.(engine.Store), func(t *testing.T) *sql.DB {
			testdb.Require(t, e.env)
			return e.open(t)
		}})
	}
	for _, tc := range targets {
		t.Run(tc.name, func(t *testing.T) {
			db := tc.open(t)
			migrateTo(t, db, tc.dialect, 8) // the version before endpointStateMigration
			ctx := context.Background()
			s, err := New(db, tc.dialect)
			require.NoError(t, err)
			// Version 8's rows: live d, two d deleted, e deleted only, and a
			// live name with a slash-free id suffix left as it is.
			at := t0.Add(3600e9)
			row := func(id, name string, deleted bool) driver.Endpoint {
				e, v := endpointFixture("p", name)
				e.ID, v.EndpointID = id, id
				if deleted {
					e.DeletedAt = &at
				}
				r, err := endpointRow(e)
				require.NoError(t, err)
				_, err = db.Exec(s.q.epInsert, append([]any{"p"}, r...)...)
				require.NoError(t, err, "inserting %s", name)
				ver, err := versionRow("p", id, v)
				require.NoError(t, err)
				_, err = db.Exec(s.q.verInsert, ver...)
				require.NoError(t, err)
				e.Name = nameOf(name, id)
				return e
			}
			live := row("id-live", "d", false)
			a := row("id-a", "d/id-a", true)
			b := row("id-b", "d/id-b", true)
			c := row("id-c", "e/id-c", true)
			other := row("id-x", "x-id-x", false)

			require.NoError(t, s.Migrate(ctx), "Migrate")
			require.NoError(t, s.Migrate(ctx), "a second Migrate")
			got, want := schemaVersions(t, db), allVersions()
			assert.Equal(t, want, got, "schema versions")
			st := s.Endpoints()
			list, err := st.List(ctx, "p")
			require.NoError(t, err, "List")
			var names []string
			for _, e := range list {
				names = append(names, e.ID+"="+e.Name)
			}
			require.Equal(t, []string{"id-a=d", "id-b=d", "id-live=d", "id-c=e", "id-x=x-id-x"}, names, "List after the migration")
			for i, want := range []driver.Endpoint{a, b, live, c, other} {
				assert.Equal(t, want, list[i], "List[%d]", i)
			}
			if got, err := st.Get(ctx, "p", "d"); err != nil || got.ID != live.ID {
				t.Errorf("Get(d) = %s, %v; want the live one", got.ID, err)
			}
			if _, err := st.Get(ctx, "p", "e"); !errors.Is(err, driver.ErrNotFound) {
				t.Errorf("Get(e) of a deleted endpoint: %v, want ErrNotFound", err)
			}

			// The unique index alone: a second live d is refused, a third
			// deleted d is not.
			dup := func(id string, deleted bool) error {
				e, _ := endpointFixture("p", "d")
				e.ID = id
				if deleted {
					e.DeletedAt = &at
				}
				r, err := endpointRow(e)
				require.NoError(t, err)
				_, err = db.Exec(s.q.epInsert, append([]any{"p"}, r...)...)
				return err
			}
			if err := dup("id-dup", false); !isUniqueViolation(err) {
				t.Errorf("a second live row named d: %v, want a unique key violation", err)
			}
			assert.NoError(t, dup("id-dup", true), "a third deleted row named d")

			// Restore: a conflict while d lives, done once it is gone.
			back := a
			back.DeletedAt = nil
			assert.ErrorIs(t, st.Update(ctx, back, nil), driver.ErrConflict, "restore over the live d")
			require.NoError(t, st.Delete(ctx, "p", live.ID))
			require.NoError(t, st.Update(ctx, back, nil), "restore of a free d")
			if got, err := st.Get(ctx, "p", "d"); err != nil || got.ID != a.ID {
				t.Errorf("Get(d) after the restore = %s, %v; want %s", got.ID, err, a.ID)
			}
		})
	}
}

// nameOf is the name a row of version 8 stored as name has after
// version 9: without the "/<id>" of a deleted one.
func nameOf(name, id string) string {
	if n := len(name) - len(id) - 1; n > 0 && name[n:] == "/"+id {
		return name[:n]
	}
	return name
}
