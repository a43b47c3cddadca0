package chexec

import (
	"errors"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/internal/chfault"
)

// queryFault returns wrapped, the executor's error for err, as a
// *driver.QueryError when err is a server exception whose code names a
// fault of the query (see package internal/chfault), and wrapped
// unchanged otherwise.
func queryFault(err, wrapped error) error {
	var ex *clickhouse.Exception
	if !errors.As(err, &ex) || !chfault.Fault(int(ex.Code), ex.Message) {
		return wrapped
	}
	msg := chfault.Message(ex.Message)
	if msg == "" {
		return wrapped
	}
	return &driver.QueryError{Message: msg, Err: wrapped}
}
