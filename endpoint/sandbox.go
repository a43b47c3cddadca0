package endpoint

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/access"
	"github.com/endpointkit/endpointkit/insight"
	"github.com/endpointkit/endpointkit/materialize"
	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/variable"
)

// TenantVariable is the placeholder that tenant scoping binds to the
// project a query runs for (see access.Scope). A query may not use it, nor
// any name with its prefix: the Service alone binds it, over anything a
// client sends.
const TenantVariable = "__endpointkit_tenant"

// reservedPrefix starts every placeholder name the Service binds itself.
const reservedPrefix = "__endpointkit"

// CodeQueryNotAllowed is the Code of a query that reads what its project
// may not read (a table, a catalog, a function), or that the analyzer
// cannot vouch for. The Error names the table in Table when one is at
// fault.
const CodeQueryNotAllowed = "query_not_allowed"

// anyTable is the rules of a Service without a Policy: every table but the
// library's own and the engines' catalogs.
var anyTable = &access.Rules{AnyTable: true}

// rules returns what the endpoints of project may read.
func (s *Service) rules(ctx context.Context, project string) (*access.Rules, error) {
	if s.cfg.Access == nil {
		return anyTable, nil
	}
	r, err := s.cfg.Access.Rules(ctx, project)
	if err != nil {
		return nil, withCause(NewError(ErrExecution, CodeExecutionFailed, "", "the access policy failed"), err)
	}
	return r, nil
}

// scope checks sql against the rules of project and returns it rewritten
// so that it reads only what they allow, with TenantVariable standing for
// the project where a table has a tenant column.
func (s *Service) scope(ctx context.Context, project, sql string) (string, error) {
	rules, err := s.rules(ctx, project)
	if err != nil {
		return "", err
	}
	scoped, err := access.ScopeFor(s.cfg.Executor.Engine().Lexical(), sql, rules, TenantVariable)
	if err != nil {
		return "", accessError(err)
	}
	return scoped, nil
}

// accessError words a refusal of package access as a 400 naming what was
// refused; a fault of the host's rules is a 502.
func accessError(err error) error {
	var ae *access.Error
	if !errors.As(err, &ae) {
		return withCause(NewError(ErrExecution, CodeExecutionFailed, "", "the access policy is invalid"), err)
	}
	e := invalidf(CodeQueryNotAllowed, "query", "Query not allowed: %s", ae.Error())
	e.Table = ae.Table
	return withCause(e, err)
}

// insightTenant checks that project may read the events table that insight
// queries read, and returns the tenant filter its rules put on it.
func (s *Service) insightTenant(ctx context.Context, project string) (*insight.Tenant, error) {
	rules, err := s.rules(ctx, project)
	if err != nil {
		return nil, err
	}
	if err := access.Check("SELECT * FROM "+insight.EventsTable, rules); err != nil {
		return nil, accessError(err)
	}
	for _, t := range rules.Tables {
		if strings.EqualFold(t.Name, insight.EventsTable) && t.TenantColumn != "" {
			return &insight.Tenant{Column: t.TenantColumn, Value: project}, nil
		}
	}
	return nil, nil
}

// precomputeSource returns a pre-compute query rendered for a refresh at
// at: scoped to project when scoped, with the tenant bound, and with a live
// tail's build instant bound to at.
func (s *Service) precomputeSource(ctx context.Context, project string, scoped bool, sql string, at time.Time) (string, []any, error) {
	if scoped {
		var err error
		if sql, err = s.scope(ctx, project, sql); err != nil {
			return "", nil, err
		}
	}
	tmpl, err := placeholder.CompileFor(s.cfg.Executor.Engine().Lexical(), sql)
	if err != nil {
		return "", nil, err
	}
	return tmpl.Render(s.cfg.Executor.Engine(), map[string]any{TenantVariable: project,
		materialize.BuiltAtVariable: variable.Timestamp{Time: at}})
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
