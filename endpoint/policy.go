package endpoint

import (
	"context"
	"errors"
	"strings"

	"github.com/endpointkit/endpointkit/endpoint/access"
	"github.com/endpointkit/endpointkit/internal/scope"
	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/variable"
)

// tenantVariable is the placeholder that tenant scoping binds to the
// project a query runs for (see access.Scope and internal/scope). A query
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
// executes is made through one (package internal/scope).
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
// refused; a fault of the host's rules is a 502.
func accessError(err error) *Error {
	var ae *access.Error
	if !errors.As(err, &ae) {
		return withCause(NewError(ErrExecution, CodeExecutionFailed, "", "the access policy is invalid"), err)
	}
	e := invalidf(CodeQueryNotAllowed, "query", "Query not allowed: %s", ae.Error())
	e.Table = ae.Table
	return withCause(e, err)
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
