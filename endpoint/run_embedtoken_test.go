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
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// requireForbidden requires err to be a 403 *endpoint.Error about attr
// whose detail holds each of subs.
func requireForbidden(t *testing.T, err error, attr string, subs ...string) {
	t.Helper()
	var e *endpoint.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, http.StatusForbidden, e.Status, e.Detail)
	require.Equal(t, endpoint.CodeForbidden, e.Code, e.Detail)
	require.Equal(t, attr, e.Attr, e.Detail)
	for _, sub := range subs {
		assert.Contains(t, e.Detail, sub)
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
	require.NoError(t, tk.Add("", "k", []byte(strings.Repeat("s", 32))))
	signer := &embed.Signer{Keys: tk}
	keyGrant := func(scopes []string, endpoints []string, rpm, rph, mrpm, mrph int) *apikey.Grant {
		k := apikey.Key{Scopes: scopes, Endpoints: endpoints, RunsPerMinute: rpm, RunsPerHour: rph, MaterializedRunsPerMinute: mrpm, MaterializedRunsPerHour: mrph}
		g := k.Grant()
		return &g
	}
	read := []string{apikey.ScopeKeyAdmin, apikey.ScopeEndpointRead}
	mint := func(by *apikey.Grant, c embed.Claims) (embed.Claims, error) {
		token, minted, err := e.svc.MintEmbedTokenAs(ctx, signer, "1", by, c, time.Hour)
		if err != nil {
			return minted, err
		}
		got, err := signer.Verify(token, "1")
		require.NoError(t, err, "the minted token does not verify")
		require.Equal(t, minted.RPM, got.RPM, "the token carries rpm")
		return *got, nil
	}
	oneEndpoint := keyGrant(read, []string{"a"}, 1, 1000, 1000, 1000)
	for _, c := range []struct {
		name   string
		by     *apikey.Grant
		claims embed.Claims
		attr   string
		sub    string
	}{
		{"another endpoint", oneEndpoint, embed.Claims{Endpoints: []string{"a", "b"}, RPM: 1}, "endpoints", "'b'"},
		{"no endpoint:read", keyGrant([]string{apikey.ScopeKeyAdmin}, nil, -1, -1, -1, -1), embed.Claims{Endpoints: []string{"a"}}, "endpoints", "'endpoint:read'"},
		{"rpm", oneEndpoint, embed.Claims{Endpoints: []string{"a"}, RPM: 2}, "rpm", "This API key may start 1 run answered inline per minute (runs_per_minute 1); the embed token it mints may not allow more (rpm 2)."},
		{"rpm over materialized_runs_per_minute", keyGrant(read, nil, -1, -1, 3, -1), embed.Claims{Endpoints: []string{"a"}, RPM: 4}, "rpm", "(materialized_runs_per_minute 3)"},
		{"rpm over runs_per_hour", keyGrant(read, nil, -1, 120, -1, -1), embed.Claims{Endpoints: []string{"a"}, RPM: 3}, "rpm", "(rpm 3 = 180 runs per hour)"},
		{"rpm over materialized_runs_per_hour", keyGrant(read, nil, -1, -1, -1, 60), embed.Claims{Endpoints: []string{"a"}, RPM: 2}, "rpm", "materialized_runs_per_hour 60"},
		{"an hour under 60 runs", keyGrant(read, nil, -1, 59, -1, -1), embed.Claims{Endpoints: []string{"a"}}, "rpm", "(rpm 1 = 60 runs per hour)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := mint(c.by, c.claims)
			requireForbidden(t, err, c.attr, c.sub)
		})
	}
	// Within it; without rpm, the bound of the key.
	for _, c := range []struct {
		by      *apikey.Grant
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
		require.NoError(t, err, "%+v", c.claims)
		assert.Equal(t, c.wantRPM, got.RPM, "%+v from %+v: rpm", c.claims, c.by)
	}

	// Fixed variables: a token's Grant (a host that lets a token ask for a
	// narrower one) gives only tokens that fix what it fixes, alike.
	parent := apikey.TokenGrant(embed.Claims{Endpoints: []string{"a"}, Fixed: map[string]any{"country": "US"}, RPM: 5})
	for name, fixed := range map[string]map[string]any{
		"not fixed":       nil,
		"another value":   {"country": "DE"},
		"another name":    {"plan": "pro"},
		"another spelled": {"Country": "US"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := mint(&parent, embed.Claims{Endpoints: []string{"a"}, Fixed: fixed, RPM: 5})
			requireForbidden(t, err, "fixed", "fixes variable 'country'")
		})
	}
	got, err := mint(&parent, embed.Claims{Endpoints: []string{"a"}, Fixed: map[string]any{"country": "US", "plan": "pro"}})
	require.NoError(t, err, "a narrower token")
	if got.RPM != 5 || got.Fixed["country"] != "US" {
		t.Errorf("a narrower token: %+v", got)
	}
	_, err = mint(&parent, embed.Claims{Endpoints: []string{"a"}, Fixed: map[string]any{"country": "US"}, RPM: 6})
	requireForbidden(t, err, "rpm", "(rpm 6)")
	_, err = mint(&parent, embed.Claims{Endpoints: []string{"b"}, Fixed: map[string]any{"country": "US"}})
	requireForbidden(t, err, "endpoints", "This embed token may not use endpoint 'b'")

	// A bad rpm is a 400 before any grant.
	_, err = mint(oneEndpoint, embed.Claims{Endpoints: []string{"a"}, RPM: -1})
	var ee *endpoint.Error
	if !errors.As(err, &ee) || ee.Status != http.StatusBadRequest || ee.Attr != "rpm" {
		t.Errorf("rpm -1: got %v, want a 400 naming rpm", err)
	}
}
