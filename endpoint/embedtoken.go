package endpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/apikey"
	"github.com/endpointkit/endpointkit/endpoint/embed"
)

// CodeFixedVariable is the Code of a run that gives a variable fixed by its
// credentials (an embed token) another value, or that the endpoint cannot
// honour because it has no such variable.
const CodeFixedVariable = "fixed_variable"

// withFixed merges the values fixed by a run's credentials into the values
// it gives: a fixed variable takes the fixed value; the run may repeat it
// (the same value once coerced) but never change it, nor reach it through
// a key that differs only in case. Every fixed variable must be a variable
// of the endpoint, or the run would return rows the credentials were meant
// to filter out.
func (c *compiled) withFixed(given, fixed map[string]any, now time.Time) (map[string]any, error) {
	if len(fixed) == 0 {
		return given, nil
	}
	names := make([]string, 0, len(fixed))
	for name := range fixed {
		names = append(names, name)
	}
	sort.Strings(names)
	out := make(map[string]any, len(given)+len(fixed))
	for k, v := range given {
		out[k] = v
	}
	for _, name := range names {
		if !c.takes(name) {
			return nil, fixedError(name, "Variable '%s' is fixed by this token, but endpoint has no such variable; it cannot honour the token.")
		}
		for k := range given {
			if k != name && strings.EqualFold(k, name) {
				return nil, fixedError(name, "Variable '%s' is fixed by this token; it cannot be given under another spelling.")
			}
		}
		if v, ok := given[name]; ok {
			same, err := c.sameValue(name, v, fixed[name], now)
			if err != nil {
				return nil, err
			}
			if !same {
				return nil, fixedError(name, "Variable '%s' is fixed by this token and cannot be changed.")
			}
		}
		out[name] = fixed[name]
	}
	return out, nil
}

func fixedError(name, format string) *Error {
	e := NewError(ErrForbidden, CodeFixedVariable, "variables", strings.Replace(format, "%s", cut(name), 1))
	e.Variable = name
	return e
}

// takes reports whether name is a variable of the compiled query.
func (c *compiled) takes(name string) bool {
	if c.insight != nil {
		for _, v := range c.insight.Variables(false) {
			if v == name {
				return true
			}
		}
		return false
	}
	_, ok := c.index[name]
	return ok
}

// sameValue reports whether two values of variable name are the same once
// coerced (a SQL variable) or as JSON (an insight variable).
func (c *compiled) sameValue(name string, a, b any, now time.Time) (bool, error) {
	if i, ok := c.index[name]; ok {
		v := &c.vars[i]
		ca, err := v.Coerce(a, now)
		if err != nil {
			return false, valueError(v, err)
		}
		cb, err := v.Coerce(b, now)
		if err != nil {
			return false, valueError(v, err)
		}
		return reflect.DeepEqual(ca, cb), nil
	}
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb), nil
}

// MintEmbedToken checks that the claims can be honoured in project — every
// endpoint exists, and every fixed value is a valid value of a variable of
// each endpoint — and returns a token signed by signer. It is the one line
// a host's backend needs to hand a customer a token; it acts as the host,
// which may give anything (MintEmbedTokenAs with no Grant).
func (s *Service) MintEmbedToken(ctx context.Context, signer *embed.Signer, project string, claims embed.Claims, lifetime time.Duration) (string, error) {
	token, _, err := s.MintEmbedTokenAs(ctx, signer, project, nil, claims, lifetime)
	return token, err
}

// MintEmbedTokenAs is MintEmbedToken on behalf of a credential whose Grant
// is by (nil: the host). The token may do no more than by (apikey.TokenGrant): by
// must hold apikey.ScopeEndpointRead and may use each endpoint the token names,
// the token fixes every variable by fixes to the same value, and its rpm,
// which bounds its runs of either kind per minute (and so 60 times that
// per hour), is within each of by's budgets. A token asked without rpm
// from a by that has a budget gets the most by allows (its smallest
// per-minute budget and its smallest per-hour budget over 60), never no
// bound. A widening is refused with an *Error of Status 403 whose Attr
// names the field (endpoints, fixed, rpm), before any endpoint is looked
// up. It returns the token and its claims as minted (their RPM filled in).
func (s *Service) MintEmbedTokenAs(ctx context.Context, signer *embed.Signer, project string, by *apikey.Grant, claims embed.Claims, lifetime time.Duration) (string, embed.Claims, error) {
	token, err := s.mintEmbedToken(ctx, signer, project, by, &claims, lifetime)
	if err != nil {
		return "", embed.Claims{}, err
	}
	return token, claims, nil
}

func (s *Service) mintEmbedToken(ctx context.Context, signer *embed.Signer, project string, by *apikey.Grant, claims *embed.Claims, lifetime time.Duration) (string, error) {
	switch {
	case len(claims.Endpoints) == 0:
		return "", invalidf(CodeInvalidInput, "endpoints", "A token must name at least one endpoint.")
	case claims.RPM < 0 || claims.RPM > embed.MaxRPM:
		return "", invalidf(CodeInvalidInput, "rpm", "rpm must be a whole number from 0 (no limit of its own) to %d.", embed.MaxRPM)
	}
	if err := by.BoundToken(claims); err != nil {
		return "", err
	}
	now := s.now()
	for _, name := range claims.Endpoints {
		ep, err := s.get(ctx, project, name)
		if err != nil {
			return "", err
		}
		c, err := s.compiledVersion(ctx, &ep, ep.CurrentVersion)
		if err != nil {
			return "", err
		}
		for fname, value := range claims.Fixed {
			if !c.takes(fname) {
				return "", invalidf(CodeFixedVariable, "fixed", "Variable '%s' is not a variable of endpoint '%s', so the token could not fix it.", cut(fname), name)
			}
			if _, err := c.sameValue(fname, value, value, now); err != nil {
				var e *Error
				if errors.As(err, &e) {
					e.Attr = "fixed"
				}
				return "", err
			}
		}
	}
	token, err := signer.Mint(project, *claims, lifetime)
	if err != nil {
		var te *embed.Error
		if errors.As(err, &te) {
			return "", withCause(invalidf(CodeInvalidInput, "", "Cannot mint the token: %s.", te.Detail), err)
		}
		return "", err
	}
	return token, nil
}
