package endpoint_test

import (
	"context"
	"database/sql"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/require"
)

// propertyBenchEvents is the size of the property benchmark's data.
const propertyBenchEvents = 1_000_000

// propertyBenchVars is the run of the property benchmark: one country, a
// 30-day range whose both ends are mid-day, up to the data's end.
var propertyBenchVars = map[string]any{"country": "US", "from": "2025-05-02T09:30:00Z", "to": "2025-06-01T15:15:00Z"}

// propertyBenchConfigs are the configurations the property benchmark runs
// in, over the same events: "scoped" as the example server runs (each
// read scoped to its project, project_id, so the partial buckets and the
// tail read the project's time index), "unscoped" as a host with one
// tenant does (no access policy: they read the time index alone).
var propertyBenchConfigs = []string{"scoped", "unscoped"}

var propertyBench struct {
	once sync.Once
	svcs map[string]*endpoint.Service
	err  error
}

// propertyBenchServices returns a Service of each configuration over
// 1,000,000 demo events on SQLite (newPropertyBenchService).
func propertyBenchServices(b *testing.B) map[string]*endpoint.Service {
	propertyBench.once.Do(func() {
		db, err := demoDB(propertyBenchEvents, 7)
		if err != nil {
			propertyBench.err = err
			return
		}
		propertyBench.svcs = map[string]*endpoint.Service{}
		for _, cfg := range propertyBenchConfigs {
			svc, err := newPropertyBenchService(db, cfg == "scoped")
			if err != nil {
				propertyBench.err = err
				return
			}
			propertyBench.svcs[cfg] = svc
		}
	})
	require.NoError(b, propertyBench.err)
	return propertyBench.svcs
}

// newPropertyBenchService returns a Service over db, scoped to the tenant
// column project_id as the example server's is or not scoped at all, with
// propertyDistinct saved three times: "inline"; "materialized", refreshed
// after the last event; and "tail", with the live tail on, refreshed when
// 1% of the events (the last 0.9 days) are still to come. It checks that
// the three answer the benchmark's run alike.
func newPropertyBenchService(db *sql.DB, scoped bool) (*endpoint.Service, error) {
	ctx := context.Background()
	now := demo.End.Add(time.Hour)
	cfg := endpoint.Config{
		Endpoints: memstore.New(), Variables: variable.NewMemoryStore(),
		Executor: sqlexec.New(db, engine.SQLite), Now: func() time.Time { return now },
		MaxMaterializedRows: 2_000_000,
	}
	if scoped {
		policy, err := access.NewStatic(access.Rules{Tables: []access.Table{{Name: "events", TenantColumn: "project_id"}}}, nil)
		if err != nil {
			return nil, err
		}
		cfg.Access = policy
	}
	svc, err := endpoint.New(cfg)
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
// unaligned 30-day range, on 1,000,000 events, in each configuration
// (propertyBenchConfigs): inline, from the stored table (whole days
// stored, the two partial days from the source), and with the live tail
// on (the last 1% of the events from the source). The tail sub-benchmark
// of each configuration reports the ratios of that run, inline/mat and
// tail/mat (the goal of issue 39: >= 20 and <= 2).
func BenchmarkPropertyDistinct(b *testing.B) {
	svcs := propertyBenchServices(b)
	for _, cfg := range propertyBenchConfigs {
		svc := svcs[cfg]
		perOp := map[string]float64{}
		b.Run(cfg, func(b *testing.B) {
			for _, name := range []string{"inline", "materialized", "tail"} {
				b.Run(name, func(b *testing.B) {
					ctx := context.Background()
					for b.Loop() {
						_, err := svc.Run(ctx, "1", name, endpoint.RunRequest{Variables: propertyBenchVars})
						require.NoError(b, err)
					}
					perOp[name] = float64(b.Elapsed()) / float64(b.N)
					if name == "tail" && perOp["materialized"] > 0 {
						b.ReportMetric(perOp["inline"]/perOp["materialized"], "inline/mat")
						b.ReportMetric(perOp["tail"]/perOp["materialized"], "tail/mat")
					}
				})
			}
		})
	}
}
