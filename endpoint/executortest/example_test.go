package executortest_test

import (
	"fmt"

	"github.com/endpointkit/endpointkit/endpoint/executortest"
	"github.com/endpointkit/endpointkit/sql/engine"
)

// An engine that FixtureFor does not suit as it is, such as a ClickHouse
// server that should test on MergeTree tables, starts from the dialect's
// fixture and passes its own to RunWith:
//
//	f := executortest.FixtureFor(engine.ClickHouse)
//	f.TableOptions = "ENGINE = MergeTree ORDER BY tuple()"
//	executortest.RunWith(t, f, newExecutor)
func ExampleFixtureFor() {
	f := executortest.FixtureFor(engine.ClickHouse)
	fmt.Println(f.Integer, f.Float, f.Text, "/", f.TableOptions)
	// Output: Nullable(Int64) Nullable(Float64) Nullable(String) / ENGINE = Memory
}
