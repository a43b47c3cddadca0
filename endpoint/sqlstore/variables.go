package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/endpointkit/endpointkit/variable"
)

// variables is the variable.Store view of a Store.
type variables Store

var _ variable.Store = (*variables)(nil)

// Create implements variable.Store.
func (s *variables) Create(ctx context.Context, project string, v variable.Variable) error {
	row, err := variableRow(v)
	if err != nil {
		return err
	}
	err = (*Store)(s).inTx(ctx, func(tx *sql.Tx) error {
		found, err := exists(ctx, tx, s.q.varExists, project, v.ID)
		if err != nil {
			return err
		}
		if found {
			return fmt.Errorf("%w: id %q already exists in project %q", variable.ErrConflict, v.ID, project)
		}
		if err := s.checkCodeName(ctx, tx, project, v); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, s.q.varInsert, append([]any{project}, row...)...); err != nil {
			return fmt.Errorf("sqlstore: creating variable %q: %w", v.ID, err)
		}
		return nil
	})
	return variableConflict(err, project, v)
}

// Update implements variable.Store.
func (s *variables) Update(ctx context.Context, project string, v variable.Variable) error {
	row, err := variableRow(v)
	if err != nil {
		return err
	}
	err = (*Store)(s).inTx(ctx, func(tx *sql.Tx) error {
		// Checked rather than read from the UPDATE's count, which on
		// MySQL leaves out rows that did not change; the row stays locked
		// so that a concurrent Delete cannot slip in before the UPDATE.
		found, err := exists(ctx, tx, s.q.varLock, project, v.ID)
		if err != nil {
			return err
		}
		if !found {
			return variableNotFound(project, v.ID)
		}
		if err := s.checkCodeName(ctx, tx, project, v); err != nil {
			return err
		}
		args := append(row[1:], project, v.ID) // row[0] is the id
		if _, err := tx.ExecContext(ctx, s.q.varUpdate, args...); err != nil {
			return fmt.Errorf("sqlstore: updating variable %q: %w", v.ID, err)
		}
		return nil
	})
	return variableConflict(err, project, v)
}

// checkCodeName returns ErrConflict when another variable of the project
// has v's code name.
func (s *variables) checkCodeName(ctx context.Context, tx *sql.Tx, project string, v variable.Variable) error {
	found, err := exists(ctx, tx, s.q.varCodeNameUse, project, v.CodeName, v.ID)
	if err != nil {
		return err
	}
	if found {
		return fmt.Errorf("%w: code_name %q is already used in project %q", variable.ErrConflict, v.CodeName, project)
	}
	return nil
}

// Get implements variable.Store.
func (s *variables) Get(ctx context.Context, project, id string) (variable.Variable, error) {
	v, err := scanVariable((*Store)(s).queryRow(ctx, s.q.varGet, project, id))
	if errors.Is(err, sql.ErrNoRows) {
		return variable.Variable{}, variableNotFound(project, id)
	}
	if err != nil {
		return variable.Variable{}, fmt.Errorf("sqlstore: reading variable %q: %w", id, err)
	}
	return v, nil
}

// maxInList bounds the markers of one IN list, below the smallest limit of
// the engines (SQLite's default of 32766 bound arguments) with room to spare.
const maxInList = 500

// maxPreparedInList is the longest IN list whose statement is kept
// prepared: a run reads its endpoint's few variables, and one statement per
// list length up to this bound keeps the cache small.
const maxPreparedInList = 16

// GetMany implements variable.Store.
func (s *variables) GetMany(ctx context.Context, project string, ids []string) (map[string]variable.Variable, error) {
	out := make(map[string]variable.Variable, len(ids))
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), maxInList)]
		ids = ids[len(chunk):]
		if err := s.getChunk(ctx, project, chunk, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (s *variables) getChunk(ctx context.Context, project string, ids []string, out map[string]variable.Variable) error {
	args := make([]any, 0, len(ids)+1)
	args = append(args, project)
	for _, id := range ids {
		args = append(args, id)
	}
	q := s.getManySQL(len(ids))
	var rows *sql.Rows
	var err error
	if len(ids) <= maxPreparedInList {
		rows, err = (*Store)(s).query(ctx, q, args...)
	} else {
		rows, err = s.db.QueryContext(ctx, q, args...)
	}
	if err != nil {
		return fmt.Errorf("sqlstore: reading variables: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		v, err := scanVariable(rows)
		if err != nil {
			return fmt.Errorf("sqlstore: reading variables: %w", err)
		}
		out[v.ID] = v
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlstore: reading variables: %w", err)
	}
	return nil
}

// List implements variable.Store.
func (s *variables) List(ctx context.Context, project string) ([]variable.Variable, error) {
	rows, err := (*Store)(s).query(ctx, s.q.varList, project)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: listing variables: %w", err)
	}
	defer rows.Close()
	out := []variable.Variable{}
	for rows.Next() {
		v, err := scanVariable(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlstore: listing variables: %w", err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlstore: listing variables: %w", err)
	}
	return out, nil
}

// Delete implements variable.Store.
func (s *variables) Delete(ctx context.Context, project, id string) error {
	return (*Store)(s).inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, s.q.varDelete, project, id)
		if err != nil {
			return fmt.Errorf("sqlstore: deleting variable %q: %w", id, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("sqlstore: deleting variable %q: %w", id, err)
		}
		if n == 0 {
			return variableNotFound(project, id)
		}
		return nil
	})
}

func variableNotFound(project, id string) error {
	return fmt.Errorf("%w: id %q in project %q", variable.ErrNotFound, id, project)
}

// variableConflict turns a driver's unique-key error into ErrConflict.
func variableConflict(err error, project string, v variable.Variable) error {
	if err == nil || errors.Is(err, variable.ErrConflict) || !isUniqueViolation(err) {
		return err
	}
	return fmt.Errorf("%w: variable %q (code_name %q) in project %q: %w", variable.ErrConflict, v.ID, v.CodeName, project, err)
}

// variableRow returns the values of varColumns for v.
func variableRow(v variable.Variable) ([]any, error) {
	def, err := marshalValue(v.DefaultValue)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: variable %q: default_value: %w", v.ID, err)
	}
	for _, e := range v.Values {
		if err := checkUTF8("sqlstore: variable "+v.ID+": values", e); err != nil {
			return nil, err
		}
	}
	values, err := json.Marshal(v.Values)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: variable %q: values: %w", v.ID, err)
	}
	return []any{v.ID, v.Name, v.CodeName, string(v.Type), def, string(values), boolInt(v.IsMulti)}, nil
}

// scanVariable reads a row of varColumns.
func scanVariable(r scanner) (variable.Variable, error) {
	var (
		v                    variable.Variable
		typ, def, valuesJSON string
		multi                int64
	)
	if err := r.Scan(&v.ID, &v.Name, &v.CodeName, &typ, &def, &valuesJSON, &multi); err != nil {
		return variable.Variable{}, err
	}
	v.Type, v.IsMulti = variable.Type(typ), multi != 0
	var err error
	if v.DefaultValue, err = unmarshalValue(def); err != nil {
		return variable.Variable{}, fmt.Errorf("variable %q: default_value: %w", v.ID, err)
	}
	if err := json.Unmarshal([]byte(valuesJSON), &v.Values); err != nil {
		return variable.Variable{}, fmt.Errorf("variable %q: values: %w", v.ID, err)
	}
	return v, nil
}

// getManySQL is the statement of GetMany for n ids.
func (s *variables) getManySQL(n int) string {
	var q strings.Builder
	q.WriteString(s.q.varGetMany)
	for i := 0; i < n; i++ {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString("?")
	}
	q.WriteString(")")
	return rebind(s.dialect, q.String())
}
