package endpoint

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/sql/scope"
)

// argFault returns the 400 of a run whose executor could not hold one of
// its bound values as the type the engine gave its marker (a
// *driver.ArgError: PostgreSQL binds a number compared with an integer
// expression as int4), naming the variable whose value it is, so that a
// value out of an engine's range answers as any other bad value does; nil
// for any other error. The variable is found by its value among values,
// those the run bound.
func argFault(err error, st scope.Statement, c *compiled, values map[string]any) *Error {
	var ae *driver.ArgError
	if err == nil || !errors.As(err, &ae) || ae.Index < 0 || ae.Index >= len(st.Args()) {
		return nil
	}
	arg := st.Args()[ae.Index]
	typ := "its type"
	if ae.Type != "" {
		typ = ae.Type
	}
	for i := range c.vars {
		v := &c.vars[i]
		if !holds(values[v.CodeName], arg) {
			continue
		}
		e := invalidf(CodeInvalidVariableValue, variableAttr(v.CodeName),
			"Invalid value for variable '%s': the database cannot hold %v as the type it compares it with (%s); cast the expression in the query to a wider type (for example ::bigint or ::float8)",
			v.CodeName, arg, typ)
		e.Variable, e.Type, e.Value = v.CodeName, string(v.Type), fmt.Sprint(arg)
		return withCause(e, err)
	}
	return withCause(invalidf(CodeInvalidVariableValue, "variables",
		"Invalid value: the database cannot hold the bound value %v as the type it compares it with (%s)", arg, typ), err)
}

// holds reports whether arg is val, or one of the elements of val when it
// is a list.
func holds(val, arg any) bool {
	if val == nil {
		return false
	}
	rv := reflect.ValueOf(val)
	if rv.Kind() == reflect.Slice {
		for i := range rv.Len() {
			if same(rv.Index(i).Interface(), arg) {
				return true
			}
		}
		return false
	}
	return same(val, arg)
}

// same compares two bound scalars, numbers by value whatever their Go
// type.
func same(a, b any) bool {
	ra, rb := reflect.ValueOf(a), reflect.ValueOf(b)
	if ra.Comparable() && rb.Comparable() && ra.Type() == rb.Type() {
		return a == b
	}
	return fmt.Sprint(a) == fmt.Sprint(b) && numeric(ra.Kind()) && numeric(rb.Kind())
}

func numeric(k reflect.Kind) bool {
	return k >= reflect.Int && k <= reflect.Float64
}
