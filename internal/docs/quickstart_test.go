package docs_test

import (
	"context"
	"net/http"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/endpoint/sqlstore"
	"github.com/endpointkit/endpointkit/sql/engine"
)

// serve returns the HTTP API over the SQLite file path, which holds your
// tables and, once migrated, the endpoints'; key may use project 1.
func serve(ctx context.Context, path, key string) (http.Handler, *endpoint.Service, error) {
	db, err := sqlexec.Open("sqlite", path, engine.SQLite)
	if err != nil {
		return nil, nil, err
	}
	store, err := sqlstore.New(db, engine.SQLite)
	if err != nil {
		return nil, nil, err
	}
	if err := store.Migrate(ctx); err != nil {
		return nil, nil, err
	}
	svc, err := endpoint.New(endpoint.Config{
		Endpoints: store.Endpoints(),
		Variables: store.Variables(),
		Executor:  sqlexec.New(db, engine.SQLite),
	})
	if err != nil {
		return nil, nil, err
	}
	keys := httpapi.NewKeyring()
	if err := keys.Add(key, "1"); err != nil {
		return nil, nil, err
	}
	return httpapi.New(svc, keys), svc, nil
}
