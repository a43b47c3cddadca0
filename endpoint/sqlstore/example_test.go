package sqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log"
	"time"

	_ "modernc.org/sqlite"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/sqlstore"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
)

// ExampleNew sets up the store on SQLite and serves both the endpoint and
// the variable records from one database. A file database would be opened
// with "file:endpointkit.db?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)".
func ExampleNew() {
	ctx := context.Background()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // every connection to ":memory:" is a database of its own

	store, err := sqlstore.New(db, engine.SQLite)
	if err != nil {
		log.Fatal(err)
	}
	if err := store.Migrate(ctx); err != nil {
		log.Fatal(err)
	}

	country := variable.Variable{
		ID: "0190b2a4-7d5e-7b3c-9e1f-2a3b4c5d6e7f", Name: "Country", CodeName: "country",
		Type: variable.String, DefaultValue: "FR",
	}
	if err := store.Variables().Create(ctx, "1", country); err != nil {
		log.Fatal(err)
	}

	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	query := driver.Query{
		Kind: driver.KindSQL,
		SQL:  "SELECT count(*) FROM events WHERE properties->>'country' = {variables.country}",
		Variables: map[string]driver.VariableRef{
			country.ID: {VariableID: country.ID, CodeName: "country"},
		},
	}
	e := driver.Endpoint{
		ID: "0190b2a4-0000-7000-8000-000000000001", ProjectID: "1", Name: "events_by_country",
		Query: query, IsActive: true, CurrentVersion: 1, VersionsCount: 1, CreatedAt: now, UpdatedAt: now,
	}
	first := driver.Version{EndpointID: e.ID, Number: 1, Query: query, CreatedAt: now}
	if err := store.Endpoints().Create(ctx, e, first); err != nil {
		log.Fatal(err)
	}

	got, err := store.Endpoints().Get(ctx, "1", "events_by_country")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(got.Name, "version", got.CurrentVersion)
	fmt.Println(got.Query.SQL)

	// The same name in project 1 again is a conflict.
	err = store.Endpoints().Create(ctx, e, first)
	fmt.Println(errors.Is(err, driver.ErrConflict))
	// Output:
	// events_by_country version 1
	// SELECT count(*) FROM events WHERE properties->>'country' = {variables.country}
	// true
}
