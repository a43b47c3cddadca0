package endpoint

import (
	"errors"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/stretchr/testify/assert"
)

// TestQueryFaultHidesInternals: an engine message that names the
// library's tables or the tenant scope's variable is not shown; the run
// stays a 502.
func TestQueryFaultHidesInternals(t *testing.T) {
	for msg, shown := range map[string]bool{
		"no such column: nope":                           true,
		"no such table: endpointkit_mat_0a1b_v1":         false,
		`relation "ENDPOINTKIT_versions" does not exist`: false,
		"unknown identifier __endpointkit_tenant":        false,
		"": false,
	} {
		err := &driver.QueryError{Message: msg, Err: errors.New("driver")}
		if got := queryFault(err); (got != nil) != shown {
			t.Errorf("%q: shown %v; want %v", msg, got != nil, shown)
		} else if got != nil && (got.Status != 400 || got.Code != CodeQueryError || got.Detail != "The database refused the query: "+msg) {
			t.Errorf("%q: {%d %s %q}", msg, got.Status, got.Code, got.Detail)
		}
	}
	if assert.Nil(t, queryFault(errors.New("connection refused")), "an error of the database is not the query's") {
		assert.Nil(t, queryFault(nil), "an error of the database is not the query's")
	}
}
