package endpoint_test

import (
	"context"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/stretchr/testify/require"
)

// TestSQLBindMarkerRefused: a hand-written bind marker would run with no
// argument and fail as a 502; it is refused at save with its position.
// Texts that only look like markers are accepted. (SQL endpoints; this file
// sits with the insight work that brought the check.)
func TestSQLBindMarkerRefused(t *testing.T) {
	refused := []struct{ sql, detail string }{
		{"SELECT * FROM orders WHERE country = ?", "Query contains a bind marker '?' at line 1, column 38; use {variables.<code_name>} instead"},
		{"SELECT *\nFROM orders\nWHERE id = ?1", "Query contains a bind marker '?1' at line 3, column 12; use {variables.<code_name>} instead"},
		{"SELECT * FROM orders WHERE id = $1", "Query contains a bind marker '$1' at line 1, column 33; use {variables.<code_name>} instead"},
		{"SELECT * FROM orders WHERE plan = :plan", "Query contains a bind marker ':plan' at line 1, column 35; use {variables.<code_name>} instead"},
		{"SELECT * FROM orders WHERE plan = @plan AND id = ?", "Query contains a bind marker '@plan' at line 1, column 35; use {variables.<code_name>} instead"},
	}
	accepted := []string{
		"SELECT CAST(amount AS TEXT) || '?', \"a?\" FROM (SELECT amount, 1 AS \"a?\" FROM orders) -- is it ?\n",
		"SELECT json_extract('{\"a\": {\"b\": 1}}', '$.a.b') /* :x @y $1 */",
		"SELECT country FROM orders WHERE country = {variables.country}",
	}
	ctx := context.Background()
	for _, tt := range refused {
		e := newEnv(t)
		_, err := e.svc.Create(ctx, "1", endpoint.CreateRequest{Name: "m", Query: e.query(tt.sql)})
		wantError(t, err, 400, "invalid_input", tt.detail, "query")
		e.create(t, "ok", e.query("SELECT 1"))
		_, err = e.svc.Update(ctx, "1", "ok", endpoint.UpdateRequest{Query: e.query(tt.sql)})
		wantError(t, err, 400, "invalid_input", tt.detail, "query")
	}
	for _, sql := range accepted {
		e := newEnv(t)
		q := e.query(sql)
		if sql == accepted[2] {
			q = e.query(sql, "country")
		}
		e.create(t, "ok", q)
		vars := map[string]any{}
		if sql == accepted[2] {
			vars["country"] = "US"
		}
		_, err := e.svc.Run(ctx, "1", "ok", endpoint.RunRequest{Variables: vars})
		require.NoError(t, err, "Run(%q)", sql)
	}
}
