package endpoint

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

// recordColumns sets the columns and types of v, a SQL version about to
// be saved, to res, the engine's description of c made by the check at
// save (checkQuery, a run with LIMIT 0 that reads no row), and keeps them
// with c for its runs. A nil res (an insight, or a check that the engine
// failed on a value) leaves them unset: the version is described again at
// its first run (see versionShape).
func (s *Service) recordColumns(c *compiled, v *driver.Version, res *driver.Result) {
	if c == nil || c.insight != nil || res == nil {
		return
	}
	v.Columns, v.Types = nonNil(res.Columns), s.describedTypes(c, nonNil(res.Types))
	c.shape.p.Store(newShape(s.engine(), v.Columns, v.Types))
}

// ColumnsChangedError is a refresh refused because the engine now
// describes the query of the endpoint's version with other columns, or
// other types, than the version was saved with (a table or view it reads
// was changed since): the stored table would answer in another shape
// than the version's inline runs. The refresh fails, the last good table
// stays, and the endpoint's materialization state says why; saving the
// endpoint again makes a version of the new shape.
type ColumnsChangedError struct {
	// Version is the endpoint's version.
	Version int
	// SavedColumns and SavedTypes are the version's, as saved; Columns and
	// Types the engine's description of its query now.
	SavedColumns, SavedTypes, Columns, Types []string
}

// Error names the first column that differs.
func (e *ColumnsChangedError) Error() string {
	col := func(cols, types []string, i int) string {
		if types[i] == "" {
			return cols[i]
		}
		return cols[i] + " " + types[i]
	}
	if len(e.Columns) != len(e.SavedColumns) {
		return fmt.Sprintf("the query now answers %d columns (%s) where version %d was saved with %d (%s); save the endpoint again to keep the new columns",
			len(e.Columns), strings.Join(e.Columns, ", "), e.Version, len(e.SavedColumns), strings.Join(e.SavedColumns, ", "))
	}
	for i := range e.Columns {
		if e.Columns[i] != e.SavedColumns[i] || e.Types[i] != e.SavedTypes[i] {
			return fmt.Sprintf("column %d of the query is now %s where version %d was saved with %s; save the endpoint again to keep the new columns",
				i+1, col(e.Columns, e.Types, i), e.Version, col(e.SavedColumns, e.SavedTypes, i))
		}
	}
	return fmt.Sprintf("the columns of version %d changed", e.Version)
}

// checkColumns describes the query of e's current version, compiled as c,
// again, as a refresh starts, and refuses (ColumnsChangedError) a
// description whose columns differ from the version's in number or name,
// or whose types differ where both name one (SQLite names none for an
// expression). An insight, or a query the engine cannot describe, is left
// to the build, which says why it fails.
func (s *Service) checkColumns(ctx context.Context, e *driver.Endpoint, c *compiled) error {
	if c.insight != nil {
		return nil
	}
	sh := s.versionShape(ctx, e, c, e.CurrentVersion)
	if sh == nil {
		return nil
	}
	res, err := s.describe(ctx, e, c)
	if err != nil {
		return nil
	}
	cols, types := nonNil(res.Columns), nonNil(res.Types)
	if len(types) != len(cols) {
		types = make([]string, len(cols))
	}
	changed := len(cols) != len(sh.columns)
	for i := 0; !changed && i < len(cols); i++ {
		changed = cols[i] != sh.columns[i] || types[i] != "" && sh.types[i] != "" && types[i] != sh.types[i]
	}
	if !changed {
		return nil
	}
	return &ColumnsChangedError{Version: e.CurrentVersion, SavedColumns: slices.Clone(sh.columns), SavedTypes: slices.Clone(sh.types),
		Columns: cols, Types: types}
}
