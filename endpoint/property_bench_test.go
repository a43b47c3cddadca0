package endpoint_test

import (
	"context"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
)

// propertyBenchEvents is the size of the property benchmark's data.
const propertyBenchEvents = 1_000_000

// propertyBenchVars is the run of the property benchmark: one country, a
// 30-day range whose both ends are mid-day, up to the data's end.
var propertyBenchVars = map[string]any{"country": "US", "from": "2025-05-02T09:30:00Z", "to": "2025-06-01T15:15:00Z"}

var propertyBench struct {
	once sync.Once
	svc  *endpoint.Service
	err  error
}

// propertyBenchService returns a Service over 1,000,000 demo events on
// SQLite with propertyDistinct saved three times: "inline"; "materialized",
// refreshed after the last event; and "tail", with the live tail on,
// refreshed when 1% of the events (the last 0.9 days) are still to come.
// It checks that the three answer the benchmark's run alike.
func propertyBenchService(b *testing.B) *endpoint.Service {
	propertyBench.once.Do(func() { propertyBench.svc, propertyBench.err = newPropertyBenchService() })
	if propertyBench.err != nil {
		b.Fatal(propertyBench.err)
	}
	return propertyBench.svc
}

func newPropertyBenchService() (*endpoint.Service, error) {
	ctx := context.Background()
	db, err := demoDB(propertyBenchEvents, 7)
	if err != nil {
		return nil, err
	}
	now := demo.End.Add(time.Hour)
	svc, err := endpoint.New(endpoint.Config{
		Endpoints: memstore.New(), Variables: variable.NewMemoryStore(),
		Executor: sqlexec.New(db, engine.SQLite), Now: func() time.Time { return now },
		MaxMaterializedRows: 2_000_000,
	})
	if err != nil {
		return nil, err
	}
	var refs = map[string]endpoint.VariableRef{}
	for _, v := range []variable.Variable{{Name: "country", Type: variable.String}, {Name: "from", Type: variable.Date}, {Name: "to", Type: variable.Date}} {
		created, err := svc.CreateVariable(ctx, "1", v)
		if err != nil {
			return nil, err
		}
		refs[created.ID] = endpoint.VariableRef{VariableID: created.ID, CodeName: created.CodeName}
	}
	q := &endpoint.Query{Kind: endpoint.KindSQL, SQL: propertyDistinct, Variables: refs}
	for _, req := range []endpoint.CreateRequest{
		{Name: "inline", Query: q},
		{Name: "materialized", Query: q, IsMaterialized: true},
		{Name: "tail", Query: q, IsMaterialized: true, MaterializationTail: "timestamp"},
	} {
		if _, err := svc.Create(ctx, "1", req); err != nil {
			return nil, err
		}
	}
	if err := svc.Materialize(ctx, "1", "materialized"); err != nil {
		return nil, err
	}
	now = demo.End.Add(-time.Duration(0.01 * demo.Days * float64(24*time.Hour)))
	if err := svc.Materialize(ctx, "1", "tail"); err != nil {
		return nil, err
	}
	now = demo.End.Add(time.Hour)
	var want *endpoint.RunResult
	for _, name := range []string{"inline", "materialized", "tail"} {
		res, err := svc.Run(ctx, "1", name, endpoint.RunRequest{Variables: propertyBenchVars})
		if err != nil {
			return nil, err
		}
		if name != "inline" && !res.EndpointMaterialized {
			return nil, &benchError{name + " did not read its stored table"}
		}
		if want == nil {
			want = res
			if rows, _ := res.Results.([][]any); len(rows) < 29 {
				return nil, &benchError{"the inline answer has too few days"}
			}
		} else if !reflect.DeepEqual(res.Results, want.Results) {
			return nil, &benchError{name + " answers otherwise than inline"}
		}
	}
	return svc, nil
}

type benchError struct{ msg string }

func (e *benchError) Error() string { return "property benchmark: " + e.msg }

// BenchmarkPropertyDistinct: users per day of one country (a JSON
// property compared with a variable), count(DISTINCT distinct_id), over an
// unaligned 30-day range, on 1,000,000 events: inline, from the stored
// table (whole days stored, the two partial days from the source), and
// with the live tail on (the last 1% of the events from the source).
func BenchmarkPropertyDistinct(b *testing.B) {
	svc := propertyBenchService(b)
	for _, name := range []string{"inline", "materialized", "tail"} {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				if _, err := svc.Run(ctx, "1", name, endpoint.RunRequest{Variables: propertyBenchVars}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
