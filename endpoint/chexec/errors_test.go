package chexec

import (
	"errors"
	"fmt"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/stretchr/testify/assert"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

// TestQueryErrorFault: a server exception whose code is the query's fault
// is a *driver.QueryError with the message alone; others, and the
// result limit, are what they were.
func TestQueryErrorFault(t *testing.T) {
	ex := &clickhouse.Exception{Code: 47, Name: "DB::Exception",
		Message: "Unknown expression identifier `nope` in scope SELECT nope FROM (SELECT * FROM events WHERE project_id = {p1:String}) AS events"}
	var qe *driver.QueryError
	if err := queryError(fmt.Errorf("read: %w", ex)); !errors.As(err, &qe) || qe.Message != "Unknown expression identifier `nope`" || !errors.Is(err, ex) {
		t.Errorf("UNKNOWN_IDENTIFIER: %v; want a QueryError of the message alone", err)
	}
	for _, code := range []int32{241, 159, 210, 164} { // memory, timeout, network, readonly
		assert.False(t, errors.As(queryError(&clickhouse.Exception{Code: code, Message: "x"}), &qe), "code %d: a QueryError; want the server's failure", code)
	}
	assert.ErrorIs(t, queryError(&clickhouse.Exception{Code: codeResultTooLarge, Message: "x"}), driver.ErrResultTooLarge, "TOO_MANY_ROWS_OR_BYTES")
}
