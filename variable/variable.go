// Package variable defines data-management variables: the typed, named
// run-time parameters that an endpoint's query refers to as
// {variables.<code_name>}. It validates variable definitions and coerces
// run-time JSON values to typed Go values. It does no I/O; records are kept
// by a Store.
package variable

import (
	"errors"
	"time"
)

// Type is the type of a variable. Its JSON spelling is the constant's value.
type Type string

// The variable types.
const (
	String  Type = "String"
	Number  Type = "Number"
	Boolean Type = "Boolean"
	Date    Type = "Date"
	List    Type = "List"
)

// Variable is a data-management variable record, scoped to a project.
type Variable struct {
	// ID is the variable's UUID in canonical lower-case form.
	ID string `json:"id"`
	// Name is the human-readable name.
	Name string `json:"name"`
	// CodeName is the X of {variables.X}; derived from Name when empty.
	CodeName string `json:"code_name"`
	// Type decides how run-time values are coerced.
	Type Type `json:"type"`
	// DefaultValue serves the editor's test runs; never a saved endpoint's run.
	DefaultValue any `json:"default_value"`
	// Values are the allowed options of a List.
	Values []string `json:"values,omitempty"`
	// IsMulti lets a List take several of its Values at once.
	IsMulti bool `json:"is_multi,omitempty"`
}

// Timestamp is the coerced value of a Date variable, always in UTC.
type Timestamp struct {
	Time time.Time
	// DateOnly is true when the value names a whole day (YYYY-MM-DD or a
	// relative date in days, weeks, months or years).
	DateOnly bool
}

// Sentinel errors, compared with errors.Is.
var (
	// ErrInvalid is wrapped by every *DefinitionError.
	ErrInvalid = errors.New("variable: invalid definition")
	// ErrInvalidValue is wrapped by every *ValueError.
	ErrInvalidValue = errors.New("variable: invalid value")
	// ErrNotFound is returned by a Store for an unknown id.
	ErrNotFound = errors.New("variable: not found")
	// ErrConflict is returned by a Store for a duplicate id or code_name in a project.
	ErrConflict = errors.New("variable: conflict")
)
