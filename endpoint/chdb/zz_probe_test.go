//go:build chdb

package chdb

import (
	"context"
	"fmt"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/variable"
)

func TestZZProbe(t *testing.T) {
	x := executor(t)
	loadDemo(t, x)
	svc, _ := endpoint.New(endpoint.Config{Endpoints: memstore.New(), Variables: variable.NewMemoryStore(), Executor: x})
	for _, q := range []string{"SELECT evnt FROM events", "SELECT event FROM evnts", "SELECT event FROM events WHERE", "SELECT event,, 1 FROM events", "SELECT count(*) FROM events GROUP BY evnt", "SELECT e.evnt FROM events e"} {
		_, err := svc.RunQuery(context.Background(), "1", endpoint.QueryRequest{Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: q}})
		fmt.Printf("ch | %q | %v\n", q, err)
	}
}
