package apikey

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"sort"

	"github.com/endpointkit/endpointkit/endpoint/embed"
	"github.com/endpointkit/endpointkit/endpoint/limit"
	"github.com/endpointkit/endpointkit/internal/apierror"
)

// Grant is what a credential may do, and so the most it may give: a key or
// an embed token it makes has no scope, endpoint or budget it lacks, and
// fixes every variable it fixes to the same value; it revokes no key that
// may do more than it. Keys.CreateAs, Keys.RevokeAs and
// endpoint.Service.MintEmbedTokenAs hold a credential to its Grant; a nil *Grant is
// the host itself (its own keys, its backend), which may give anything.
//
// Key.Grant and TokenGrant make the Grant of a stored key and of an embed
// token.
type Grant struct {
	// Scopes are the scopes it holds (ScopeEndpointRead and the others).
	Scopes []string
	// Endpoints are the only endpoints it may use; nil is every endpoint.
	Endpoints []string
	// Fixed are the variables (by code name) it fixes and their values.
	Fixed map[string]any
	// RunsPerMinute, RunsPerHour, MaterializedRunsPerMinute and
	// MaterializedRunsPerHour are its budgets in force (a host's default
	// resolved), limit.Unlimited (-1) for none.
	RunsPerMinute             int
	RunsPerHour               int
	MaterializedRunsPerMinute int
	MaterializedRunsPerHour   int

	// noun names the credential in a refusal ("API key").
	noun string
}

// Grant is what k may do: its scopes, endpoints and budgets in force.
func (k *Key) Grant() Grant {
	return Grant{noun: "API key", Scopes: slices.Clone(k.Scopes), Endpoints: slices.Clone(k.Endpoints),
		RunsPerMinute: k.RunsPerMinute, RunsPerHour: k.RunsPerHour,
		MaterializedRunsPerMinute: k.MaterializedRunsPerMinute, MaterializedRunsPerHour: k.MaterializedRunsPerHour}
}

// TokenGrant is what a token of c may do: run the endpoints it names (the
// scope ScopeEndpointRead) with its fixed variables, at most c.RPM runs
// per minute of either kind, and so 60 times that per hour; a token
// without rpm has no budget of its own.
func TokenGrant(c embed.Claims) Grant {
	g := Grant{noun: "embed token", Scopes: []string{ScopeEndpointRead}, Endpoints: slices.Clone(c.Endpoints), Fixed: c.Fixed,
		RunsPerMinute: limit.Unlimited, RunsPerHour: limit.Unlimited,
		MaterializedRunsPerMinute: limit.Unlimited, MaterializedRunsPerHour: limit.Unlimited}
	if g.Endpoints == nil {
		g.Endpoints = []string{} // a token runs only what it names
	}
	if c.RPM > 0 {
		perHour := int(min(int64(c.RPM)*60, int64(math.MaxInt)))
		g.RunsPerMinute, g.MaterializedRunsPerMinute = c.RPM, c.RPM
		g.RunsPerHour, g.MaterializedRunsPerHour = perHour, perHour
	}
	return g
}

// grantee is what a credential is about to make or revoke, for the
// detail of a refusal.
type grantee struct {
	// what is "the key it creates", "the embed token it mints", ...
	what string
	// token tells that it is an embed token, whose only budget is its rpm.
	token bool
	// budget describes the value asked of a budget: "runs_per_minute -1 =
	// no limit"; nil writes "attr value".
	budget func(b grantBudget, v int) string
}

// grantBudget is one of a Grant's budgets.
type grantBudget struct {
	attr  string // its field: runs_per_minute, ...
	kind  string // "answered inline" or "of materialized endpoints"
	per   string // "minute" or "hour"
	value func(g *Grant) int
}

// budgets are a Grant's budgets, in the order a refusal names them.
var budgets = []grantBudget{
	{"runs_per_minute", "answered inline", "minute", func(g *Grant) int { return g.RunsPerMinute }},
	{"runs_per_hour", "answered inline", "hour", func(g *Grant) int { return g.RunsPerHour }},
	{"materialized_runs_per_minute", "of materialized endpoints", "minute", func(g *Grant) int { return g.MaterializedRunsPerMinute }},
	{"materialized_runs_per_hour", "of materialized endpoints", "hour", func(g *Grant) int { return g.MaterializedRunsPerHour }},
}

// wider reports whether budget a allows more than b; -1 (none) is more
// than any number.
func wider(a, b int) bool {
	switch {
	case b == limit.Unlimited:
		return false
	case a == limit.Unlimited:
		return true
	}
	return a > b
}

// forbids returns nil when g may give (or revoke) o, else a 403 *endpoint.Error
// naming the first thing that would widen: Attr is the field of the
// request that asks for it.
func (g *Grant) forbids(o Grant, to grantee) error {
	if g == nil {
		return nil
	}
	who := "This " + g.noun
	if g.noun == "" {
		who = "This credential"
	}
	refuse := func(attr, format string, args ...any) error {
		return &apierror.Error{Status: http.StatusForbidden, Code: apierror.CodeForbidden, Attr: attr, Detail: fmt.Sprintf(format, args...), Err: apierror.ErrForbidden}
	}
	for _, s := range o.Scopes {
		if !slices.Contains(g.Scopes, s) {
			if to.token {
				return refuse("endpoints", "%s lacks the scope '%s'; %s, which runs endpoints, would have it.", who, s, to.what)
			}
			return refuse("scopes", "%s lacks the scope '%s'; %s may not have it.", who, s, to.what)
		}
	}
	if g.Endpoints != nil {
		if o.Endpoints == nil {
			return refuse("endpoints", "%s is limited to named endpoints; %s may not use every endpoint: name its endpoints among this one's.", who, to.what)
		}
		for _, n := range o.Endpoints {
			if !slices.Contains(g.Endpoints, n) {
				return refuse("endpoints", "%s may not use endpoint '%s'; %s may not use it either.", who, apierror.Cut(n), to.what)
			}
		}
	}
	names := make([]string, 0, len(g.Fixed))
	for name := range g.Fixed {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		v, ok := o.Fixed[name]
		if !ok || !sameJSON(v, g.Fixed[name]) {
			return refuse("fixed", "%s fixes variable '%s'; %s must fix it too, to the same value.", who, apierror.Cut(name), to.what)
		}
	}
	for _, b := range budgets {
		have, asked := b.value(g), b.value(&o)
		if !wider(asked, have) {
			continue
		}
		runs := "runs"
		if have == 1 {
			runs = "run"
		}
		attr, ask := b.attr, fmt.Sprintf("%s %d", b.attr, asked)
		if to.budget != nil {
			ask = to.budget(b, asked)
		}
		if to.token {
			attr = "rpm"
		}
		return refuse(attr, "%s may start %d %s %s per %s (%s %d); %s may not allow more (%s).",
			who, have, runs, b.kind, b.per, b.attr, have, to.what, ask)
	}
	return nil
}

// sameJSON reports whether a and b are the same value as JSON.
func sameJSON(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

// tokenRPM is the rpm a token of c gets from g: c.RPM when it asks for
// one; else, when g has a budget, the most runs per minute g allows (its
// smallest per-minute budget, and its smallest per-hour budget over 60,
// at least 1): a token minted by a bounded credential never runs without
// a bound.
func (g *Grant) tokenRPM(c embed.Claims) int {
	if g == nil || c.RPM != 0 {
		return c.RPM
	}
	rpm := limit.Unlimited
	for _, b := range budgets {
		v := b.value(g)
		if v == limit.Unlimited {
			continue
		}
		if b.per == "hour" {
			v /= 60
		}
		if rpm == limit.Unlimited || v < rpm {
			rpm = v
		}
	}
	switch {
	case rpm == limit.Unlimited:
		return 0
	case rpm < 1:
		return 1 // and forbids refuses it: an hour of fewer than 60 runs
	}
	return min(rpm, embed.MaxRPM)
}

// BoundToken holds the embed token of claims to g, as a credential whose
// Grant is g mints it (endpoint.Service.MintEmbedTokenAs): it fills in
// claims.RPM when the token asks none (tokenRPM) and returns nil when g
// may give the token, else the 403 *endpoint.Error naming the first thing
// that would widen (Attr endpoints, fixed or rpm). A nil g (the host)
// leaves claims as they are and gives anything.
func (g *Grant) BoundToken(claims *embed.Claims) error {
	claims.RPM = g.tokenRPM(*claims)
	return g.forbids(TokenGrant(*claims), grantee{what: "the embed token it mints", token: true, budget: tokenBudget})
}

// tokenBudget describes a token's rpm as the budget b it amounts to.
func tokenBudget(b grantBudget, v int) string {
	if v == limit.Unlimited {
		return "rpm 0 = no limit of its own"
	}
	if b.per == "hour" {
		return fmt.Sprintf("rpm %d = %d runs per hour", v/60, v)
	}
	return fmt.Sprintf("rpm %d", v)
}
