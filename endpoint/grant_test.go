package endpoint_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/embed"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
)

// wantForbidden fails t unless err is a 403 forbidden *endpoint.Error
// whose Attr is attr and whose Detail contains each of subs.
func wantForbidden(t *testing.T, err error, attr string, subs ...string) {
	t.Helper()
	var e *endpoint.Error
	if !errors.As(err, &e) {
		t.Fatalf("got error %v (%T), want a 403 *endpoint.Error", err, err)
	}
	if e.Status != http.StatusForbidden || e.Code != endpoint.CodeForbidden || e.Attr != attr {
		t.Fatalf("got error {%d %s %q attr %q}, want {403 forbidden attr %q}", e.Status, e.Code, e.Detail, e.Attr, attr)
	}
	for _, sub := range subs {
		if !strings.Contains(e.Detail, sub) {
			t.Errorf("detail %q does not contain %q", e.Detail, sub)
		}
	}
}

// boundedAdmin is the request of a key:admin key limited to endpoints a
// and b, whose budgets are 1, 10, 2 and 20.
var boundedAdmin = endpoint.CreateKeyRequest{Name: "admin", Scopes: []string{endpoint.ScopeKeyAdmin, endpoint.ScopeEndpointRead},
	Endpoints: []string{"a", "b"}, RunsPerMinute: 1, RunsPerHour: 10, MaterializedRunsPerMinute: 2, MaterializedRunsPerHour: 20}

// narrower returns a request within boundedAdmin, changed by edit.
func narrower(edit func(r *endpoint.CreateKeyRequest)) endpoint.CreateKeyRequest {
	r := endpoint.CreateKeyRequest{Name: "made", Scopes: []string{endpoint.ScopeEndpointRead}, Endpoints: []string{"a"},
		RunsPerMinute: 1, RunsPerHour: 10, MaterializedRunsPerMinute: 2, MaterializedRunsPerHour: 20}
	if edit != nil {
		edit(&r)
	}
	return r
}

// TestKeyCreateAsNeverWidens: a key creates no key with a scope or an
// endpoint it lacks, nor with a larger budget, of any of the four; a
// budget of 0 counts as the host's default (240 per minute here), -1 as
// more than any number. Each refusal is a 403 naming the field and what
// the key has; a key within it is made; the host (no Grant) gives
// anything.
func TestKeyCreateAsNeverWidens(t *testing.T) {
	ctx := context.Background()
	keys := newTestKeys(t, memstore.NewKeyStore(), &keyClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}, endpoint.KeysConfig{})
	admin, _, err := keys.Create(ctx, "1", boundedAdmin)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	by := admin.Grant()
	for _, c := range []struct {
		name string
		edit func(r *endpoint.CreateKeyRequest)
		attr string
		subs []string
	}{
		{"scope", func(r *endpoint.CreateKeyRequest) { r.Scopes = []string{endpoint.ScopeEndpointWrite} }, "scopes", []string{"'endpoint:write'"}},
		{"every endpoint", func(r *endpoint.CreateKeyRequest) { r.Endpoints = nil }, "endpoints", []string{"limited to named endpoints"}},
		{"another endpoint", func(r *endpoint.CreateKeyRequest) { r.Endpoints = []string{"a", "c"} }, "endpoints", []string{"'c'"}},
		{"runs_per_minute", func(r *endpoint.CreateKeyRequest) { r.RunsPerMinute = 2 }, "runs_per_minute",
			[]string{"This API key may start 1 run answered inline per minute (runs_per_minute 1); the key it creates may not allow more (runs_per_minute 2)."}},
		{"runs_per_minute none", func(r *endpoint.CreateKeyRequest) { r.RunsPerMinute = -1 }, "runs_per_minute",
			[]string{"This API key may start 1 run answered inline per minute (runs_per_minute 1); the key it creates may not allow more (runs_per_minute -1 = no limit)."}},
		{"runs_per_minute default", func(r *endpoint.CreateKeyRequest) { r.RunsPerMinute = 0 }, "runs_per_minute",
			[]string{"(runs_per_minute 0 = the host's default, 240)"}},
		{"runs_per_hour", func(r *endpoint.CreateKeyRequest) { r.RunsPerHour = 11 }, "runs_per_hour", []string{"10 runs answered inline per hour"}},
		{"runs_per_hour none", func(r *endpoint.CreateKeyRequest) { r.RunsPerHour = -1 }, "runs_per_hour", []string{"runs_per_hour -1 = no limit"}},
		{"runs_per_hour default", func(r *endpoint.CreateKeyRequest) { r.RunsPerHour = 0 }, "runs_per_hour", []string{"runs_per_hour 0 = the host's default, 2400"}},
		{"materialized_runs_per_minute", func(r *endpoint.CreateKeyRequest) { r.MaterializedRunsPerMinute = 3 }, "materialized_runs_per_minute",
			[]string{"2 runs of materialized endpoints per minute"}},
		{"materialized_runs_per_minute none", func(r *endpoint.CreateKeyRequest) { r.MaterializedRunsPerMinute = -1 }, "materialized_runs_per_minute", []string{"-1 = no limit"}},
		{"materialized_runs_per_minute default", func(r *endpoint.CreateKeyRequest) { r.MaterializedRunsPerMinute = 0 }, "materialized_runs_per_minute", []string{"the host's default, 1200"}},
		{"materialized_runs_per_hour", func(r *endpoint.CreateKeyRequest) { r.MaterializedRunsPerHour = 21 }, "materialized_runs_per_hour", []string{"20 runs of materialized endpoints per hour"}},
		{"materialized_runs_per_hour none", func(r *endpoint.CreateKeyRequest) { r.MaterializedRunsPerHour = -1 }, "materialized_runs_per_hour", []string{"-1 = no limit"}},
		{"materialized_runs_per_hour default", func(r *endpoint.CreateKeyRequest) { r.MaterializedRunsPerHour = 0 }, "materialized_runs_per_hour", []string{"the host's default, 12000"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, secret, err := keys.CreateAs(ctx, &by, "1", narrower(c.edit))
			wantForbidden(t, err, c.attr, c.subs...)
			if secret != "" {
				t.Errorf("a refused key has a secret: %q", secret)
			}
		})
	}
	list, err := keys.List(ctx, "1")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got, want := len(list), 1; got != want {
		t.Fatalf("len(list) = %d, want %d: refused keys were stored: %+v", got, want, list)
	}

	// Within it: the same, or less of each.
	for name, edit := range map[string]func(r *endpoint.CreateKeyRequest){
		"the same": func(r *endpoint.CreateKeyRequest) {
			r.Scopes, r.Endpoints = boundedAdmin.Scopes, boundedAdmin.Endpoints
		},
		"less": func(r *endpoint.CreateKeyRequest) {
			r.RunsPerMinute, r.RunsPerHour, r.MaterializedRunsPerMinute, r.MaterializedRunsPerHour = 1, 5, 1, 7
		},
	} {
		k, _, err := keys.CreateAs(ctx, &by, "1", narrower(edit))
		if err != nil {
			t.Fatalf("%s: unexpected error: %v", name, err)
		}
		if k.RunsPerMinute != 1 || k.RunsPerHour > 10 || k.MaterializedRunsPerMinute > 2 || k.MaterializedRunsPerHour > 20 {
			t.Errorf("%s: made %+v", name, k)
		}
	}

	// A key without budgets gives the host's defaults (0) and none (-1);
	// the host gives anything.
	free, _, err := keys.Create(ctx, "1", endpoint.CreateKeyRequest{Name: "free", Scopes: []string{endpoint.ScopeKeyAdmin, endpoint.ScopeEndpointRead},
		RunsPerMinute: -1, RunsPerHour: -1, MaterializedRunsPerMinute: -1, MaterializedRunsPerHour: -1})
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	fg := free.Grant()
	for _, v := range []int{0, -1} {
		if _, _, err := keys.CreateAs(ctx, &fg, "1", endpoint.CreateKeyRequest{Name: "x", Scopes: []string{endpoint.ScopeEndpointRead},
			RunsPerMinute: v, RunsPerHour: v, MaterializedRunsPerMinute: v, MaterializedRunsPerHour: v}); err != nil {
			t.Errorf("budgets %d from a key without budgets: unexpected error: %v", v, err)
		}
	}
	if _, _, err := keys.CreateAs(ctx, nil, "1", endpoint.CreateKeyRequest{Name: "host", Scopes: endpoint.Scopes, RunsPerMinute: -1}); err != nil {
		t.Errorf("the host: unexpected error: %v", err)
	}
	// An invalid request is the 400 of Create, not a refusal.
	_, _, err = keys.CreateAs(ctx, &by, "1", narrower(func(r *endpoint.CreateKeyRequest) { r.Scopes = []string{"endpoint:delete"} }))
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
	keys := newTestKeys(t, memstore.NewKeyStore(), &keyClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}, endpoint.KeysConfig{})
	admin, adminSecret, err := keys.Create(ctx, "1", boundedAdmin)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	by := admin.Grant()
	mk := func(req endpoint.CreateKeyRequest) (endpoint.Key, string) {
		t.Helper()
		k, secret, err := keys.Create(ctx, "1", req)
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return k, secret
	}
	for _, c := range []struct {
		name string
		edit func(r *endpoint.CreateKeyRequest)
		attr string
		sub  string
	}{
		{"every endpoint", func(r *endpoint.CreateKeyRequest) { r.Endpoints = nil }, "endpoints", "the key it revokes may not use every endpoint"},
		{"another endpoint", func(r *endpoint.CreateKeyRequest) { r.Endpoints = []string{"c"} }, "endpoints", "'c'"},
		{"scope", func(r *endpoint.CreateKeyRequest) { r.Scopes = []string{endpoint.ScopeQueryRun} }, "scopes", "'query:run'"},
		{"runs_per_minute", func(r *endpoint.CreateKeyRequest) { r.RunsPerMinute = -1 }, "runs_per_minute", "the key it revokes may not allow more (runs_per_minute -1 = no limit)"},
		{"runs_per_hour", func(r *endpoint.CreateKeyRequest) { r.RunsPerHour = 0 }, "runs_per_hour", "(runs_per_hour 2400)"},
		{"materialized_runs_per_minute", func(r *endpoint.CreateKeyRequest) { r.MaterializedRunsPerMinute = 3 }, "materialized_runs_per_minute", "(materialized_runs_per_minute 3)"},
		{"materialized_runs_per_hour", func(r *endpoint.CreateKeyRequest) { r.MaterializedRunsPerHour = 21 }, "materialized_runs_per_hour", "(materialized_runs_per_hour 21)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			wide, secret := mk(narrower(c.edit))
			wantForbidden(t, keys.RevokeAs(ctx, &by, "1", wide.ID), c.attr, c.sub)
			if _, err := keys.Authenticate(ctx, secret); err != nil {
				t.Errorf("the wider key was revoked: %v", err)
			}
			// The host revokes it.
			if err := keys.RevokeAs(ctx, nil, "1", wide.ID); err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if _, err := keys.Authenticate(ctx, secret); !errors.Is(err, endpoint.ErrUnauthorized) {
				t.Errorf("Authenticate after the host's revocation: %v, want ErrUnauthorized", err)
			}
			// Revoked already: nothing to refuse.
			if err := keys.RevokeAs(ctx, &by, "1", wide.ID); err != nil {
				t.Errorf("revoking a revoked key: unexpected error: %v", err)
			}
		})
	}
	narrow, secret := mk(narrower(nil))
	if err := keys.RevokeAs(ctx, &by, "1", narrow.ID); err != nil {
		t.Fatalf("a narrower key: unexpected error: %v", err)
	}
	if _, err := keys.Authenticate(ctx, secret); !errors.Is(err, endpoint.ErrUnauthorized) {
		t.Errorf("Authenticate after revocation: %v, want ErrUnauthorized", err)
	}
	var e *endpoint.Error
	if err := keys.RevokeAs(ctx, &by, "1", "99999999-9999-4999-8999-999999999999"); !errors.As(err, &e) || e.Status != http.StatusNotFound {
		t.Errorf("an unknown key: got %v, want 404", err)
	}
	if err := keys.RevokeAs(ctx, &by, "1", admin.ID); err != nil {
		t.Fatalf("itself: unexpected error: %v", err)
	}
	if _, err := keys.Authenticate(ctx, adminSecret); !errors.Is(err, endpoint.ErrUnauthorized) {
		t.Errorf("Authenticate after revoking itself: %v, want ErrUnauthorized", err)
	}
}

// TestMintEmbedTokenAsNeverWidens: a token minted on behalf of a credential
// runs only endpoints it may use, needs its scope endpoint:read, fixes
// every variable it fixes to the same value, and carries an rpm within
// its per-minute budgets (inline and materialized) and, 60 times over,
// its per-hour ones; one asked without rpm gets the credential's bound,
// never none. The host (no Grant) mints any.
func TestMintEmbedTokenAsNeverWidens(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	for _, name := range []string{"a", "b"} {
		e.create(t, name, e.query("SELECT id FROM orders WHERE country = {variables.country} AND plan = {variables.plan}", "country", "plan"))
	}
	tk := &embed.StaticKeys{}
	if err := tk.Add("", "k", []byte(strings.Repeat("s", 32))); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	signer := &embed.Signer{Keys: tk}
	keyGrant := func(scopes []string, endpoints []string, rpm, rph, mrpm, mrph int) *endpoint.Grant {
		k := endpoint.Key{Scopes: scopes, Endpoints: endpoints, RunsPerMinute: rpm, RunsPerHour: rph, MaterializedRunsPerMinute: mrpm, MaterializedRunsPerHour: mrph}
		g := k.Grant()
		return &g
	}
	read := []string{endpoint.ScopeKeyAdmin, endpoint.ScopeEndpointRead}
	mint := func(by *endpoint.Grant, c embed.Claims) (embed.Claims, error) {
		token, minted, err := e.svc.MintEmbedTokenAs(ctx, signer, "1", by, c, time.Hour)
		if err != nil {
			return minted, err
		}
		got, err := signer.Verify(token, "1")
		if err != nil {
			t.Fatalf("the minted token does not verify: %v", err)
		}
		if got.RPM != minted.RPM {
			t.Fatalf("the token carries rpm %d, the answer says %d", got.RPM, minted.RPM)
		}
		return *got, nil
	}
	oneEndpoint := keyGrant(read, []string{"a"}, 1, 1000, 1000, 1000)
	for _, c := range []struct {
		name   string
		by     *endpoint.Grant
		claims embed.Claims
		attr   string
		sub    string
	}{
		{"another endpoint", oneEndpoint, embed.Claims{Endpoints: []string{"a", "b"}, RPM: 1}, "endpoints", "'b'"},
		{"no endpoint:read", keyGrant([]string{endpoint.ScopeKeyAdmin}, nil, -1, -1, -1, -1), embed.Claims{Endpoints: []string{"a"}}, "endpoints", "'endpoint:read'"},
		{"rpm", oneEndpoint, embed.Claims{Endpoints: []string{"a"}, RPM: 2}, "rpm", "This API key may start 1 run answered inline per minute (runs_per_minute 1); the embed token it mints may not allow more (rpm 2)."},
		{"rpm over materialized_runs_per_minute", keyGrant(read, nil, -1, -1, 3, -1), embed.Claims{Endpoints: []string{"a"}, RPM: 4}, "rpm", "(materialized_runs_per_minute 3)"},
		{"rpm over runs_per_hour", keyGrant(read, nil, -1, 120, -1, -1), embed.Claims{Endpoints: []string{"a"}, RPM: 3}, "rpm", "(rpm 3 = 180 runs per hour)"},
		{"rpm over materialized_runs_per_hour", keyGrant(read, nil, -1, -1, -1, 60), embed.Claims{Endpoints: []string{"a"}, RPM: 2}, "rpm", "materialized_runs_per_hour 60"},
		{"an hour under 60 runs", keyGrant(read, nil, -1, 59, -1, -1), embed.Claims{Endpoints: []string{"a"}}, "rpm", "(rpm 1 = 60 runs per hour)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := mint(c.by, c.claims)
			wantForbidden(t, err, c.attr, c.sub)
		})
	}
	// Within it; without rpm, the bound of the key.
	for _, c := range []struct {
		by      *endpoint.Grant
		claims  embed.Claims
		wantRPM int
	}{
		{oneEndpoint, embed.Claims{Endpoints: []string{"a"}, RPM: 1}, 1},
		{oneEndpoint, embed.Claims{Endpoints: []string{"a"}}, 1},
		{keyGrant(read, nil, 240, 2400, 1200, 12000), embed.Claims{Endpoints: []string{"a", "b"}}, 40},
		{keyGrant(read, nil, 240, 2400, 1200, 12000), embed.Claims{Endpoints: []string{"a", "b"}, RPM: 40}, 40},
		{keyGrant(read, nil, -1, -1, 7, -1), embed.Claims{Endpoints: []string{"a"}}, 7},
		{keyGrant(read, nil, -1, -1, -1, -1), embed.Claims{Endpoints: []string{"a"}}, 0},
		{nil, embed.Claims{Endpoints: []string{"a", "b"}}, 0},
		{nil, embed.Claims{Endpoints: []string{"a", "b"}, RPM: embed.MaxRPM}, embed.MaxRPM},
	} {
		got, err := mint(c.by, c.claims)
		if err != nil {
			t.Fatalf("%+v: unexpected error: %v", c.claims, err)
		}
		if got.RPM != c.wantRPM {
			t.Errorf("%+v from %+v: rpm %d, want %d", c.claims, c.by, got.RPM, c.wantRPM)
		}
	}

	// Fixed variables: a token's Grant (a host that lets a token ask for a
	// narrower one) gives only tokens that fix what it fixes, alike.
	parent := endpoint.TokenGrant(embed.Claims{Endpoints: []string{"a"}, Fixed: map[string]any{"country": "US"}, RPM: 5})
	for name, fixed := range map[string]map[string]any{
		"not fixed":       nil,
		"another value":   {"country": "DE"},
		"another name":    {"plan": "pro"},
		"another spelled": {"Country": "US"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := mint(&parent, embed.Claims{Endpoints: []string{"a"}, Fixed: fixed, RPM: 5})
			wantForbidden(t, err, "fixed", "fixes variable 'country'")
		})
	}
	got, err := mint(&parent, embed.Claims{Endpoints: []string{"a"}, Fixed: map[string]any{"country": "US", "plan": "pro"}})
	if err != nil {
		t.Fatalf("a narrower token: unexpected error: %v", err)
	}
	if got.RPM != 5 || got.Fixed["country"] != "US" {
		t.Errorf("a narrower token: %+v", got)
	}
	_, err = mint(&parent, embed.Claims{Endpoints: []string{"a"}, Fixed: map[string]any{"country": "US"}, RPM: 6})
	wantForbidden(t, err, "rpm", "(rpm 6)")
	_, err = mint(&parent, embed.Claims{Endpoints: []string{"b"}, Fixed: map[string]any{"country": "US"}})
	wantForbidden(t, err, "endpoints", "This embed token may not use endpoint 'b'")

	// A bad rpm is a 400 before any grant.
	_, err = mint(oneEndpoint, embed.Claims{Endpoints: []string{"a"}, RPM: -1})
	var ee *endpoint.Error
	if !errors.As(err, &ee) || ee.Status != http.StatusBadRequest || ee.Attr != "rpm" {
		t.Errorf("rpm -1: got %v, want a 400 naming rpm", err)
	}
}
