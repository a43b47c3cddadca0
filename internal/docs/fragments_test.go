package docs_test

import (
	"context"
	"database/sql"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/apikey"
	"github.com/endpointkit/endpointkit/endpoint/chexec"
	"github.com/endpointkit/endpointkit/endpoint/editor"
	"github.com/endpointkit/endpointkit/endpoint/embed"
	"github.com/endpointkit/endpointkit/endpoint/endpointtest"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/endpoint/limit"
	"github.com/endpointkit/endpointkit/endpoint/mcp"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/endpoint/metrics"
	"github.com/endpointkit/endpointkit/endpoint/sqlstore"
	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/endpointkit/endpointkit/sql/engine"
)

// The functions of this file hold the Go fragments of docs/: each fragment
// is a run of lines of one of them (TestGoBlocksCompile), so that a
// fragment that no longer compiles fails the build of this package.

// TestWeeklyReport is docs/embedding.md's test of a host's handler.
func TestWeeklyReport(t *testing.T) {
	env := endpointtest.New(t, endpointtest.WithDemoEvents(1000))
	// save endpoints with env.Service, then test your handler around env.Service,
	// or call the API (env.Do(t, "POST", "/endpoints/daily/run/", `{"variables": {}}`)):
	status, body := env.Do(t, "GET", "/endpoints/", "")
	require.Equal(t, http.StatusOK, status, body)
}

// mountEditor is docs/editor.md's mount of the editor beside the API.
func mountEditor(mux *http.ServeMux, svc *endpoint.Service, keys *httpapi.Keyring) {
	mux.Handle("/analytics/", httpapi.New(svc, keys, httpapi.WithPrefix("/analytics")))
	mux.Handle("/analytics/editor/", http.StripPrefix("/analytics/editor",
		editor.New(editor.WithAPI("/analytics"), editor.WithProject("1"))))
}

// newSigner is docs/embedding.md's signer of embed tokens.
func newSigner() (*embed.Signer, error) {
	keys := &embed.StaticKeys{}
	// kid "2026-11", for every project
	if err := keys.Add("", "2026-11", []byte(os.Getenv("EMBED_SECRET"))); err != nil {
		return nil, err
	}
	return &embed.Signer{Keys: keys}, nil
}

func tokenFor(ctx context.Context, svc *endpoint.Service, signer *embed.Signer, customer string) (string, error) {
	return svc.MintEmbedToken(ctx, signer, "1", embed.Claims{
		Endpoints: []string{"daily_revenue"},
		Fixed:     map[string]any{"customer_id": customer}, // the customer cannot change it
		RPM:       60,                                      // runs per minute for this token
	}, time.Hour)
}

// mountMCP is docs/mcp.md's mount of the MCP tools.
func mountMCP(mux *http.ServeMux, svc *endpoint.Service, keys *httpapi.Keyring, signer *embed.Signer, limiter *limit.Limiter) {
	mux.Handle("/mcp", mcp.Handler(svc, keys, // the API's Keyring (or Authenticator)
		mcp.WithEmbedTokens(signer), mcp.WithLimiter(limiter), // the API's, so runs share the budgets
		mcp.WithDefaultProject("1"))) // for a key whose URL names none
}

// storedKeys is docs/embedding.md's API keys in Go.
func storedKeys(ctx context.Context, svc *endpoint.Service, store *sqlstore.Store, keyring *httpapi.Keyring) error {
	keys, err := apikey.New(apikey.Config{Store: store.Keys()})
	if err != nil {
		return err
	}
	api := httpapi.New(svc, keyring, httpapi.WithKeys(keys))
	tools := mcp.Handler(svc, keyring, mcp.WithKeys(keys)) // the same Keys: one budget per key
	key, secret, err := keys.Create(ctx, "1", apikey.CreateRequest{
		Name: "dashboard", Scopes: []string{apikey.ScopeEndpointRead}, Endpoints: []string{"daily_events"},
	})
	_, _, _, _ = api, tools, key, secret
	return err
}

// withResultCache is docs/embedding.md's result cache.
func withResultCache(store *sqlstore.Store, cfg endpoint.Config) (*endpoint.Service, error) {
	cfg.ResultCache = memstore.NewResultCache(64 << 20) // bytes, least recently used first
	// or, shared by the processes on one store:
	cfg.ResultCache = store.ResultCache(sqlstore.CacheOptions{})
	return endpoint.New(cfg)
}

// schedule is docs/scale.md's scheduler.
func schedule(ctx context.Context, svc *endpoint.Service) {
	go svc.Schedule(ctx) // returns once ctx is done and the refreshes under way have ended
}

// withMetrics is docs/scale.md's Prometheus metrics.
func withMetrics(mux *http.ServeMux, cfg endpoint.Config) (endpoint.Config, error) {
	reg := prometheus.NewRegistry()
	obs, err := metrics.New(reg) // metrics.WithMaxEndpoints(n) to change the cap on names
	if err != nil {
		return cfg, err
	}
	cfg.Observer = endpoint.MultiObserver(endpoint.SlogObserver{}, obs)
	mux.Handle("GET /metrics", metrics.Handler(reg, os.Getenv("METRICS_KEY"))) // 401 without that key
	return cfg, nil
}

// onCluster is docs/scale.md's service over a ClickHouse cluster, its store
// on PostgreSQL.
func onCluster(ctx context.Context, postgresDB *sql.DB, policy access.Policy, password string) (*endpoint.Service, error) {
	cluster, err := engine.ClickHouseCluster("events") // its name in remote_servers, or "{cluster}"
	if err != nil {
		return nil, err
	}
	x, err := chexec.Open(&clickhouse.Options{
		Addr: []string{"ch1:9000", "ch2:9000", "ch3:9000"}, // clickhouse-go spreads connections over them
		Auth: clickhouse.Auth{Database: "analytics", Username: "endpoints", Password: password},
	}, nil, chexec.WithEngine(cluster))
	if err != nil {
		return nil, err
	}
	store, err := sqlstore.New(postgresDB, engine.PostgreSQL)
	if err != nil {
		return nil, err
	}
	if err := store.Migrate(ctx); err != nil {
		return nil, err
	}
	return endpoint.New(endpoint.Config{Endpoints: store.Endpoints(), Variables: store.Variables(), Executor: x, Access: policy})
}

var (
	_ = mountEditor
	_ = newSigner
	_ = tokenFor
	_ = mountMCP
	_ = storedKeys
	_ = withResultCache
	_ = schedule
	_ = withMetrics
	_ = onCluster
)
