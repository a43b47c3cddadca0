package executortest

import (
	"fmt"
	"reflect"
)

// sameValue reports whether got is a value the contract allows for want,
// which is one of int64, float64, string or nil. Integers may come as any
// Go integer type and floats as float32 or float64, as long as the value is
// exact; text must be a string (a []byte would encode as base64 JSON), and
// NULL must be nil (not "", 0 or a typed nil pointer).
func sameValue(got, want any) bool {
	switch w := want.(type) {
	case nil:
		return got == nil
	case string:
		g, ok := got.(string)
		return ok && g == w
	case int64:
		v := reflect.ValueOf(got)
		switch {
		case got == nil:
			return false
		case v.CanInt():
			return v.Int() == w
		case v.CanUint():
			return w >= 0 && v.Uint() == uint64(w)
		}
		return false
	case float64:
		switch g := got.(type) {
		case float64:
			return g == w
		case float32:
			return float64(g) == w
		}
		return false
	}
	panic(fmt.Sprintf("executortest: no comparison for %T", want))
}

// sameRows reports whether got holds exactly the rows of want, in order,
// by sameValue.
func sameRows(got, want [][]any) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range want {
		if len(got[i]) != len(want[i]) {
			return false
		}
		for j := range want[i] {
			if !sameValue(got[i][j], want[i][j]) {
				return false
			}
		}
	}
	return true
}

// describe prints rows with their Go types, which is what the checks are
// about.
func describe(rows [][]any) string {
	s := "["
	for i, row := range rows {
		if i > 0 {
			s += " "
		}
		s += "("
		for j, v := range row {
			if j > 0 {
				s += ", "
			}
			s += fmt.Sprintf("%T(%#v)", v, v)
		}
		s += ")"
	}
	return s + "]"
}
