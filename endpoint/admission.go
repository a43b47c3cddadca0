package endpoint

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/endpointkit/endpointkit/endpoint/apikey"
	"github.com/endpointkit/endpointkit/endpoint/embed"
)

// Caller is who asks to run or change something: the project its
// credential was accepted for, and the credential. A stored API key
// (apikey.Keys) is Key, a verified embed token is Token; neither is one of the
// host's own keys (an Authenticator's), which has the project's full
// rights and only the project's budget.
type Caller struct {
	Project string
	Key     *apikey.Key
	Token   *embed.Claims
}

// Act is the kind of thing a Caller asks (Ask.Act).
type Act int

const (
	// ActUse is any route that neither runs nor refreshes: a read or a
	// change of a definition. It is checked for who and what only, and
	// costs no budget.
	ActUse Act = iota
	// ActRun is a run of a saved endpoint (Ask.Run holds its request).
	// A stored key needs apikey.ScopeEndpointRead.
	ActRun
	// ActQuery is a run of a query that is not saved (the editor's query
	// route). A stored key needs apikey.ScopeQueryRun; a token may not.
	ActQuery
	// ActRefresh is a refresh of a materialized endpoint's stored table
	// (POST materialize), which computes the query as an inline run does.
	// A stored key needs apikey.ScopeEndpointWrite; a token may not.
	ActRefresh
	// ActSave is a create (Ask.Create) or an update (Ask.Update) of an
	// endpoint. A save that leaves the endpoint materialized without a
	// table for its new definition asks the scheduler to refresh it at
	// once, so it is charged as ActRefresh is; other saves cost no
	// budget. A stored key needs apikey.ScopeEndpointWrite; a token may not.
	ActSave
)

// Ask is what a Caller asks.
type Ask struct {
	Act Act
	// Scope is the scope a stored key needs; "" takes the Act's (ActUse
	// needs none then).
	Scope string
	// Endpoint names the endpoint the ask concerns, which a key limited
	// to named endpoints and a token must name; "" for none.
	Endpoint string
	// Whole tells that the ask concerns every endpoint of the project (a
	// write of the project's variables): a key limited to named endpoints
	// may not.
	Whole bool
	// TokenMay tells that an embed token may make this ActUse ask (the
	// OpenAPI document of an endpoint it names); otherwise ActUse is
	// refused to tokens.
	TokenMay bool
	// Run is the request of an ActRun. Admit sets its Fixed, Token and
	// KeyID from the Caller: a run's credentials come from here, never
	// from a body.
	Run *RunRequest
	// RowsFormat names the format of rows an ActRun's answer is asked in
	// (csv, ndjson, a host's format); "" for JSON. An insight endpoint,
	// whose results are series, cannot answer in one: it is refused
	// (NotRowsError) before it runs and before any charge.
	RowsFormat string
	// Query is the request of an ActQuery: what RunQuery refuses before
	// it compiles the query is refused before any charge. nil checks
	// nothing of it.
	Query *QueryRequest
	// Create and Update are the request of an ActSave, one of them.
	Create *CreateRequest
	Update *UpdateRequest
}

// Budgets are the counters Admit charges: each at most once per ask, and
// only once the ask was found allowed and its record found, so that a
// refusal for another reason costs nothing.
type Budgets struct {
	// Keys counts stored keys' budgets; required when a Caller has a Key.
	Keys *apikey.Keys
	// TokenRate counts a run of an embed token against its rpm claim,
	// returning the 429 to answer when it is spent; nil counts nothing.
	TokenRate func(context.Context, *embed.Claims) error
	// Slot takes a run slot of the project (its per-minute, per-hour and
	// concurrency limits and the global cap), returning the function that
	// gives it back, or the 429/503 to answer; nil takes none.
	Slot func(project string) (release func(), err error)
}

// Admission is an admitted ask. Release gives back the project's slot; it
// may be called more than once.
type Admission struct {
	// Stored tells that the endpoint's stored table answers the run, which
	// was charged to the key's materialized budget; false for a run
	// computed inline (and for a query or a refresh), charged to the
	// inline one.
	Stored  bool
	release func()
}

// Release gives back the project's run slot the ask took, if any. It is
// safe to call again.
func (a *Admission) Release() {
	if a.release == nil {
		return
	}
	r := a.release
	a.release = nil
	r()
}

// Admit is the one admission of every run and change, whatever the
// surface (the HTTP API in every format, /mcp, the editor's query route,
// POST materialize): it decides, in this order,
//
//  1. who calls: a stored key or a token must be of the project (403);
//  2. what it may do: a key's scopes and endpoints, a token's endpoints
//     (a token may only run them, and read what Ask.TokenMay allows), 403
//     naming what is missing;
//  3. which record: a run's endpoint must be active and its version
//     exist, with the run's options, a token's fixed variables and the
//     variables the rules of the endpoint's state allow (the errors the
//     run would give, by the run's own checks); a refresh's endpoint must
//     be materialized; an update's endpoint must exist, and a save is
//     found to start a refresh or not (saveRefreshes);
//  4. which budget: the token's rpm, the key's budget and the project's
//     slot, each charged once. A key's run is charged to its materialized
//     budget when the endpoint's stored table answers it, to the inline
//     one otherwise; the decision is made here, before the run starts,
//     from the same decision the run takes (storedReadOf): the version
//     asked is the current one of a materialized endpoint whose table is
//     fresh. A query, a refresh and a save that starts one compute the
//     query: inline.
//
// A refusal is an *Error: 403 for a credential that may not, the record's
// 400, 404 or 409, and 429 (Code CodeThrottled, Limit naming the budget)
// or 503 for a budget. The caller releases the Admission once the answer
// is computed.
func (s *Service) Admit(ctx context.Context, b Budgets, c Caller, a Ask) (Admission, error) {
	if err := c.may(a); err != nil {
		return Admission{}, err
	}
	stored := false
	switch a.Act {
	case ActUse:
		return Admission{}, nil
	case ActRun:
		if a.Run == nil {
			return Admission{}, errors.New("endpoint: Admit of a run without its request")
		}
		a.Run.Fixed, a.Run.Token, a.Run.KeyID, a.Run.admitted = nil, c.Token, "", nil
		if c.Token != nil {
			a.Run.Fixed = c.Token.Fixed
		}
		if c.Key != nil {
			a.Run.KeyID = c.Key.ID
		}
		run, err := s.answeredStored(ctx, c.Project, a.Endpoint, *a.Run, a.RowsFormat)
		if err != nil {
			return Admission{}, err
		}
		stored = run.stored
		// The run given this request goes on from here (admittedRun).
		a.Run.admitted = run.admitted
	case ActQuery:
		if a.Query != nil {
			if _, err := s.checkQueryRequest(*a.Query); err != nil {
				return Admission{}, err
			}
		}
	case ActRefresh:
		if _, err := s.materializable(ctx, c.Project, a.Endpoint); err != nil {
			return Admission{}, err
		}
	case ActSave:
		refreshes, err := s.saveRefreshes(ctx, c.Project, a)
		if err != nil {
			return Admission{}, err
		}
		if !refreshes {
			return Admission{}, nil
		}
	}
	if c.Token != nil && b.TokenRate != nil {
		if err := b.TokenRate(ctx, c.Token); err != nil {
			return Admission{}, err
		}
	}
	if c.Key != nil {
		if b.Keys == nil {
			return Admission{}, errors.New("endpoint: Admit of a stored key without Budgets.Keys")
		}
		if err := b.Keys.Admit(*c.Key, stored); err != nil {
			return Admission{}, err
		}
	}
	adm := Admission{Stored: stored}
	if b.Slot != nil {
		release, err := b.Slot(c.Project)
		if err != nil {
			return Admission{}, err
		}
		adm.release = release
	}
	return adm, nil
}

// may checks who c is and what it may do for a: steps 1 and 2 of Admit.
func (c Caller) may(a Ask) error {
	scope := a.Scope
	if scope == "" {
		switch a.Act {
		case ActRun:
			scope = apikey.ScopeEndpointRead
		case ActQuery:
			scope = apikey.ScopeQueryRun
		case ActRefresh, ActSave:
			scope = apikey.ScopeEndpointWrite
		}
	}
	if (a.Act == ActRun || a.Act == ActRefresh) && a.Endpoint == "" {
		return errors.New("endpoint: Admit of a run or a refresh that names no endpoint")
	}
	if t := c.Token; t != nil {
		if t.Project != c.Project {
			return NewError(ErrForbidden, CodeForbidden, "", fmt.Sprintf("This embed token does not give access to project '%s'.", cut(c.Project)))
		}
		if a.Act == ActQuery || a.Act == ActRefresh || a.Act == ActSave || a.Act == ActUse && (!a.TokenMay || a.Endpoint == "") {
			return NewError(ErrForbidden, CodeForbidden, "", "An embed token may only run the endpoints it names; this needs an API key.")
		}
		if !t.Allows(a.Endpoint) {
			return NewError(ErrForbidden, CodeForbidden, "", fmt.Sprintf("This embed token may not run endpoint '%s'.", cut(a.Endpoint)))
		}
	}
	k := c.Key
	if k == nil {
		return nil
	}
	switch {
	case k.ProjectID != c.Project:
		return &Error{Status: http.StatusForbidden, Code: CodeForbidden, Err: ErrForbidden,
			Detail: fmt.Sprintf("This API key does not give access to project '%s'.", cut(c.Project))}
	case scope != "" && !k.Allows(scope):
		return NewError(ErrForbidden, CodeForbidden, "", fmt.Sprintf("This API key lacks the scope '%s' that this route needs.", scope))
	case a.Endpoint != "" && !k.AllowsEndpoint(a.Endpoint):
		return NewError(ErrForbidden, CodeForbidden, "", fmt.Sprintf("This API key may not use endpoint '%s'.", cut(a.Endpoint)))
	case a.Whole && k.Restricted():
		return NewError(ErrForbidden, CodeForbidden, "",
			"This API key is limited to named endpoints; writing the project's variables, which every endpoint uses, needs a key that is not.")
	}
	return nil
}

// answeredStored finds the record a run of the endpoint named name asks
// for, refusing it as the run would, by the run's own steps (prepare: the
// options, an endpoint that is not active, a version that does not exist
// or no longer compiles, fixed variables changed; an insight asked for in
// the format of rows rowsFormat (NotRowsError); then the refresh mode
// and the rules of the endpoint's state, as serve checks them first), and
// reports whether its stored table answers it: the run path's own
// decision (storedReadOf), taken before the run starts. A run refused
// here is logged and observed as Run logs a refused run, since it never
// reaches Run.
func (s *Service) answeredStored(ctx context.Context, project, name string, req RunRequest, rowsFormat string) (answered, error) {
	p, err := s.prepare(ctx, project, name, req, s.now())
	if err == nil && rowsFormat != "" && p.c.insight != nil {
		err = NotRowsError(rowsFormat)
	}
	if err == nil {
		_, err = refreshMode(p.ep, p.opts)
	}
	var values map[string]any
	if err == nil {
		values, err = s.admit(p.ep, p.c, p.req, p.opts, p.now)
	}
	if err != nil {
		rec := s.beginRun(project, name, req)
		if p.ep != nil {
			rec.ep, rec.version = p.ep, p.opts.version
		}
		_, err = s.endRun(ctx, rec, nil, err)
		return answered{}, err
	}
	a := &admittedRun{project: project, name: name, given: req, p: p, values: values}
	return answered{stored: s.storedReadOf(p.ep, p.c, p.opts, p.now).why == readsStored, admitted: a}, nil
}

// answered is what answeredStored found of a run: whether its stored
// table answers it, and the run prepared, for the run to take.
type answered struct {
	stored   bool
	admitted *admittedRun
}

// NotRowsError is the refusal of an insight (a saved endpoint or a query)
// asked for in the format of rows named format: 400, Attr format.
func NotRowsError(format string) *Error {
	return &Error{
		Status: http.StatusBadRequest, Code: CodeInvalidInput, Attr: "format",
		Detail: fmt.Sprintf("Format '%s' answers rows, and an insight's results are series, not rows: ask for format 'json'.", cut(format)),
		Err:    ErrInvalid,
	}
}

// saveRefreshes reports whether the save a asks for (ActSave) starts a
// refresh of the endpoint's stored table: a create of a materialized
// endpoint; an update that leaves the endpoint materialized and makes it
// so, or changes what its table is built from (its query, buckets or
// tail column); a restore (Update.Deleted false) of a materialized
// endpoint, found as Restore finds it. It decides before the save, so it
// errs towards a refresh: a query saved unchanged is counted as changed.
// What the save would refuse before it compiles is refused here, before
// any charge: an update or a restore of an endpoint that does not exist
// (404), a create of a materialized endpoint under a bad name, without a
// query or under a name taken, an update that refreshes with a new name
// taken or a bad freshness (400, 409).
func (s *Service) saveRefreshes(ctx context.Context, project string, a Ask) (bool, error) {
	switch {
	case a.Create != nil:
		if !a.Create.IsMaterialized {
			return false, nil
		}
		// What Create refuses before it compiles, refused here before the
		// charge: a bad name, no query, a name taken.
		if a.Create.Query == nil {
			return false, required("query")
		}
		if a.Create.DataFreshnessSeconds != nil {
			if err := checkDataFreshness(*a.Create.DataFreshnessSeconds); err != nil {
				return false, err
			}
		}
		return true, s.checkRename(ctx, project, a.Create.Name)
	case a.Update == nil:
		return false, errors.New("endpoint: Admit of a save without its request")
	case a.Update.Deleted != nil:
		if err := deletedAlone(*a.Update); err != nil {
			return false, err
		}
		if *a.Update.Deleted {
			return false, nil
		}
		return s.restoreRefreshes(ctx, project, a.Endpoint)
	}
	u := a.Update
	cur, err := s.get(ctx, project, a.Endpoint)
	if err != nil {
		return false, err
	}
	after := cur.IsMaterialized
	if u.IsMaterialized != nil {
		after = *u.IsMaterialized
	}
	refreshes := after && (!cur.IsMaterialized || u.Query != nil || u.MaterializationBuckets != nil || u.MaterializationTail != nil)
	if refreshes {
		// What Update refuses of the fields before it compiles (a name
		// taken or invalid, a bad freshness), refused before the charge.
		next := cur
		if _, err := s.applyFields(ctx, project, &next, *u); err != nil {
			return false, err
		}
	}
	return refreshes, nil
}
