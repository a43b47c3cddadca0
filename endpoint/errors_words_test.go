package endpoint_test

import (
	"context"
	"encoding/json"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/sql/access"
)

// goWords match what a detail for a user must not show: a Go package's
// prefix (access: ..., engine.Day), a qualified or pointer type, a value
// Printf could not format, a Go literal of a map, a slice or nil.
var goWords = []*regexp.Regexp{
	regexp.MustCompile(`\b(access|engine|driver|insight|placeholder|variable|materialize|scope|sqlexec|apierror|endpoint|stmt|sqltoken): `),
	regexp.MustCompile(`\b(access|engine|driver|insight|placeholder|variable|materialize|scope|sqlexec|apierror|endpoint|stmt|sqltoken|errors|fmt|json|time|sql)\.[A-Z]`),
	regexp.MustCompile(`\*[a-z]+\.[A-Z]\w*`),
	regexp.MustCompile(`%!|<nil>|map\[|\[\]string|\[\]any|interface \{|struct \{`),
}

// TestDetailsAreInTheUsersWords: the details of a table of bad inputs, SQL
// and insight queries at create and update, the editor's query route and
// runs, show no Go identifier or package name. The analyzer's refusals
// read "Query not allowed: access: ...", and a RetentionQuery's period
// named engine.Day, engine.Week and engine.Month.
func TestDetailsAreInTheUsersWords(t *testing.T) {
	policy, err := access.NewStatic(access.Rules{Tables: []access.Table{{Name: "orders"}}}, nil)
	require.NoError(t, err)
	e := newEnv(t, func(c *endpoint.Config) { c.Access = policy })
	ctx := context.Background()
	e.create(t, "good", e.query("SELECT id FROM orders WHERE country = {variables.country} AND amount > {variables.min_amount}", "country", "min_amount"))
	insight := func(js string) *endpoint.Query {
		var q endpoint.Query
		require.NoError(t, json.Unmarshal([]byte(js), &q))
		return &q
	}
	queries := map[string]*endpoint.Query{
		"analyzer syntax":      e.query("SELECT count(* FROM orders"),
		"analyzer FROM":        e.query("SELECT FROM orders"),
		"unknown column":       e.query("SELECT evnt FROM orders"),
		"refused table":        e.query("SELECT * FROM ordrs"),
		"catalog":              e.query("SELECT * FROM sqlite_master"),
		"function":             e.query("SELECT load_extension('x') FROM orders"),
		"two statements":       e.query("SELECT 1 FROM orders; SELECT 2 FROM orders"),
		"not a select":         e.query("DELETE FROM orders"),
		"syntax at the end":    e.query("SELECT id FROM orders WHERE"),
		"malformed":            e.query("SELECT {variables.} FROM orders"),
		"undefined":            e.query("SELECT {variables.nope} FROM orders"),
		"bind marker":          e.query("SELECT id FROM orders WHERE id = ?"),
		"reserved":             e.query("SELECT {variables.endpoint_tenant} FROM orders"),
		"inert":                e.query("SELECT id FROM orders WHERE country = '{variables.country}'", "country"),
		"no kind":              {SQL: "SELECT 1"},
		"unknown kind":         {Kind: "FunnelsQuery"},
		"retention period day": insight(`{"kind": "RetentionQuery", "retentionFilter": {"period": "day", "targetEntity": {"id": "signup", "type": "events"}, "returningEntity": {"id": "$pageview", "type": "events"}}}`),
		"trends math":          insight(`{"kind": "TrendsQuery", "series": [{"kind": "EventsNode", "event": "$pageview", "math": "median"}]}`),
		"trends interval":      insight(`{"kind": "TrendsQuery", "series": [{"kind": "EventsNode", "event": "$pageview"}], "interval": "fortnight"}`),
	}
	details := map[string]string{}
	for name, q := range queries {
		_, err := e.svc.Create(ctx, "1", endpoint.CreateRequest{Name: "bad", Query: q})
		details["create "+name] = detailOf(t, err)
		_, err = e.svc.Update(ctx, "1", "good", endpoint.UpdateRequest{Query: q})
		details["update "+name] = detailOf(t, err)
		_, err = e.svc.RunQuery(ctx, "1", endpoint.QueryRequest{Query: q})
		details["query "+name] = detailOf(t, err)
	}
	for name, vars := range map[string]map[string]any{
		"unknown":   {"contry": "US"},
		"missing":   {"country": "US"},
		"bad value": {"country": "US", "min_amount": "12abc"},
		"null":      {"country": nil, "min_amount": 1},
		"list":      {"country": []any{"US"}, "min_amount": 1},
	} {
		_, err := e.svc.Run(ctx, "1", "good", endpoint.RunRequest{Variables: vars})
		details["run "+name] = detailOf(t, err)
	}
	for name, d := range details {
		t.Logf("%s: %s", name, d)
		for _, re := range goWords {
			assert.NotRegexp(t, re, d, name)
		}
	}
	assert.Contains(t, details["create retention period day"], "period must be one of Day, Week, Month")
	assert.Contains(t, details["create analyzer syntax"], "Syntax error at line 1, column 16: unexpected FROM")
	assert.Contains(t, details["create analyzer FROM"], "syntax error at line 1, column 8")
}

// detailOf is the detail of err, an *endpoint.Error.
func detailOf(t *testing.T, err error) string {
	t.Helper()
	var e *endpoint.Error
	require.ErrorAs(t, err, &e)
	return e.Detail
}
