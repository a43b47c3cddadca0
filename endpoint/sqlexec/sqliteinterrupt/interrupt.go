// Package sqliteinterrupt stops a query of modernc.org/sqlite from another
// goroutine, for sqlexec.WithInterrupt.
//
// modernc.org/sqlite interrupts a query whose context ends only while the
// query starts (up to its first row). A query whose work comes after its
// first row, such as
//
//	WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r)
//	SELECT n FROM r WHERE n = 1 OR n < 0
//
// then runs past its deadline for as long as it runs: database/sql cannot
// close rows while a row is being read, and the driver exports no way to
// interrupt its connection. For interrupts a connection of the driver as
// the driver itself does when a query's context ends while it starts: under
// the connection's lock, which its Close takes too, with a TLS of its own
// (sqlite3_interrupt may be called from any thread).
//
// It reads the connection's handle from the driver's unexported fields
// (db, tls), which TestInterruptsAFollowingRow checks against the driver
// version in go.mod: a driver that renamed them makes For return
// ErrNotModernc, and a run fail with it, rather than run without the
// interrupt.
package sqliteinterrupt

import (
	"errors"
	"fmt"
	"reflect"
	"sync"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// ErrNotModernc is the error of For given a connection that is not one of
// modernc.org/sqlite's, or one whose fields it does not know.
var ErrNotModernc = errors.New("sqliteinterrupt: not a connection of modernc.org/sqlite")

// locker is the lock modernc.org/sqlite's connection embeds (a
// sync.Mutex): its Close and its own interrupt take it.
type locker interface {
	Lock()
	Unlock()
}

// fieldsOf returns the indexes of the db and tls fields of t, the driver's
// connection type (a struct).
func fieldsOf(t reflect.Type) (db, tls int, ok bool) {
	fd, ok1 := t.FieldByName("db")
	ft, ok2 := t.FieldByName("tls")
	if !ok1 || !ok2 || len(fd.Index) != 1 || len(ft.Index) != 1 ||
		fd.Type.Kind() != reflect.Uintptr || ft.Type != reflect.TypeOf((*libc.TLS)(nil)) {
		return 0, 0, false
	}
	return fd.Index[0], ft.Index[0], true
}

// known caches fieldsOf for the connection type it was asked of.
var known sync.Map // reflect.Type -> [2]int

// For returns a function that interrupts the statement running on
// driverConn, a connection of modernc.org/sqlite's driver (as
// sql.Conn.Raw gives it): the step in progress, and any started before
// the connection's running statements end, return SQLITE_INTERRUPT. It is
// safe to call from any goroutine, and is a no-op on a closed connection
// or one that runs nothing (SQLite then ignores it).
func For(driverConn any) (interrupt func(), err error) {
	c, lock, idx, err := connOf(driverConn)
	if err != nil {
		return nil, err
	}
	return func() {
		lock.Lock()
		defer lock.Unlock()
		db := uintptr(c.Field(idx[0]).Uint())
		if db == 0 || c.Field(idx[1]).IsNil() {
			return // closed
		}
		tls := libc.NewTLS()
		sqlite3.Xsqlite3_interrupt(tls, db)
		tls.Close()
	}, nil
}

// connOf returns the value of driverConn, a connection of modernc.org/sqlite
// (as sql.Conn.Raw gives it), its lock and the indexes of its db handle
// and TLS fields.
func connOf(driverConn any) (c reflect.Value, lock locker, idx [2]int, err error) {
	v := reflect.ValueOf(driverConn)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return c, nil, idx, fmt.Errorf("%w: %T", ErrNotModernc, driverConn)
	}
	t := v.Elem().Type()
	lock, ok := driverConn.(locker)
	if !ok || t.PkgPath() != "modernc.org/sqlite" || t.Name() != "conn" {
		return c, nil, idx, fmt.Errorf("%w: %T", ErrNotModernc, driverConn)
	}
	if f, ok := known.Load(t); ok {
		return v.Elem(), lock, f.([2]int), nil
	}
	db, tls, ok := fieldsOf(t)
	if !ok {
		return c, nil, idx, fmt.Errorf("%w: %T has no db handle and tls this package knows", ErrNotModernc, driverConn)
	}
	idx = [2]int{db, tls}
	known.Store(t, idx)
	return v.Elem(), lock, idx, nil
}

// Limit sets limit id (sqlite3_limit: 0 is SQLITE_LIMIT_LENGTH) of
// driverConn, a connection of modernc.org/sqlite's driver (as sql.Conn.Raw
// gives it), to newVal and returns its previous value: modernc.org/sqlite's
// own Limit on the driver's connection rather than on a *sql.Conn, for
// sqlexec.WithSQLiteConnLimits, which sets the limit once on each
// connection, under its lock, so that a run need not hold a connection of
// its own to have it. It lives here because it reads the same handle as
// For, with the same check (ErrNotModernc).
func Limit(driverConn any, id, newVal int) (int, error) {
	c, lock, idx, err := connOf(driverConn)
	if err != nil {
		return 0, err
	}
	lock.Lock()
	defer lock.Unlock()
	db := uintptr(c.Field(idx[0]).Uint())
	if db == 0 || c.Field(idx[1]).IsNil() {
		return 0, fmt.Errorf("sqliteinterrupt: setting limit %d: the connection is closed", id)
	}
	tls := libc.NewTLS()
	defer tls.Close()
	return int(sqlite3.Xsqlite3_limit(tls, db, int32(id), int32(newVal))), nil
}
