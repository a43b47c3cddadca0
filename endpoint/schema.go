package endpoint

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/endpointkit/endpointkit/sql/scope"
)

// SchemaTable is one table a project's queries may read, as Schema
// describes it.
type SchemaTable struct {
	// Name is the table's name as the access policy spells it.
	Name string `json:"name"`
	// Columns are the columns a query of the project sees, in the
	// engine's order: those the policy allows (its tenant column
	// included, filtered to the project's rows).
	Columns []SchemaColumn `json:"columns"`
	// Error says why the table could not be described (it does not exist
	// on the database, or the database failed); "" otherwise.
	Error string `json:"error,omitempty"`
}

// SchemaColumn is a column of a SchemaTable.
type SchemaColumn struct {
	// Name is the column's name.
	Name string `json:"name"`
	// Type is the engine's type name of the column, as a run's types
	// report it ("TEXT", "text", "String", ...); "" when the engine does
	// not tell it for a result without rows.
	Type string `json:"type"`
}

// Schema lists the tables the access policy (Config.Access) lets project's
// queries read, sorted by name, with their columns and engine types, so
// that the author of a query sees what there is to read. Each table is
// described by a statement that reads no row (SELECT * FROM t LIMIT 0),
// scoped like any run: the columns are exactly those a query sees. A
// table the database cannot read is listed with its Error. Without a
// Policy, or for the tables a policy's AnyTable allows without listing
// them, nothing is listed: the Service reads no catalog.
func (s *Service) Schema(ctx context.Context, project string) ([]SchemaTable, error) {
	rules, err := s.rules(ctx, project)
	if err != nil {
		return nil, err
	}
	out := []SchemaTable{}
	if rules == nil {
		return out, nil
	}
	sc := scope.New(rules, project, s.cfg.Executor.Engine())
	for _, t := range rules.Tables {
		out = append(out, SchemaTable{Name: t.Name, Columns: []SchemaColumn{}})
	}
	slices.SortFunc(out, func(a, b SchemaTable) int { return strings.Compare(a.Name, b.Name) })
	for i := range out {
		st, err := sc.Describe(out[i].Name)
		if err != nil {
			return nil, scopeError(err)
		}
		res, err := s.executeCapped(ctx, st, 0)
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			out[i].Error = "the table could not be read"
			var e *Error
			if errors.As(err, &e) && e.Code == CodeQueryError {
				out[i].Error = e.Detail
			}
			continue
		}
		for j, name := range res.Columns {
			col := SchemaColumn{Name: name}
			if j < len(res.Types) {
				col.Type = res.Types[j]
			}
			out[i].Columns = append(out[i].Columns, col)
		}
	}
	return out, nil
}
