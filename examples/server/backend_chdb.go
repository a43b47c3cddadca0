//go:build chdb

package main

import (
	"github.com/endpointkit/endpointkit/endpoint/chdb"
	"github.com/endpointkit/endpointkit/sql/engine"
)

const chdbHint = ", chdb"

func init() {
	openers["chdb"] = func(dir string) (engine.Engine, executor, func(), error) {
		x, err := chdb.Open(dir)
		if err != nil {
			return nil, nil, nil, err
		}
		return engine.ClickHouse, x, func() { x.Close() }, nil
	}
}
