package driver

import "strconv"

// ArgError is an Executor's error about one bound argument: the engine,
// or its driver, cannot hold the value as the type the statement gives
// its bind marker (PostgreSQL binds a number compared with an integer
// expression as int4, which 3000000000 does not fit). The Service answers
// it 400 invalid_variable_value naming the variable whose value it is,
// the same on every engine, rather than a 502.
//
// Guidelines for implementers: return an *ArgError only when the driver
// says which argument it could not encode and why; the query did not
// run.
type ArgError struct {
	// Index is the argument's position in Statement.Args, from 0.
	Index int
	// Type is the engine's type of the bind marker ("int4"), "" when the
	// driver does not say.
	Type string
	// Err is the driver's error.
	Err error
}

// Error names the argument and the type.
func (e *ArgError) Error() string {
	msg := "argument " + strconv.Itoa(e.Index+1) + " does not fit"
	if e.Type != "" {
		msg += " the type " + e.Type
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the driver's error.
func (e *ArgError) Unwrap() error { return e.Err }
