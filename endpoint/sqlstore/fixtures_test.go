package sqlstore

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/variable"
)

// idOf is a stable UUID per name, so that fixtures are reproducible.
func idOf(name string) string {
	return uuid.NewSHA1(uuid.NameSpaceOID, []byte(name)).String()
}

// variableFixture is a normalized List variable with every field set.
func variableFixture(codeName string) variable.Variable {
	return variable.Variable{
		ID:           idOf("variable " + codeName),
		Name:         "Variable " + codeName,
		CodeName:     codeName,
		Type:         variable.List,
		DefaultValue: []string{"a"},
		Values:       []string{"a", "b"},
		IsMulti:      true,
	}
}

var t0 = time.Date(2025, 6, 1, 9, 30, 0, 123456789, time.UTC)

// sqlQuery is a SQL query with one variable and a test value.
func sqlQuery(sql string) driver.Query {
	return driver.Query{
		Kind: driver.KindSQL,
		SQL:  sql,
		Variables: map[string]driver.VariableRef{
			idOf("variable event"): {VariableID: idOf("variable event"), CodeName: "event", Value: json.RawMessage(`"$pageview"`)},
		},
	}
}

// endpointFixture returns an endpoint with every field set, and its first
// version.
func endpointFixture(project, name string) (driver.Endpoint, driver.Version) {
	q := sqlQuery("SELECT count() FROM events WHERE event = {variables.event}")
	executed := t0.Add(time.Minute)
	e := driver.Endpoint{
		ID:             idOf("endpoint " + project + " " + name),
		ProjectID:      project,
		Name:           name,
		Description:    "Counts " + name,
		Query:          q,
		IsActive:       true,
		IsMaterialized: false,
		CurrentVersion: 1,
		VersionsCount:  1,
		CreatedAt:      t0,
		UpdatedAt:      t0,
		LastExecutedAt: &executed,
	}
	return e, driver.Version{EndpointID: e.ID, Number: 1, Query: sqlQuery(q.SQL), CreatedAt: t0}
}

// nextVersion returns e moved to a new query, and the version to write
// with it.
func nextVersion(e driver.Endpoint, sql string) (driver.Endpoint, *driver.Version) {
	e.Query = sqlQuery(sql)
	e.CurrentVersion++
	e.VersionsCount++
	e.UpdatedAt = e.UpdatedAt.Add(time.Hour)
	return e, &driver.Version{EndpointID: e.ID, Number: e.CurrentVersion, Query: sqlQuery(sql), CreatedAt: e.UpdatedAt}
}
