package tree

import (
	"fmt"
	"strings"
)

// Writer is what a generator of SQL (package insight's) writes its
// statement to: text, quoted names and bound values.
// placeholder.Builder is one.
type Writer interface {
	// WriteString appends SQL text as it is.
	WriteString(s string)
	// WriteIdent appends name as the engine's quoted identifier.
	WriteIdent(name string)
	// Bind appends a bind marker and v as its argument.
	Bind(v any)
}

// Confinement is how the tenant's scope confines one table that generated
// SQL reads (the events of an insight query): what the scope says of the
// table, and the tenant whose rows it may read.
type Confinement struct {
	// Table is the table as the scope lists it: its tenant column and
	// its columns, if any.
	Table Table
	// Tenant is the tenant's value, bound, never written into the text.
	// A table with a tenant column cannot be written without it.
	Tenant any
}

// WriteTable writes to w a reference to the table name, aliased as its
// own name, for SQL that a generator writes rather than reads: with no
// confinement (nil) or one whose table is not scoped, the quoted name;
// otherwise the derived table that the printer prints a reference to a
// scoped table as,
//
//	(SELECT * FROM "events" WHERE "events".project_id = ?) AS "events"
//
// with the table's columns instead of * when it lists them, and the
// tenant bound through w. This is the printer's own confinement, so that
// a generated statement is confined where it is printed, as a user's is.
//
// A confinement whose table has a tenant column and no tenant fails with
// an error that wraps ErrUnscoped, never writing the reference unscoped;
// one given for another table than name fails too. On an error nothing
// is written.
func WriteTable(w Writer, name string, c *Confinement) error {
	if c != nil && (len(c.Table.Parts) != 1 || !strings.EqualFold(c.Table.Parts[0], name)) {
		return fmt.Errorf("%w: the confinement of table %q was given for table %q", ErrUnscoped, strings.Join(c.Table.Parts, "."), name)
	}
	if c == nil || !c.Table.Scoped() {
		w.WriteIdent(name)
		return nil
	}
	t := &c.Table
	if t.TenantColumn != "" && c.Tenant == nil {
		return fmt.Errorf("%w: the reference to table %q must be written with the tenant's scope, and it was given no tenant", ErrUnscoped, name)
	}
	w.WriteString("(SELECT ")
	if t.Columns == nil {
		w.WriteString("*")
	} else {
		w.WriteString(strings.Join(t.Columns, ", "))
	}
	w.WriteString(" FROM ")
	w.WriteIdent(name)
	if t.TenantColumn != "" {
		writeConfinement(w.WriteString, func() { w.WriteIdent(name) }, t.TenantColumn, func() { w.Bind(c.Tenant) })
	}
	w.WriteString(") AS ")
	w.WriteIdent(name)
	return nil
}

// writeConfinement writes the condition that confines a table to the
// tenant's rows, " WHERE <table>.<tenant column> = <tenant>": name writes
// the table's name as its reference spells it, tenant the tenant (a
// placeholder for a query the printer reads, a bound value for one a
// generator writes). It is the one place the condition's text is written.
// The column is qualified by the table's own name: an alias of the
// enclosing query cannot stand for it, and a tenant column missing from
// the table is an error rather than a reference to an outer column.
func writeConfinement(ws func(string), name func(), column string, tenant func()) {
	ws(" WHERE ")
	name()
	ws("." + column + " = ")
	tenant()
}
