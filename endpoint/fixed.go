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
// a host's backend needs to hand a customer a token.
func (s *Service) MintEmbedToken(ctx context.Context, signer *embed.Signer, project string, claims embed.Claims, lifetime time.Duration) (string, error) {
	if len(claims.Endpoints) == 0 {
		return "", invalidf(CodeInvalidInput, "endpoints", "A token must name at least one endpoint.")
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
	token, err := signer.Mint(project, claims, lifetime)
	if err != nil {
		var te *embed.Error
		if errors.As(err, &te) {
			return "", withCause(invalidf(CodeInvalidInput, "", "Cannot mint the token: %s.", te.Detail), err)
		}
		return "", err
	}
	return token, nil
}
