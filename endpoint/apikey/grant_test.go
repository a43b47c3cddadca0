package apikey_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/apikey"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// wantForbidden fails t unless err is a 403 forbidden *endpoint.Error
// whose Attr is attr and whose Detail contains each of subs.
func wantForbidden(t *testing.T, err error, attr string, subs ...string) {
	t.Helper()
	var e *endpoint.Error
	require.ErrorAs(t, err, &e)
	if e.Status != http.StatusForbidden || e.Code != endpoint.CodeForbidden || e.Attr != attr {
		t.Fatalf("got error {%d %s %q attr %q}, want {403 forbidden attr %q}", e.Status, e.Code, e.Detail, e.Attr, attr)
	}
	for _, sub := range subs {
		assert.Contains(t, e.Detail, sub, "detail")
	}
}

// boundedAdmin is the request of a key:admin key limited to endpoints a
// and b, whose budgets are 1, 10, 2 and 20.
var boundedAdmin = apikey.CreateRequest{Name: "admin", Scopes: []string{apikey.ScopeKeyAdmin, apikey.ScopeEndpointRead},
	Endpoints: []string{"a", "b"}, RunsPerMinute: 1, RunsPerHour: 10, MaterializedRunsPerMinute: 2, MaterializedRunsPerHour: 20}

// narrower returns a request within boundedAdmin, changed by edit.
func narrower(edit func(r *apikey.CreateRequest)) apikey.CreateRequest {
	r := apikey.CreateRequest{Name: "made", Scopes: []string{apikey.ScopeEndpointRead}, Endpoints: []string{"a"},
		RunsPerMinute: 1, RunsPerHour: 10, MaterializedRunsPerMinute: 2, MaterializedRunsPerHour: 20}
	if edit != nil {
		edit(&r)
	}
	return r
}

// adminKeys returns Keys on a key store of their own, and boundedAdmin,
// a key they made, with its secret.
func adminKeys(t *testing.T) (*apikey.Keys, apikey.Key, string) {
	t.Helper()
	keys := newTestKeys(t, memstore.NewKeyStore(), keyClock(), apikey.Config{})
	admin, secret, err := keys.Create(context.Background(), "1", boundedAdmin)
	require.NoError(t, err)
	return keys, admin, secret
}

// TestKeyCreateAsNeverWidens: a key creates no key with a scope or an
// endpoint it lacks, nor with a larger budget, of any of the four; a
// budget of 0 counts as the host's default (240 per minute here), -1 as
// more than any number. Each refusal is a 403 naming the field and what
// the key has; a key within it is made; the host (no Grant) gives
// anything.
func TestKeyCreateAsNeverWidens(t *testing.T) {
	ctx := context.Background()
	keys, admin, _ := adminKeys(t)
	by := admin.Grant()
	for _, c := range []struct {
		name string
		edit func(r *apikey.CreateRequest)
		attr string
		subs []string
	}{
		{"scope", func(r *apikey.CreateRequest) { r.Scopes = []string{apikey.ScopeEndpointWrite} }, "scopes", []string{"'endpoint:write'"}},
		{"every endpoint", func(r *apikey.CreateRequest) { r.Endpoints = nil }, "endpoints", []string{"limited to named endpoints"}},
		{"another endpoint", func(r *apikey.CreateRequest) { r.Endpoints = []string{"a", "c"} }, "endpoints", []string{"'c'"}},
		{"runs_per_minute", func(r *apikey.CreateRequest) { r.RunsPerMinute = 2 }, "runs_per_minute",
			[]string{"This API key may start 1 run answered inline per minute (runs_per_minute 1); the key it creates may not allow more (runs_per_minute 2)."}},
		{"runs_per_minute none", func(r *apikey.CreateRequest) { r.RunsPerMinute = -1 }, "runs_per_minute",
			[]string{"This API key may start 1 run answered inline per minute (runs_per_minute 1); the key it creates may not allow more (runs_per_minute -1 = no limit)."}},
		{"runs_per_minute default", func(r *apikey.CreateRequest) { r.RunsPerMinute = 0 }, "runs_per_minute",
			[]string{"(runs_per_minute 0 = the host's default, 240)"}},
		{"runs_per_hour", func(r *apikey.CreateRequest) { r.RunsPerHour = 11 }, "runs_per_hour", []string{"10 runs answered inline per hour"}},
		{"runs_per_hour none", func(r *apikey.CreateRequest) { r.RunsPerHour = -1 }, "runs_per_hour", []string{"runs_per_hour -1 = no limit"}},
		{"runs_per_hour default", func(r *apikey.CreateRequest) { r.RunsPerHour = 0 }, "runs_per_hour", []string{"runs_per_hour 0 = the host's default, 2400"}},
		{"materialized_runs_per_minute", func(r *apikey.CreateRequest) { r.MaterializedRunsPerMinute = 3 }, "materialized_runs_per_minute",
			[]string{"2 runs of materialized endpoints per minute"}},
		{"materialized_runs_per_minute none", func(r *apikey.CreateRequest) { r.MaterializedRunsPerMinute = -1 }, "materialized_runs_per_minute", []string{"-1 = no limit"}},
		{"materialized_runs_per_minute default", func(r *apikey.CreateRequest) { r.MaterializedRunsPerMinute = 0 }, "materialized_runs_per_minute", []string{"the host's default, 1200"}},
		{"materialized_runs_per_hour", func(r *apikey.CreateRequest) { r.MaterializedRunsPerHour = 21 }, "materialized_runs_per_hour", []string{"20 runs of materialized endpoints per hour"}},
		{"materialized_runs_per_hour none", func(r *apikey.CreateRequest) { r.MaterializedRunsPerHour = -1 }, "materialized_runs_per_hour", []string{"-1 = no limit"}},
		{"materialized_runs_per_hour default", func(r *apikey.CreateRequest) { r.MaterializedRunsPerHour = 0 }, "materialized_runs_per_hour", []string{"the host's default, 12000"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, secret, err := keys.CreateAs(ctx, &by, "1", narrower(c.edit))
			wantForbidden(t, err, c.attr, c.subs...)
			assert.Equal(t, "", secret, "a refused key has a secret")
		})
	}
	list, err := keys.List(ctx, "1")
	require.NoError(t, err)
	require.Len(t, list, 1)

	// Within it: the same, or less of each.
	for name, edit := range map[string]func(r *apikey.CreateRequest){
		"the same": func(r *apikey.CreateRequest) {
			r.Scopes, r.Endpoints = boundedAdmin.Scopes, boundedAdmin.Endpoints
		},
		"less": func(r *apikey.CreateRequest) {
			r.RunsPerMinute, r.RunsPerHour, r.MaterializedRunsPerMinute, r.MaterializedRunsPerHour = 1, 5, 1, 7
		},
	} {
		k, _, err := keys.CreateAs(ctx, &by, "1", narrower(edit))
		require.NoError(t, err, "%s", name)
		if k.RunsPerMinute != 1 || k.RunsPerHour > 10 || k.MaterializedRunsPerMinute > 2 || k.MaterializedRunsPerHour > 20 {
			t.Errorf("%s: made %+v", name, k)
		}
	}

	// A key without budgets gives the host's defaults (0) and none (-1);
	// the host gives anything.
	free, _, err := keys.Create(ctx, "1", apikey.CreateRequest{Name: "free", Scopes: []string{apikey.ScopeKeyAdmin, apikey.ScopeEndpointRead},
		RunsPerMinute: -1, RunsPerHour: -1, MaterializedRunsPerMinute: -1, MaterializedRunsPerHour: -1})
	require.NoError(t, err)
	fg := free.Grant()
	for _, v := range []int{0, -1} {
		_, _, err := keys.CreateAs(ctx, &fg, "1", apikey.CreateRequest{Name: "x", Scopes: []string{apikey.ScopeEndpointRead},
			RunsPerMinute: v, RunsPerHour: v, MaterializedRunsPerMinute: v, MaterializedRunsPerHour: v})
		assert.NoError(t, err, "budgets %d from a key without budgets", v)
	}
	if _, _, err := keys.CreateAs(ctx, nil, "1", apikey.CreateRequest{Name: "host", Scopes: apikey.Scopes, RunsPerMinute: -1}); err != nil {
		t.Errorf("the host: unexpected error: %v", err)
	}
	// An invalid request is the 400 of Create, not a refusal.
	_, _, err = keys.CreateAs(ctx, &by, "1", narrower(func(r *apikey.CreateRequest) { r.Scopes = []string{"endpoint:delete"} }))
	var e *endpoint.Error
	if !errors.As(err, &e) || e.Status != http.StatusBadRequest || e.Attr != "scopes" {
		t.Errorf("unknown scope: got %v, want a 400 naming scopes", err)
	}
}

// TestKeyRevokeAsNeverWidens: a key revokes no live key that has a scope,
// an endpoint or a budget it lacks (403 naming it, and the key still
// works), and revokes a narrower one (and itself); the host revokes any.
func TestKeyRevokeAsNeverWidens(t *testing.T) {
	ctx := context.Background()
	keys, admin, adminSecret := adminKeys(t)
	by := admin.Grant()
	mk := func(req apikey.CreateRequest) (apikey.Key, string) {
		t.Helper()
		k, secret, err := keys.Create(ctx, "1", req)
		require.NoError(t, err)
		return k, secret
	}
	for _, c := range []struct {
		name string
		edit func(r *apikey.CreateRequest)
		attr string
		sub  string
	}{
		{"every endpoint", func(r *apikey.CreateRequest) { r.Endpoints = nil }, "endpoints", "the key it revokes may not use every endpoint"},
		{"another endpoint", func(r *apikey.CreateRequest) { r.Endpoints = []string{"c"} }, "endpoints", "'c'"},
		{"scope", func(r *apikey.CreateRequest) { r.Scopes = []string{apikey.ScopeQueryRun} }, "scopes", "'query:run'"},
		{"runs_per_minute", func(r *apikey.CreateRequest) { r.RunsPerMinute = -1 }, "runs_per_minute", "the key it revokes may not allow more (runs_per_minute -1 = no limit)"},
		{"runs_per_hour", func(r *apikey.CreateRequest) { r.RunsPerHour = 0 }, "runs_per_hour", "(runs_per_hour 2400)"},
		{"materialized_runs_per_minute", func(r *apikey.CreateRequest) { r.MaterializedRunsPerMinute = 3 }, "materialized_runs_per_minute", "(materialized_runs_per_minute 3)"},
		{"materialized_runs_per_hour", func(r *apikey.CreateRequest) { r.MaterializedRunsPerHour = 21 }, "materialized_runs_per_hour", "(materialized_runs_per_hour 21)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			wide, secret := mk(narrower(c.edit))
			wantForbidden(t, keys.RevokeAs(ctx, &by, "1", wide.ID), c.attr, c.sub)
			_, err := keys.Authenticate(ctx, secret)
			assert.NoError(t, err, "the wider key was revoked")
			// The host revokes it.
			require.NoError(t, keys.RevokeAs(ctx, nil, "1", wide.ID))
			if _, err := keys.Authenticate(ctx, secret); !errors.Is(err, endpoint.ErrUnauthorized) {
				t.Errorf("Authenticate after the host's revocation: %v, want ErrUnauthorized", err)
			}
			// Revoked already: nothing to refuse.
			assert.NoError(t, keys.RevokeAs(ctx, &by, "1", wide.ID), "revoking a revoked key")
		})
	}
	narrow, secret := mk(narrower(nil))
	require.NoError(t, keys.RevokeAs(ctx, &by, "1", narrow.ID), "a narrower key")
	if _, err := keys.Authenticate(ctx, secret); !errors.Is(err, endpoint.ErrUnauthorized) {
		t.Errorf("Authenticate after revocation: %v, want ErrUnauthorized", err)
	}
	var e *endpoint.Error
	if err := keys.RevokeAs(ctx, &by, "1", "99999999-9999-4999-8999-999999999999"); !errors.As(err, &e) || e.Status != http.StatusNotFound {
		t.Errorf("an unknown key: got %v, want 404", err)
	}
	require.NoError(t, keys.RevokeAs(ctx, &by, "1", admin.ID), "itself")
	if _, err := keys.Authenticate(ctx, adminSecret); !errors.Is(err, endpoint.ErrUnauthorized) {
		t.Errorf("Authenticate after revoking itself: %v, want ErrUnauthorized", err)
	}
}
