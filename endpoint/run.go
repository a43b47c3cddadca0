package endpoint

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/embed"
	"github.com/endpointkit/endpointkit/variable"
)

// RunRequest is the input of Run (the JSON body of POST .../run).
type RunRequest struct {
	// Variables holds a value for every variable of the endpoint, by
	// code_name. A variable's default value never stands in for a missing
	// one: defaults serve the editor, and a saved endpoint must not return
	// data its caller did not ask for.
	Variables map[string]any `json:"variables"`
	// Version runs an older version; nil runs the current one.
	Version *int `json:"version"`
	// Limit and Offset page the rows; Limit defaults to Config.DefaultLimit
	// and may not exceed Config.MaxLimit.
	Limit  *int `json:"limit"`
	Offset *int `json:"offset"`
	// Refresh is "cache" (or ""): a fresh answer from Config.ResultCache
	// when there is one; "force": computed now (and cached); "direct": a
	// materialized endpoint read from its stored table, the cache neither
	// read nor written (see serve.go). Other values are refused, so that
	// a client's typo is not silently ignored.
	Refresh string `json:"refresh"`
	// Debug adds the executed SQL, its argument count and timings.
	Debug bool `json:"debug"`
	// Fixed holds values that the caller's credentials set (an embed
	// token's fixed variables): they take precedence, and a Variables
	// entry may repeat them but not change them (a 403 otherwise). It is
	// never read from a request body.
	Fixed map[string]any `json:"-"`
	// Token is the verified embed token the run came with, nil for
	// another credential; the run log records its key id, never the
	// token. It is never read from a request body.
	Token *embed.Claims `json:"-"`
	// KeyID is the id of the stored API key (Keys) the run was
	// authenticated with, "" for another credential; the run log records
	// it, never the key. It is never read from a request body.
	KeyID string `json:"-"`
	// admitted is the run as Admit prepared it from this request (see
	// admittedRun), nil when Admit did not.
	admitted *admittedRun
}

// admittedRun is a run as Service.Admit prepared it (Ask.Run): its record
// found, its version compiled, its values bound. Admit sets it on the
// request it fills in, and the Run (or RunRows) given that request, for
// the same project and endpoint and otherwise unchanged, takes it once
// instead of finding, compiling and binding again: the admission's work
// is the run's. A request changed since, or a second run of it, prepares
// anew.
type admittedRun struct {
	project, name string
	// given is the request as Admit filled it in, to tell whether the
	// run's is still the same (sameRequest).
	given  RunRequest
	p      prepared
	values map[string]any
	used   atomic.Bool
}

// admittedFor returns the run Admit prepared from req for project and
// name, once; nil when there is none, it was taken already, or req has
// changed since.
func (req *RunRequest) admittedFor(project, name string) *admittedRun {
	a := req.admitted
	if a == nil || a.project != project || a.name != name || !sameRequest(&a.given, req) || a.used.Swap(true) {
		return nil
	}
	return a
}

// sameRequest tells whether b is a, the request Admit prepared: the same
// maps and pointers (what the caller holds, not copies), and the same
// values.
func sameRequest(a, b *RunRequest) bool {
	return samePointer(a.Variables, b.Variables) && samePointer(a.Fixed, b.Fixed) &&
		len(a.Variables) == len(b.Variables) &&
		a.Version == b.Version && a.Limit == b.Limit && a.Offset == b.Offset &&
		a.Refresh == b.Refresh && a.Debug == b.Debug && a.Token == b.Token && a.KeyID == b.KeyID
}

// samePointer tells whether a and b are the same map (or both nil).
func samePointer(a, b map[string]any) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// RunResult is the answer of Run. It is its caller's own: nothing else
// holds its slices, its rows or series, or what its pointers point to
// (the runs of one flight, and the result cache, each have their own), so
// the caller may write to any of it.
type RunResult struct {
	Name            string `json:"name"`
	EndpointVersion int    `json:"endpoint_version"`
	// Columns and Types describe the rows of a SQL endpoint; they are
	// empty for an insight endpoint, whose results are not rows.
	Columns []string `json:"columns"`
	Types   []string `json:"types"`
	// Results are rows as arrays ([][]any) for SQL endpoints, and an
	// *insight.Result (PostHog's array of series or cohorts) for insight
	// endpoints.
	Results any `json:"results"`
	// HasMore tells that rows beyond Offset+Limit exist; for a trends
	// insight, that a breakdown had values past its limit (see
	// insight.Result.HasMore).
	HasMore bool `json:"hasMore"`
	// EndpointMaterialized tells that the run read the endpoint's stored
	// table, whose data is of EndpointMaterializedAt; false means the query
	// ran inline against the source data.
	EndpointMaterialized   bool       `json:"endpoint_materialized"`
	EndpointMaterializedAt *time.Time `json:"endpoint_materialized_at,omitempty"`
	// InlineReason says why a run of a materialized endpoint did not read
	// its stored table but ran inline: an older version was asked for, no
	// table is fresh for the current version and settings, the values are
	// ones the table cannot answer exactly, or the read of the table failed
	// on the database (which is also logged, counted and shown in the
	// endpoint's materialization). Empty when the stored table answered or
	// the endpoint is not materialized.
	InlineReason string `json:"inline_reason,omitempty"`
	// fallbackErr is the database's refusal of the stored table's read,
	// reported once, by the run that computed the answer.
	fallbackErr error
	// typeErr names a value that its column's kind could not hold (see
	// conform), reported by the run that computed the answer.
	typeErr error
	// kinds are the kinds of Columns (see ColumnKinds).
	kinds []ColumnKind
	// encoded is Results as JSON when storing the answer in the result
	// cache encoded them, for the runs that joined its flight (serve.go).
	encoded []byte
	// ExecutionID names this run in the run log (Service.Logs).
	ExecutionID string `json:"execution_id"`
	// EndpointVersionCreatedAt is when the version that answered was
	// saved; nil only when the store could not say.
	EndpointVersionCreatedAt *time.Time `json:"endpoint_version_created_at"`
	// created is what EndpointVersionCreatedAt points to, in the answer's
	// allocation.
	created time.Time
	// IsCached tells that no query ran for this answer: it came from the
	// result cache, or from an identical run under way at the same time.
	// Its Results are then the rows (an insight's array) as JSON, a
	// json.RawMessage of its own; its Statistics and LastRefresh are
	// those of the run that computed it.
	IsCached bool `json:"is_cached"`
	// LastRefresh is the instant the answer's data is of: when its query
	// ran, or when the stored table it read was built.
	LastRefresh *time.Time `json:"last_refresh"`
	// Statistics describe the execution that computed the answer.
	Statistics *Statistics `json:"statistics"`
	Debug      *DebugInfo  `json:"debug,omitempty"`
}

// DebugInfo is added to a RunResult when the request asks for debug.
type DebugInfo struct {
	// SQL is the statement as executed, with bind markers in place of
	// values; the values themselves are not echoed.
	SQL       string  `json:"sql"`
	ArgCount  int     `json:"arg_count"`
	RenderMS  float64 `json:"render_ms"`
	ExecuteMS float64 `json:"execute_ms"`
}

// runOptions are a RunRequest's settings other than variables, checked.
type runOptions struct {
	version       int // 0: the current one
	limit, offset int
	refresh       string
	debug         bool
}

// Run executes the endpoint named name with the request's variables. It
// takes these steps, each of which may refuse the run: check the options,
// find the endpoint (it must be active), find the compiled version, bind
// the variables, execute, and record the run. A run of an endpoint that the
// Service ran lately reads nothing from the stores (see
// Config.RecheckInterval).
//
// Every run, refused or not, is recorded in the run log and reported to
// the Observer (see runlog.go and observer.go).
func (s *Service) Run(ctx context.Context, project, name string, req RunRequest) (*RunResult, error) {
	rec := s.beginRun(project, name, req)
	res, err := s.run(ctx, project, name, req, rec)
	return s.endRun(ctx, rec, res, err)
}

func (s *Service) run(ctx context.Context, project, name string, req RunRequest, rec *runRecord) (*RunResult, error) {
	if a := req.admittedFor(project, name); a != nil {
		// Admit found the record, compiled and bound: the run goes on
		// from there.
		p := a.p
		rec.ep, rec.version = p.ep, p.opts.version
		mode, err := refreshMode(p.ep, p.opts)
		if err != nil {
			return nil, err
		}
		return s.serveBound(ctx, p.ep, p.c, p.req, p.opts, p.now, rec, mode, a.values)
	}
	p, err := s.prepareRecorded(ctx, project, name, req, rec)
	if err != nil {
		return nil, err
	}
	return s.serve(ctx, p.ep, p.c, p.req, p.opts, p.now, rec)
}

// prepareRecorded is prepare at the instant rec began (the Service's
// clock, read as the run began), noting in rec what it found for the run
// log. Run and RunRows share it.
func (s *Service) prepareRecorded(ctx context.Context, project, name string, req RunRequest, rec *runRecord) (prepared, error) {
	if a := req.admittedFor(project, name); a != nil {
		// Admit prepared it (RunRows: its values are bound again).
		rec.ep, rec.version = a.p.ep, a.p.opts.version
		return a.p, nil
	}
	p, err := s.prepare(ctx, project, name, req, rec.at)
	if p.ep != nil {
		rec.ep, rec.version = p.ep, p.opts.version
	}
	return p, err
}

// prepared is a run whose record is found: its endpoint, the version
// compiled, the request with the credentials' fixed values, its options
// (the version set) and the instant it runs at.
type prepared struct {
	ep   *driver.Endpoint
	c    *compiled
	req  RunRequest
	opts runOptions
	now  time.Time
}

// prepare finds what a run asks for at now, as the run and its admission
// (Service.Admit) both do: check the options, find the endpoint (it must
// be active) and the version compiled, and apply the credentials' fixed
// variables. On an error, what it found so far is returned with it (the
// endpoint, for the run log).
func (s *Service) prepare(ctx context.Context, project, name string, req RunRequest, now time.Time) (prepared, error) {
	p := prepared{now: now}
	var err error
	if p.opts, err = s.runOptions(req); err != nil {
		return p, err
	}
	if p.ep, err = s.runnable(ctx, project, name, now); err != nil {
		return p, err
	}
	if p.opts.version == 0 {
		p.opts.version = p.ep.CurrentVersion
	}
	if p.c, err = s.compiledAt(ctx, p.ep, p.opts.version, now); err != nil {
		return p, err
	}
	if req.Variables, err = p.c.withFixed(req.Variables, req.Fixed, now); err != nil {
		return p, err
	}
	p.req = req
	return p, nil
}

// runOptions checks everything of req but the variables.
func (s *Service) runOptions(req RunRequest) (runOptions, error) {
	o := runOptions{limit: s.cfg.DefaultLimit, refresh: req.Refresh, debug: req.Debug}
	if req.Debug && req.Token != nil {
		// Debug shows the saved SQL, which an embed token's holder may
		// not read (the versions route refuses it too).
		return o, NewError(ErrForbidden, CodeForbidden, "debug", "debug is not available to an embed token: it shows the endpoint's SQL.")
	}
	if req.Version != nil {
		if *req.Version < 1 {
			return o, invalidf(CodeInvalidInput, "version", "Version must be a positive integer, got %d.", *req.Version)
		}
		o.version = *req.Version
	}
	if req.Limit != nil {
		if *req.Limit < 0 || *req.Limit > s.cfg.MaxLimit {
			return o, limited(invalidf(CodeInvalidInput, "limit", "Limit must be between 0 and %d, got %d.", s.cfg.MaxLimit, *req.Limit), LimitMaxLimit, int64(s.cfg.MaxLimit))
		}
		o.limit = *req.Limit
	}
	if req.Offset != nil {
		if *req.Offset < 0 {
			return o, invalidf(CodeInvalidInput, "offset", "Offset must not be negative, got %d.", *req.Offset)
		}
		o.offset = *req.Offset
	}
	switch req.Refresh {
	case "", "cache", "force", "direct":
	default:
		return o, invalidf(CodeInvalidInput, "refresh", "Invalid refresh '%s'. Expected one of: cache, force, direct.", req.Refresh)
	}
	return o, nil
}

// runnable returns the endpoint named name if it may run: the record this
// Service cached, or, when there is none or it is older than
// Config.RecheckInterval at now, the one the store holds. The record is
// the cache's own, shared by every run of the endpoint: a run reads it and
// never changes it (the cache replaces a record, never changes one).
func (s *Service) runnable(ctx context.Context, project, name string, now time.Time) (*driver.Endpoint, error) {
	k := recordKey{project, name}
	cached, checked, ok, gen := s.records.get(k)
	if !ok || !s.fresh(checked, now) {
		ep, err := s.get(ctx, project, name)
		if err != nil {
			if ok {
				s.records.remove(k)
			}
			return nil, err
		}
		cached = &ep
		s.records.put(k, cached, now, gen)
	}
	if !cached.IsActive {
		return nil, notFoundf("Endpoint '%s' is not active.", name)
	}
	return cached, nil
}

// compiledVersion returns version n of ep compiled, as compiledAt does at
// the Service's clock.
func (s *Service) compiledVersion(ctx context.Context, ep *driver.Endpoint, n int) (*compiled, error) {
	return s.compiledAt(ctx, ep, n, s.now())
}

// compiledAt returns version n of ep compiled, from the cache when it can.
// An entry older than Config.RecheckInterval at now is kept only if the
// variables it was validated with are still as the store holds them. A
// version is compiled again, with the variables as they are now, only after
// it left the cache or a variable changed; if it no longer passes the
// checks it passed when saved (a variable was changed behind the Service's
// back), the run is refused with a 409 that says why.
func (s *Service) compiledAt(ctx context.Context, ep *driver.Endpoint, n int, now time.Time) (*compiled, error) {
	key := cacheKey{ep.ProjectID, ep.ID, n}
	c, checked, ok, gen := s.cache.get(key)
	if ok && s.fresh(checked, now) {
		return c, nil
	}
	if ok {
		same, err := s.sameVariables(ctx, ep.ProjectID, c)
		if err != nil {
			return nil, err
		}
		if same {
			s.cache.put(key, c, now, gen)
			return c, nil
		}
	}
	q := ep.Query
	if n != ep.CurrentVersion {
		v, err := s.cfg.Endpoints.Version(ctx, ep.ProjectID, ep.ID, n)
		if err != nil {
			return nil, storeError(err, func() *Error {
				return notFoundf("Version %d not found for endpoint '%s'", n, ep.Name)
			})
		}
		q = v.Query
	}
	c, err := s.compileQuery(ctx, ep.ProjectID, q)
	if err != nil {
		var e *Error
		if errors.As(err, &e) && errors.Is(e, ErrInvalid) {
			return nil, conflictf(CodeConflict, "", "Endpoint '%s' version %d no longer passes validation: %s", ep.Name, n, e.Detail)
		}
		return nil, err
	}
	s.cache.put(key, c, now, gen)
	return c, nil
}

// sameVariables reports whether the variables c was compiled with are
// still stored as they were: then c is still what compiling the version
// would give. A variable's default value is not compared, since no run of
// a saved endpoint uses it.
func (s *Service) sameVariables(ctx context.Context, project string, c *compiled) (bool, error) {
	if len(c.vars) == 0 {
		return true, nil
	}
	ids := make([]string, len(c.vars))
	for i := range c.vars {
		ids[i] = c.vars[i].ID
	}
	found, err := s.cfg.Variables.GetMany(ctx, project, ids)
	if err != nil {
		return false, storeError(err, nil)
	}
	for i := range c.vars {
		was := &c.vars[i]
		now, ok := found[was.ID]
		if !ok || now.Name != was.Name || now.CodeName != was.CodeName || now.Type != was.Type ||
			now.IsMulti != was.IsMulti || !slices.Equal(now.Values, was.Values) {
			return false, nil
		}
	}
	return true, nil
}

// bind checks the given values against the version's variables and coerces
// them: unknown keys first (a misspelt key is the likelier mistake), then
// missing variables, then each value. The map has room for extra more.
func (c *compiled) bind(given map[string]any, now time.Time, extra int) (map[string]any, error) {
	var unknown []string
	for k := range given {
		if _, ok := c.index[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		return nil, unknownVariables(unknown)
	}
	if len(given) < len(c.vars) {
		var missing []string
		for _, v := range c.vars {
			if _, ok := given[v.CodeName]; !ok {
				missing = append(missing, v.CodeName)
			}
		}
		return nil, missingVariables(missing)
	}
	values := make(map[string]any, len(c.vars)+extra)
	for i := range c.vars {
		v := &c.vars[i]
		val, err := v.Coerce(given[v.CodeName], now)
		if err != nil {
			return nil, valueError(v, err)
		}
		values[v.CodeName] = val
	}
	return values, nil
}

// valueError words a rejected value: its message names the variable, the
// type expected and the value received.
func valueError(v *variable.Variable, err error) *Error {
	e := invalidf(CodeInvalidVariableValue, variableAttr(v.CodeName), "%s", cut(err.Error()))
	e.Variable, e.Type = v.CodeName, string(v.Type)
	var ve *variable.ValueError
	if errors.As(err, &ve) {
		e.Detail = "Invalid value for variable '" + v.CodeName + "': " + ve.Problem()
		e.Value = ve.Received()
	}
	return withCause(e, err)
}

// variableAttr is the attr of an error about the run's variable name: the
// key of the request's "variables" that is at fault.
func variableAttr(name string) string { return "variables." + name }

// unknownVariables is the 400 of a run given keys that are not variables
// of its endpoint, sorted; attr names the first.
func unknownVariables(keys []string) *Error {
	keys = slices.Compact(slices.Sorted(slices.Values(keys)))
	return invalidf(CodeUnknownVariable, variableAttr(keys[0]), "Unknown variable(s): %s", strings.Join(keys, ", "))
}

// missingVariables is the 400 of a run that lacks the variables names, in
// the endpoint's order; attr names the first.
func missingVariables(names []string) *Error {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = "'" + n + "'"
	}
	return invalidf(CodeRequiredVariableMissing, variableAttr(names[0]), "Required variable(s) %s not provided", strings.Join(quoted, ", "))
}

// checkMaterializedInsightVars checks the keys of a run of a materialized
// insight endpoint: only breakdown variables exist (date_from and date_to
// are refused, the data being computed for the saved range), and each is
// required unless the endpoint lists it as optional, because a materialized
// endpoint must not return all series by omission. The check is the same
// whether the run then reads the table or goes inline.
func checkMaterializedInsightVars(ep *driver.Endpoint, c *compiled, given map[string]any) error {
	props := c.insight.Variables(true)
	var unknown []string
	for k := range given {
		if !slices.Contains(props, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		return unknownVariables(unknown)
	}
	var missing []string
	for _, p := range props {
		if _, ok := given[p]; !ok && !slices.Contains(ep.OptionalBreakdowns, p) {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		return missingVariables(missing)
	}
	return nil
}
