package sqlexec

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

// queryFault returns err as a *driver.QueryError when the engine's error
// code says the query itself is at fault, and err unchanged otherwise
// (nil included). Each driver's errors are recognised by what their errors
// expose, not by their types, so that this package links no driver:
// modernc.org/sqlite's Code() (the SQLite result code), the SQLSTATE()
// of pgx's *pgconn.PgError and lib/pq's *pq.Error, and go-sql-driver's
// "Error <number> (<SQLSTATE>): <message>".
func queryFault(err error) error {
	if err == nil {
		return nil
	}
	msg := sqliteFault(err)
	if msg == "" {
		msg = postgresFault(err)
	}
	if msg == "" {
		msg = mysqlFault(err)
	}
	if msg == "" {
		return err
	}
	return &driver.QueryError{Message: msg, Err: err}
}

// SQLite's primary result codes that name a fault of the statement:
// SQLITE_ERROR (syntax, no such column, table or function, misuse of an
// aggregate, malformed JSON), SQLITE_TOOBIG (the query built a string or
// blob over the length limit) and SQLITE_MISMATCH (a datatype mismatch).
const (
	sqliteError    = 1
	sqliteTooBig   = 18
	sqliteMismatch = 20
)

// sqliteSuffix is what modernc.org/sqlite appends to a message: the
// result code in parentheses.
var sqliteSuffix = regexp.MustCompile(` \(\d+\)( \(SQLITE_[A-Z]+\))?$`)

// sqliteFault returns the message of a SQLite error about the query, ""
// for any other error.
func sqliteFault(err error) string {
	var c interface{ Code() int }
	if !errors.As(err, &c) {
		return ""
	}
	switch c.Code() & 0xff {
	case sqliteError, sqliteTooBig, sqliteMismatch:
	default:
		return ""
	}
	msg := sqliteSuffix.ReplaceAllString(c.(error).Error(), "")
	// The generic text of SQLITE_ERROR that precedes the engine's own.
	return strings.TrimPrefix(msg, "SQL logic error: ")
}

// postgresFault returns the message of a PostgreSQL error of SQLSTATE
// class 42 (syntax error or access rule violation: an unknown column,
// table, function or operator) but 42501 (a privilege the database user
// lacks: the host's setup), 22 (data exception: a division by zero, a
// value out of range or not of its type) or 21 (cardinality: a scalar
// subquery of several rows); "" for any other error.
func postgresFault(err error) string {
	var pe interface {
		SQLState() string
		error
	}
	if !errors.As(err, &pe) {
		return ""
	}
	state := pe.SQLState()
	if !faultState(state) || state == "42501" {
		return ""
	}
	// pgx: "ERROR: <message> (SQLSTATE 42883)"; lib/pq: "pq: <message>".
	msg := strings.TrimSuffix(pe.Error(), " (SQLSTATE "+state+")")
	msg = strings.TrimPrefix(msg, "pq: ")
	for _, sev := range []string{"ERROR: ", "FATAL: ", "PANIC: "} {
		msg = strings.TrimPrefix(msg, sev)
	}
	return msg
}

// mysqlError is go-sql-driver/mysql's text of a server error.
var mysqlError = regexp.MustCompile(`^Error (\d+) \(([0-9A-Z]{5})\): (?s:(.*))$`)

// mysqlDenied are the MySQL errors of SQLSTATE class 42 that are about
// the database user's rights, not the query: the host's setup.
var mysqlDenied = map[int]bool{1044: true, 1045: true, 1142: true, 1143: true, 1227: true, 1370: true}

// mysqlFault returns the message of a MySQL or MariaDB error of SQLSTATE
// class 42 (syntax, unknown column, table or function) but the access
// denials, 22 (data exception) or 21 (cardinality); "" for any other
// error.
func mysqlFault(err error) string {
	for e := err; e != nil; e = errors.Unwrap(e) {
		m := mysqlError.FindStringSubmatch(e.Error())
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		if !faultState(m[2]) || mysqlDenied[n] {
			return ""
		}
		return m[3]
	}
	return ""
}

// faultState reports whether a SQLSTATE's class names a fault of the
// statement: 42 (syntax or access rule), 22 (data exception), 21
// (cardinality violation).
func faultState(state string) bool {
	return len(state) == 5 && (strings.HasPrefix(state, "42") || strings.HasPrefix(state, "22") || strings.HasPrefix(state, "21"))
}

// pgxEncode is pgx's error about an argument it cannot encode as the type
// PostgreSQL gave its bind marker: "failed to encode args[0]: unable to
// encode 3000000000 into binary format for int4 (OID 23): ...".
var pgxEncode = regexp.MustCompile(`failed to encode args\[(\d+)\]: (?:unable to encode .* for (\w+) \(OID \d+\))?`)

// argFault returns err as a *driver.ArgError when the driver could not
// encode one of args (pgx's "failed to encode args[i]"), and err unchanged
// otherwise. The error is matched by its text, so that this package links
// no driver.
func argFault(err error, nargs int) error {
	if err == nil {
		return nil
	}
	m := pgxEncode.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	i, convErr := strconv.Atoi(m[1])
	if convErr != nil || i >= nargs {
		return err
	}
	return &driver.ArgError{Index: i, Type: m[2], Err: err}
}

// sqliteInterrupt is SQLite's SQLITE_INTERRUPT result code.
const sqliteInterrupt = 9

// interruptFault returns err as an error of ctx, which ended, when err is
// SQLite's SQLITE_INTERRUPT: the Executor's interrupt (WithInterrupt) ended
// the run for its context, whichever of the run's statements it reached (a
// BEGIN, a PRAGMA, as well as the query), and the run is over for its time
// limit or its caller, not for a fault of the engine. err is unchanged
// otherwise.
func interruptFault(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	cerr := ctx.Err()
	if cerr == nil || errors.Is(err, cerr) {
		return err
	}
	var c interface{ Code() int }
	if !errors.As(err, &c) || c.Code()&0xff != sqliteInterrupt {
		return err
	}
	return fmt.Errorf("sqlexec: %w (%w)", cerr, err)
}
