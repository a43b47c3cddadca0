package docs_test

import (
	"net/http"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
)

// serve returns the HTTP API over the tables of the SQLite file path,
// behind one API key that may use project 1.
func serve(path, key string) (http.Handler, error) {
	db, err := sqlexec.Open("sqlite", path, engine.SQLite)
	if err != nil {
		return nil, err
	}
	svc, err := endpoint.New(endpoint.Config{
		Endpoints: memstore.New(), // sqlstore keeps them in a database
		Variables: variable.NewMemoryStore(),
		Executor:  sqlexec.New(db, engine.SQLite),
	})
	if err != nil {
		return nil, err
	}
	keys := httpapi.NewKeyring()
	if err := keys.Add(key, "1"); err != nil {
		return nil, err
	}
	return httpapi.New(svc, keys), nil
}
