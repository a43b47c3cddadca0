package endpoint

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

// checkQuery asks the engine to describe c, a compiled query of project
// about to be saved, without reading its rows: the scoped, paged statement
// a run executes, with LIMIT 0 and each variable bound to a value of its
// type (describe). Every engine resolves the query's names and types to
// answer it (SQLite and MySQL prepare it, PostgreSQL plans it, ClickHouse
// analyzes it), so a query it cannot run is refused here, before anything
// is saved. It returns the columns and types the engine described (nil
// for an insight query, whose SQL the library writes).
//
// A refusal of the engine about the query's text (a name, a type, its
// syntax) is a 400 query_error (explainFault words it). One about a value
// (a division by zero or a text that does not parse as a date, which an
// engine meets when it folds constants, the check's values among them) is
// not: the query is saved, and the run that meets the value answers it.
//
// A refusal of the engine is a 400 query_error (explainFault words it). A
// failure of the database that says nothing of the query (it could not be
// reached, it timed out) is not the author's error: it is a 502 (504 for
// a timeout) saying that the query could not be checked and nothing was
// saved, for the caller to retry; the Service saves no query it has not
// checked.
func (s *Service) checkQuery(ctx context.Context, project, name string, c *compiled) (*driver.Result, string, error) {
	if c.insight != nil {
		return nil, "", nil
	}
	res, err := s.describe(ctx, nil, c)
	if err == nil {
		return res, "", nil
	}
	var e *Error
	if !errors.As(err, &e) {
		return nil, "", err
	}
	switch e.Code {
	case CodeQueryError:
		var qe *driver.QueryError
		if errors.As(err, &qe) && valueFault(qe.Message) {
			// The engine resolved every name and type and then failed on
			// a value (a constant it folded, with the values the check
			// binds): a run, with its own values, may not. The query is
			// saved, as it was before the check; said to the caller, the
			// log and the metrics.
			s.observeSaveCheck(ctx, SaveCheckEvent{Project: project, Endpoint: name, Err: err})
			return nil, fmt.Sprintf("The database could not check the query with sample values of its variables (%s); it was saved, and a run whose values meet the same fault will answer it.", qe.Message), nil
		}
		return nil, "", s.explainFault(ctx, c.scope, c.query.SQL, err)
	case CodeTimeout:
		out := *e
		out.Detail = fmt.Sprintf("The database did not describe the query in time (%s); nothing was saved: retry, or simplify the query.", e.Detail)
		return nil, "", &out
	case CodeExecutionFailed:
		var qe *driver.QueryError
		if errors.As(err, &qe) {
			// queryFault hid a message that names the library's own
			// tables or the tenant's variable: still the query's fault.
			return nil, "", withCause(invalidf(CodeQueryError, "query.query",
				"The database refused the query; its message is not shown because it names what the library adds to the query."), err)
		}
		out := *e
		out.Detail = "The database could not be reached to check the query; nothing was saved: retry."
		return nil, "", &out
	}
	return nil, "", err
}

// valueFaultWords match the engines' messages about a value rather than
// the query's text: PostgreSQL's SQLSTATE class 22 (division by zero,
// invalid input syntax for a type, out of range), ClickHouse's parse and
// division errors, MySQL's incorrect values.
var valueFaultWords = regexp.MustCompile(`(?i)division by zero|cannot parse|invalid input syntax for|out of range|incorrect \w+ value|value too long`)

// valueFault reports whether an engine's message is about a value.
func valueFault(msg string) bool { return valueFaultWords.MatchString(msg) }
