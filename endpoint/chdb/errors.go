//go:build chdb

package chdb

import (
	"fmt"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/internal/chfault"
)

// queryError is the executor's error for text, the exception chDB
// reported: a *driver.QueryError when its code names a fault of the
// query (see package internal/chfault).
func queryError(text string) error {
	err := fmt.Errorf("chdb: %s", text)
	code, msg, ok := chfault.Parse(text)
	if !ok || !chfault.Fault(code, msg) {
		return err
	}
	if msg = chfault.Message(msg); msg == "" {
		return err
	}
	return &driver.QueryError{Message: msg, Err: err}
}
