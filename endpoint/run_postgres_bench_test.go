package endpoint_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
)

// dailyPurchasesPG is dailyPurchases as a PostgreSQL user writes it.
const dailyPurchasesPG = `SELECT substr(timestamp, 1, 10) AS day, count(*) AS purchases, sum(amount) AS revenue
FROM (SELECT timestamp, json_extract_path_text(CAST(properties AS json), 'country') AS country,
             CAST(json_extract_path_text(CAST(properties AS json), 'amount') AS decimal) AS amount
      FROM events WHERE event = 'purchase') AS p
WHERE country = {variables.country} AND timestamp >= {variables.from} AND timestamp < {variables.to}
GROUP BY day ORDER BY day`

// trendsPGBench is daily $pageview by $browser over 30 days.
const trendsPGBench = `{"kind":"TrendsQuery","series":[{"kind":"EventsNode","event":"$pageview"}],"interval":"day",
	"dateRange":{"date_from":"2025-05-02","date_to":"2025-05-31"},"breakdownFilter":{"breakdown":"$browser","breakdown_type":"event"}}`

// pgBench is a Service on PostgreSQL over 1,000,000 demo events, with the
// daily purchases query and the trends query each saved inline and
// materialized. It is built once, by the first benchmark that needs it.
var pgBench struct {
	once sync.Once
	svc  *endpoint.Service
	err  error
}

func pgBenchService(b *testing.B) *endpoint.Service {
	b.Helper()
	dsn := testdb.PostgresDSN(b)
	pgBench.once.Do(func() { pgBench.svc, pgBench.err = newPGBenchService(dsn) })
	require.NoError(b, pgBench.err)
	return pgBench.svc
}

func newPGBenchService(dsn string) (*endpoint.Service, error) {
	ctx := context.Background()
	db, err := sqlexec.Open("pgx", dsn, engine.PostgreSQL)
	if err != nil {
		return nil, err
	}
	for _, stmt := range demo.SchemaFor(engine.PostgreSQL) {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return nil, err
		}
	}
	if err := demo.Insert(ctx, db, engine.PostgreSQL, "1", matBenchEvents, 7); err != nil {
		return nil, err
	}
	if _, err := db.ExecContext(ctx, "ANALYZE events"); err != nil {
		return nil, err
	}
	svc, err := endpoint.New(endpoint.Config{
		Endpoints: memstore.New(),
		Variables: variable.NewMemoryStore(),
		Executor:  sqlexec.New(db, engine.PostgreSQL),
		Now:       func() time.Time { return demo.End },
	})
	if err != nil {
		return nil, err
	}
	q := &endpoint.Query{Kind: endpoint.KindSQL, SQL: dailyPurchasesPG, Variables: map[string]endpoint.VariableRef{}}
	for _, v := range []variable.Variable{{Name: "Country", Type: variable.String}, {Name: "From", Type: variable.Date}, {Name: "To", Type: variable.Date}} {
		got, err := svc.CreateVariable(ctx, "1", v)
		if err != nil {
			return nil, err
		}
		q.Variables[got.ID] = endpoint.VariableRef{VariableID: got.ID, CodeName: got.CodeName}
	}
	trends := &endpoint.Query{Kind: endpoint.KindTrends, Insight: []byte(trendsPGBench)}
	for _, c := range []struct {
		name string
		q    *endpoint.Query
		mat  bool
	}{{"inline", q, false}, {"daily", q, true}, {"trends_inline", trends, false}, {"trends", trends, true}} {
		if _, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: c.name, Query: c.q, IsMaterialized: c.mat}); err != nil {
			return nil, err
		}
		if c.mat {
			if err := svc.Materialize(ctx, "1", c.name); err != nil {
				return nil, err
			}
		}
	}
	return svc, nil
}

func benchPG(b *testing.B, svc *endpoint.Service, name string, req endpoint.RunRequest, materialized bool) {
	ctx := context.Background()
	for b.Loop() {
		res, err := svc.Run(ctx, "1", name, req)
		if err != nil {
			var e *endpoint.Error
			require.False(b, errors.As(err, &e), "%v: %v", err, e.Err)
			b.Fatal(err)
		}
		require.Equal(b, materialized, res.EndpointMaterialized, "%s: materialized", name)
	}
}

// BenchmarkPostgres runs the daily purchases endpoint and the trends
// endpoint on 1,000,000 demo events in PostgreSQL (ENDPOINTKIT_TEST_POSTGRES),
// inline and from their materialized tables.
func BenchmarkPostgres(b *testing.B) {
	// The database lives as long as this benchmark, not a sub-benchmark.
	svc := pgBenchService(b)
	browser := endpoint.RunRequest{Variables: map[string]any{"$browser": "Chrome"}}
	b.Run("sql/inline", func(b *testing.B) { benchPG(b, svc, "inline", matBenchRequest, false) })
	b.Run("sql/materialized", func(b *testing.B) { benchPG(b, svc, "daily", matBenchRequest, true) })
	b.Run("trends/inline", func(b *testing.B) { benchPG(b, svc, "trends_inline", browser, false) })
	b.Run("trends/materialized", func(b *testing.B) { benchPG(b, svc, "trends", browser, true) })
}
