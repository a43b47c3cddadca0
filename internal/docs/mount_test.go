package docs_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver (MySQL: github.com/go-sql-driver/mysql)

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/endpoint/sqlstore"
	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/endpointkit/endpointkit/sql/engine"
)

func mount(ctx context.Context, mux *http.ServeMux, appDB, analyticsDB *sql.DB) error {
	store, err := sqlstore.New(appDB, engine.PostgreSQL)
	if err != nil {
		return err
	}
	if err := store.Migrate(ctx); err != nil {
		return err
	}
	// Queries may read events only, each project its own rows.
	policy, err := access.NewStatic(access.Rules{
		Tables: []access.Table{{Name: "events", TenantColumn: "project_id"}},
	}, nil)
	if err != nil {
		return err
	}
	svc, err := endpoint.New(endpoint.Config{
		Endpoints:  store.Endpoints(),
		Variables:  store.Variables(),
		Executor:   sqlexec.New(analyticsDB, engine.PostgreSQL),
		Access:     policy,
		RunTimeout: 30 * time.Second, // the default; every limit has one (see Limits)
	})
	if err != nil {
		return err
	}

	// The HTTP API under /analytics/api/projects/{project_id}/...
	// A Keyring keeps only SHA-256 hashes of the keys; this one may use project 1.
	keys := httpapi.NewKeyring()
	if err := keys.Add(os.Getenv("TEAM_A_KEY"), "1"); err != nil {
		return err
	}
	mux.Handle("/analytics/", httpapi.New(svc, keys, httpapi.WithPrefix("/analytics")))

	// Or the service behind a handler of your own, with your own auth:
	mux.HandleFunc("POST /reports/weekly", func(w http.ResponseWriter, r *http.Request) {
		res, err := svc.Run(r.Context(), "1", "daily_events", endpoint.RunRequest{
			Variables: map[string]any{"event": "purchase", "from": "-7d", "to": "2099-01-01"},
		})
		var e *endpoint.Error
		if errors.As(err, &e) {
			http.Error(w, e.Detail, e.Status) // a 4xx for bad input, 502/504 for the database
			return
		}
		if err != nil {
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if err := json.NewEncoder(w).Encode(res); err != nil {
			slog.WarnContext(r.Context(), "writing the weekly report", "err", err) // the client went away
		}
	})
	return nil
}

// The two databases, both PostgreSQL here (the app's, and the analytics
// data read by a user that may only SELECT):
func open() (appDB, analyticsDB *sql.DB, err error) {
	if appDB, err = sql.Open("pgx", os.Getenv("APP_DATABASE_URL")); err != nil {
		return nil, nil, err
	}
	// sqlexec.Open puts each connection in the session the engine's SQL
	// assumes (UTC on PostgreSQL and MySQL).
	if analyticsDB, err = sqlexec.Open("pgx", os.Getenv("ANALYTICS_READONLY_URL"), engine.PostgreSQL); err != nil {
		appDB.Close()
		return nil, nil, err
	}
	return appDB, analyticsDB, nil
}
