package endpoint

import (
	"context"
	"errors"
	"strings"

	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/endpointkit/endpointkit/sql/scope"
	"github.com/endpointkit/endpointkit/variable"
)

// tenantVariable is the placeholder that tenant scoping binds to the
// project a query runs for (see access.Confine and sql/scope). A query
// may not use it, nor any name with its prefix: the Service alone binds
// it, over anything a client sends.
const tenantVariable = scope.TenantVariable

// reservedPrefix starts every placeholder name the Service binds itself.
const reservedPrefix = variable.ReservedPrefix

// CodeQueryNotAllowed is the Code of a query that reads what its project
// may not read (a table, a catalog, a function), or that the analyzer
// cannot vouch for. The Error names the table in Table when one is at
// fault.
const CodeQueryNotAllowed = "query_not_allowed"

// rules returns what the endpoints of project may read; nil without a
// Policy (every table but the library's own and the catalogs).
func (s *Service) rules(ctx context.Context, project string) (*access.Rules, error) {
	if s.cfg.Access == nil {
		return nil, nil
	}
	r, err := s.cfg.Access.Rules(ctx, project)
	if err != nil {
		return nil, withCause(NewError(ErrExecution, CodeExecutionFailed, "", "the access policy failed"), err)
	}
	return r, nil
}

// scopeOf returns the scope of project's statements: its rules, and the
// project its tenant columns are bound to. Every statement the Service
// executes is made through one (package sql/scope).
func (s *Service) scopeOf(ctx context.Context, project string) (*scope.Scope, error) {
	rules, err := s.rules(ctx, project)
	if err != nil {
		return nil, err
	}
	return scope.New(rules, project, s.cfg.Executor.Engine()), nil
}

// scopeError words a failure of scoping: a refusal of the rules (see
// accessError), or a query the rewrite left unreadable.
func scopeError(err error) *Error {
	var ae *access.Error
	if errors.As(err, &ae) || !isPlaceholderError(err) {
		return accessError(err)
	}
	return withCause(invalidf(CodeQueryNotAllowed, "query", "Query cannot be scoped: %s", placeholderError(err).Detail), err)
}

// isPlaceholderError reports whether err is package placeholder's.
func isPlaceholderError(err error) bool {
	var se *placeholder.SyntaxError
	var ve *placeholder.VariableError
	return errors.As(err, &se) || errors.As(err, &ve)
}

// accessError words a refusal of package access as a 400 naming what was
// refused and where (Line, Column); a fault of the host's rules is a 502.
// A query the analyzer cannot read is a syntax error (query_error); a
// table, catalog or function the project may not read, or a text engines
// read differently, is query_not_allowed. The words are the user's: no
// package prefix (access.Error's text has one, for Go callers).
func accessError(err error) *Error {
	var ae *access.Error
	if !errors.As(err, &ae) {
		return withCause(NewError(ErrExecution, CodeExecutionFailed, "", "the access policy is invalid"), err)
	}
	var e *Error
	switch ae.Reason {
	case access.ReasonUnsupported:
		e = invalidf(CodeQueryError, "query.query", "Syntax error at line %d, column %d: %s.", ae.Line, ae.Column, ae.Detail)
	case access.ReasonTable:
		e = invalidf(CodeQueryNotAllowed, "query.query", "Table '%s' at line %d, column %d does not exist or cannot be read by this project's endpoints.", ae.Table, ae.Line, ae.Column)
	default:
		e = invalidf(CodeQueryNotAllowed, "query.query", "Query not allowed at line %d, column %d: %s.", ae.Line, ae.Column, ae.Detail)
	}
	e.Table = ae.Table
	e.Line, e.Column = ae.Line, ae.Column
	return withCause(e, err)
}

// refusal is scopeError of err, a failure to scope a query of project,
// with the hint a refused table needs: the tables the project's endpoints
// can read, or those nearest to the name refused.
func (s *Service) refusal(ctx context.Context, project string, err error) *Error {
	e := scopeError(err)
	var ae *access.Error
	if !errors.As(err, &ae) || ae.Reason != access.ReasonTable {
		return e
	}
	tables := s.listedTables(ctx, project)
	if len(tables) == 0 {
		e.Detail += " This project's endpoints can read no table."
		return e
	}
	e.Detail += " " + upperFirst(suggest(lastPart(ae.Table), tables, "tables that can be read"))
	return e
}

// upperFirst is s with its first letter in upper case.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// checkReserved refuses a placeholder the Service binds itself.
func checkReserved(names []string) error {
	for _, n := range names {
		if strings.HasPrefix(n, reservedPrefix) {
			return invalidf(CodeInvalidInput, "query", "Variable name '%s' is reserved: names starting with %s are bound by the library.", cut(n), reservedPrefix)
		}
	}
	return nil
}
