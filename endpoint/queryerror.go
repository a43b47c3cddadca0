package endpoint

import (
	"errors"
	"strings"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/variable"
)

// CodeQueryError is a run the engine refused or failed because of the
// query itself (a syntax error, an unknown column or function, a type
// mismatch, a division by zero): a 400 whose detail is the engine's
// message, for the query's author to act on.
const CodeQueryError = "query_error"

// queryFault returns the 400 of a run whose executor said the query is at
// fault (a *driver.QueryError), nil for any other error. A message that
// names the library's own tables or the tenant scope's variable is never
// shown: such a run stays a 502 whose cause is only logged.
func queryFault(err error) *Error {
	if err == nil {
		return nil // before qe, which escapes: a run that succeeds allocates nothing here
	}
	var qe *driver.QueryError
	if !errors.As(err, &qe) || qe.Message == "" || internalName(qe.Message) {
		return nil
	}
	return withCause(invalidf(CodeQueryError, "", "The database refused the query: %s", qe.Message), err)
}

// internalName reports whether msg names something of the library's own
// that a query's author must not see: its tables (endpointkit_...) or the
// variable that binds the tenant (variable.ReservedPrefix).
func internalName(msg string) bool {
	lower := strings.ToLower(msg)
	return strings.Contains(lower, "endpointkit_") || strings.Contains(lower, strings.ToLower(variable.ReservedPrefix))
}
