package endpoint_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/apikey"
	"github.com/endpointkit/endpointkit/endpoint/embed"
	"github.com/endpointkit/endpointkit/endpoint/endpointtest"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// admitEnv is a Service on a settable clock with the SQL endpoints
// "mat" (materialized, no table yet) and "plain".
func admitEnv(t *testing.T) (*endpoint.Service, *clock) {
	t.Helper()
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	env := endpointtest.New(t, endpointtest.WithDemoEvents(100), endpointtest.WithConfig(func(cfg *endpoint.Config) { cfg.Now = c.Now }))
	svc := env.Service
	ctx := context.Background()
	for _, e := range []endpoint.CreateRequest{
		{Name: "mat", IsMaterialized: true, Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: matSQL}},
		{Name: "plain", Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: matSQL}},
	} {
		_, err := svc.Create(ctx, "1", e)
		require.NoError(t, err, "Create %s", e.Name)
	}
	return svc, c
}

const matSQL = "SELECT event, count(*) AS n FROM events GROUP BY event"

// TestAdmitChargesWhatAnswers: admission's decision (Admission.Stored, the
// budget a key's run is charged to) is what answers the run
// (EndpointMaterialized) in every state of a materialized endpoint: no
// table, a fresh one, a new version without one, an older version, a
// stale table, refresh direct; and never for an endpoint that is not
// materialized.
func TestAdmitChargesWhatAnswers(t *testing.T) {
	svc, c := admitEnv(t)
	ctx := context.Background()
	host := endpoint.Caller{Project: "1"}
	check := func(step, name string, version int, refresh string, want bool) {
		t.Helper()
		req := endpoint.RunRequest{Refresh: refresh}
		if version > 0 {
			req.Version = &version
		}
		adm, err := svc.Admit(ctx, endpoint.Budgets{}, host, endpoint.Ask{Act: endpoint.ActRun, Endpoint: name, Run: &req})
		require.NoError(t, err, "%s: Admit", step)
		res, err := svc.Run(ctx, "1", name, req)
		require.NoError(t, err, "%s: Run", step)
		if assert.Equal(t, want, adm.Stored, "%s, %s version %d: charged as stored %v, answered from the table %v; want %v (inline reason %q)", step, name, version, adm.Stored, res.EndpointMaterialized, want, res.InlineReason) {
			assert.Equal(t, want, res.EndpointMaterialized, "%s, %s version %d: charged as stored %v, answered from the table %v; want %v (inline reason %q)", step, name, version, adm.Stored, res.EndpointMaterialized, want, res.InlineReason)
		}
	}
	check("no table", "mat", 0, "", false)
	check("not materialized", "plain", 0, "", false)
	require.NoError(t, svc.Materialize(ctx, "1", "mat"), "Materialize")
	check("fresh table", "mat", 0, "", true)
	check("fresh table", "mat", 1, "", true)
	check("fresh table, force", "mat", 0, endpoint.RefreshForce, true)
	check("fresh table, direct", "mat", 0, endpoint.RefreshDirect, true)
	v2 := &endpoint.Query{Kind: endpoint.KindSQL, SQL: strings.Replace(matSQL, "count(*)", "count(1)", 1)}
	_, err := svc.Update(ctx, "1", "mat", endpoint.UpdateRequest{Query: v2})
	require.NoError(t, err, "Update")
	c.Advance(2 * time.Second) // past RecheckInterval: runs see version 2
	check("version 2 without a table", "mat", 0, "", false)
	check("version 2 without a table, direct", "mat", 0, endpoint.RefreshDirect, false)
	require.NoError(t, svc.Materialize(ctx, "1", "mat"), "Materialize")
	check("version 2's table", "mat", 0, "", true)
	check("version 2's table", "mat", 2, "", true)
	check("older version", "mat", 1, "", false)
	check("older version, direct", "mat", 1, endpoint.RefreshDirect, false)
	c.Advance(48 * time.Hour)
	check("stale table", "mat", 0, "", false)
}

// TestAdmitOrder: admission decides who, then what, then which record,
// then which budget: a caller refused for any of the first three is never
// charged (the token's rpm, the key's budget and the project's slot are
// not asked), and a refusal names its reason, not a budget.
func TestAdmitOrder(t *testing.T) {
	svc, c := admitEnv(t)
	ctx := context.Background()
	keys, err := apikey.New(apikey.Config{Store: memstore.NewKeyStore(), Now: c.Now})
	require.NoError(t, err)
	mk := func(project string, scopes ...string) *apikey.Key {
		k, _, err := keys.Create(ctx, project, apikey.CreateRequest{Name: "k", Scopes: scopes, RunsPerMinute: 1, MaterializedRunsPerMinute: 1})
		require.NoError(t, err, "Keys.Create")
		return &k
	}
	reader, writer, other := mk("1", apikey.ScopeEndpointRead), mk("1", apikey.ScopeEndpointWrite), mk("2", apikey.Scopes...)
	var rated, slots, released int
	b := endpoint.Budgets{
		Keys:      keys,
		TokenRate: func(context.Context, *embed.Claims) error { rated++; return nil },
		Slot:      func(string) (func(), error) { slots++; return func() { released++ }, nil },
	}
	run := func(name string, version int) endpoint.Ask {
		req := endpoint.RunRequest{}
		if version != 0 {
			req.Version = &version
		}
		return endpoint.Ask{Act: endpoint.ActRun, Endpoint: name, Run: &req}
	}
	token := &embed.Claims{Project: "1", Endpoints: []string{"plain"}, RPM: 1}
	refused := []struct {
		what   string
		caller endpoint.Caller
		ask    endpoint.Ask
		status int
		says   string
	}{
		{"a key of another project", endpoint.Caller{Project: "1", Key: other}, run("plain", 0), http.StatusForbidden, "project '1'"},
		{"a token of another project", endpoint.Caller{Project: "2", Token: token}, run("plain", 0), http.StatusForbidden, "project '2'"},
		{"a key without the scope", endpoint.Caller{Project: "1", Key: writer}, run("plain", 0), http.StatusForbidden, apikey.ScopeEndpointRead},
		{"a query without query:run", endpoint.Caller{Project: "1", Key: reader}, endpoint.Ask{Act: endpoint.ActQuery}, http.StatusForbidden, apikey.ScopeQueryRun},
		{"a refresh without endpoint:write", endpoint.Caller{Project: "1", Key: reader}, endpoint.Ask{Act: endpoint.ActRefresh, Endpoint: "mat"}, http.StatusForbidden, apikey.ScopeEndpointWrite},
		{"a token's query", endpoint.Caller{Project: "1", Token: token}, endpoint.Ask{Act: endpoint.ActQuery}, http.StatusForbidden, "embed token"},
		{"a token's refresh", endpoint.Caller{Project: "1", Token: token}, endpoint.Ask{Act: endpoint.ActRefresh, Endpoint: "plain"}, http.StatusForbidden, "embed token"},
		{"an endpoint the token does not name", endpoint.Caller{Project: "1", Token: token}, run("mat", 0), http.StatusForbidden, "'mat'"},
		{"an unknown endpoint", endpoint.Caller{Project: "1", Key: reader}, run("nothing", 0), http.StatusNotFound, "nothing"},
		{"an unknown version", endpoint.Caller{Project: "1", Key: reader}, run("plain", 9), http.StatusNotFound, "Version 9"},
		{"a version below 1", endpoint.Caller{Project: "1", Key: reader}, run("plain", -1), http.StatusBadRequest, "Version must be a positive integer"},
		{"refresh direct of an endpoint not materialized", endpoint.Caller{Project: "1", Key: reader},
			endpoint.Ask{Act: endpoint.ActRun, Endpoint: "plain", Run: &endpoint.RunRequest{Refresh: endpoint.RefreshDirect}}, http.StatusBadRequest, "direct"},
		{"a refresh of an endpoint not materialized", endpoint.Caller{Project: "1", Key: writer}, endpoint.Ask{Act: endpoint.ActRefresh, Endpoint: "plain"}, http.StatusBadRequest, "not materialized"},
		{"a refresh of an unknown endpoint", endpoint.Caller{Project: "1", Key: writer}, endpoint.Ask{Act: endpoint.ActRefresh, Endpoint: "nothing"}, http.StatusNotFound, "nothing"},
		{"a token's save", endpoint.Caller{Project: "1", Token: token}, endpoint.Ask{Act: endpoint.ActSave, Endpoint: "plain", Update: &endpoint.UpdateRequest{}}, http.StatusForbidden, "embed token"},
		{"a save without endpoint:write", endpoint.Caller{Project: "1", Key: reader}, endpoint.Ask{Act: endpoint.ActSave, Endpoint: "mat", Update: &endpoint.UpdateRequest{}}, http.StatusForbidden, apikey.ScopeEndpointWrite},
		{"an update of an unknown endpoint", endpoint.Caller{Project: "1", Key: writer}, endpoint.Ask{Act: endpoint.ActSave, Endpoint: "nothing", Update: &endpoint.UpdateRequest{}}, http.StatusNotFound, "nothing"},
		{"a fixed variable the endpoint lacks", endpoint.Caller{Project: "1", Token: &embed.Claims{Project: "1", Endpoints: []string{"plain"}, Fixed: map[string]any{"team": 1}}},
			run("plain", 0), http.StatusForbidden, "team"},
	}
	for _, r := range refused {
		_, err := svc.Admit(ctx, b, r.caller, r.ask)
		var e *endpoint.Error
		if !errors.As(err, &e) || e.Status != r.status || !strings.Contains(e.Detail, r.says) {
			t.Errorf("%s: Admit = %v, want a %d saying %q", r.what, err, r.status, r.says)
		}
	}
	require.Equal(t, 0, rated, "refused asks were charged: token rpm %d, project slots %d", rated, slots)
	require.Equal(t, 0, slots, "refused asks were charged: token rpm %d, project slots %d", rated, slots)
	// Nor the keys' budgets: each key's one run of the minute is there.
	for _, k := range []struct {
		key *apikey.Key
		ask endpoint.Ask
	}{{reader, run("plain", 0)}, {writer, endpoint.Ask{Act: endpoint.ActRefresh, Endpoint: "mat"}}} {
		adm, err := svc.Admit(ctx, b, endpoint.Caller{Project: "1", Key: k.key}, k.ask)
		require.NoError(t, err, "the first ask of the minute")
		assert.False(t, adm.Stored, "charged as stored: a run of an endpoint not materialized, a refresh")
		adm.Release()
		adm.Release()
	}
	if assert.Equal(t, 2, slots, "slots taken %d, given back %d; want 2 and 2 (Release twice gives back once)", slots, released) {
		assert.Equal(t, 2, released, "slots taken %d, given back %d; want 2 and 2 (Release twice gives back once)", slots, released)
	}
	// A save that starts no refresh costs nothing, whatever the budget.
	on := true
	for _, save := range []endpoint.Ask{
		{Act: endpoint.ActSave, Endpoint: "plain", Update: &endpoint.UpdateRequest{Description: new(string)}},
		{Act: endpoint.ActSave, Endpoint: "mat", Update: &endpoint.UpdateRequest{IsMaterialized: &on}},
		{Act: endpoint.ActSave, Endpoint: "made", Create: &endpoint.CreateRequest{Name: "made"}},
	} {
		_, err := svc.Admit(ctx, b, endpoint.Caller{Project: "1", Key: writer}, save)
		assert.NoError(t, err, "a save that starts no refresh")
	}
	assert.Equal(t, 2, slots, "saves that start no refresh took %d slots", slots-2)
	// A refresh took the writer's inline budget.
	_, err = svc.Admit(ctx, b, endpoint.Caller{Project: "1", Key: writer}, endpoint.Ask{Act: endpoint.ActRefresh, Endpoint: "mat"})
	var e *endpoint.Error
	if !errors.As(err, &e) || e.Status != http.StatusTooManyRequests || e.Limit != apikey.LimitRunsPerMinute {
		t.Errorf("a second refresh in the minute: %v, want a 429 of %s", err, apikey.LimitRunsPerMinute)
	}
	// A token's run is counted against its rpm, and carries its
	// credentials, whatever the request held.
	req := endpoint.RunRequest{KeyID: "forged", Fixed: map[string]any{"x": 1}}
	if _, err := svc.Admit(ctx, b, endpoint.Caller{Project: "1", Token: token}, endpoint.Ask{Act: endpoint.ActRun, Endpoint: "plain", Run: &req}); err != nil {
		t.Fatalf("a token's run: %v", err)
	}
	if rated != 1 || req.Token != token || req.KeyID != "" || req.Fixed != nil {
		t.Errorf("a token's run: rpm counted %d, request token %v key %q fixed %v; want 1, the token, none, none", rated, req.Token, req.KeyID, req.Fixed)
	}
}
