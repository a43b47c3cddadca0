package endpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/apikey"
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
	// read nor written (see serveBound). Other values are refused, so that
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

// Refresh modes of a run (RunRequest.Refresh).
const (
	// RefreshCache serves a fresh cached answer when there is one, and
	// computes (and caches) one otherwise. It is the default.
	RefreshCache = "cache"
	// RefreshForce computes the answer now and caches it.
	RefreshForce = "force"
	// RefreshDirect, for materialized endpoints only, answers from the
	// stored table (inline when no fresh table can answer), neither
	// reading nor writing the cache.
	RefreshDirect = "direct"
)

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
	// cache encoded them, for the runs that joined its flight (serveBound).
	encoded []byte
	// cacheErr is why the answer was not kept in the result cache
	// (ErrAnswerNotCached), reported by the run that computed it.
	cacheErr error
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

// ColumnKind is the kind of the answer's column i, ColumnKinds()[i], or
// KindOther when ColumnKinds has none for it. Unlike ColumnKinds, it
// copies nothing: an encoder of the answer asks it for each value without
// an allocation.
func (r *RunResult) ColumnKind(i int) ColumnKind {
	if i >= 0 && i < len(r.kinds) {
		return r.kinds[i]
	}
	return KindOther
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
// the Observer (see beginRun, endRun and observer.go).
func (s *Service) Run(ctx context.Context, project, name string, req RunRequest) (*RunResult, error) {
	rec := s.beginRun(project, name, req)
	res, err := s.run(ctx, project, name, req, rec)
	return s.endRun(ctx, rec, res, err)
}

// runRecord follows one run from Run's start to its end, for the run log
// and the Observer.
type runRecord struct {
	id           string
	project      string
	name         string
	start        time.Time // wall clock, for the duration
	at           time.Time // the Service's clock
	refresh      string
	token        bool
	tokenKeyID   string
	keyID        string
	ep           *driver.Endpoint
	version      int
	cached       bool
	materialized bool
	inlineReason string
	fallbackErr  error
	typeErr      error
	cacheErr     error
	rows         int
	stats        *Statistics
	// log is the run's log entry, and the counts it points to, made by
	// endRun in the record's own allocation: the counts are copied from
	// the answer's statistics, which are its caller's to write to.
	log struct {
		e                   driver.RunLogEntry
		rows                int
		rowsRead, bytesRead int64
	}
}

func (s *Service) beginRun(project, name string, req RunRequest) *runRecord {
	start := time.Now()
	at := systemInstant(start) // the Service's clock (systemNow), read once with start
	if s.cfg.Now != nil {
		at = s.now()
	}
	r := &runRecord{
		id: newExecutionID(), project: project, name: name,
		start: start, at: at, refresh: req.Refresh,
	}
	if r.refresh == "" {
		r.refresh = RefreshCache
	}
	if req.Token != nil {
		r.token, r.tokenKeyID = true, req.Token.KeyID
	}
	r.keyID = req.KeyID
	return r
}

// endRun records a run that ends with res or err in the run log (when its
// endpoint was found) and reports it to the Observer; it returns res and
// err as they are. A failure to record is reported to the Observer, never
// to the caller, whose answer is ready.
func (s *Service) endRun(ctx context.Context, r *runRecord, res *RunResult, err error) (*RunResult, error) {
	took := time.Since(r.start)
	status, code := 200, ""
	if err != nil {
		status = StatusOf(err)
		var e *Error
		if errors.As(err, &e) {
			code = e.Code
		}
	}
	ev := RunEvent{
		Project: r.project, Endpoint: r.name, Version: r.version, ExecutionID: r.id,
		Duration: took, Status: status, Code: code, Err: err,
		Refresh: r.refresh, Cached: r.cached, Materialized: r.materialized, Token: r.token, KeyID: r.keyID, Rows: -1,
		InlineReason: r.inlineReason, ReadErr: r.fallbackErr, TypeErr: r.typeErr, CacheErr: r.cacheErr, RequestID: RequestID(ctx),
	}
	if r.ep != nil {
		q := &r.log
		q.e = driver.RunLogEntry{
			ExecutionID: r.id, ProjectID: r.ep.ProjectID, EndpointID: r.ep.ID,
			At: r.at, Version: r.version, DurationMS: ms(took),
			Status: status, ErrorCode: code, Refresh: r.refresh,
			Cached: r.cached, Materialized: r.materialized,
			Token: r.token, TokenKeyID: r.tokenKeyID, KeyID: r.keyID,
		}
		e := &q.e
		if err == nil {
			if r.rows >= 0 {
				q.rows = r.rows
				e.Rows = &q.rows
				ev.Rows = r.rows
			}
			// A cached run (from the result cache, or one that joined
			// another's flight) read nothing of the engine: its counts
			// are the computing run's, logged once, by that run.
			if st := r.stats; st != nil && !r.cached {
				e.RowsRead, e.BytesRead = ownValue(&q.rowsRead, st.RowsRead), ownValue(&q.bytesRead, st.BytesRead)
			}
		}
		// Written in the background (runlog.go): a run never
		// waits for the log's store.
		if lerr := s.logs.offer(logWrite{entry: e}); lerr != nil {
			ev.LogErr = lerr
		}
	}
	s.observer.ObserveRun(ctx, ev)
	return res, err
}

// RowWriter is where RunRows writes a run's answer as the engine reads its
// rows: its head once, then each row.
type RowWriter interface {
	// Begin is called once, before the first row, with the answer's head:
	// its Name, EndpointVersion, ExecutionID, Columns, Types and
	// ColumnKinds (the version's, as every answer's); its Results are nil
	// and HasMore is not known yet (RunRows's answer says it). An error
	// ends the run, which RunRows returns.
	Begin(head *RunResult) error
	// Row is called with each row in order, its values as a run's answer
	// holds them (cast to the column's kind). The slice and its values
	// are the Service's again once Row returns: copy what you keep. An
	// error ends the run, which RunRows returns.
	Row(row []any) error
}

// ErrWriterStopped is in the chain of RunRows's error when the RowWriter
// stopped the rows (its Begin or Row failed): the answer was cut by its
// writer (a client that went away, a bound on the written answer), not by
// the run.
var ErrWriterStopped = errors.New("endpoint: the answer's writer stopped")

// RunRows runs the endpoint as Run does, every step and rule of Run
// included (options, the endpoint's state, the version, the variables
// bound, the tenant scope, the limits, the run log and the Observer), and
// writes the answer's rows to w as the engine reads them, so that an
// answer of many rows is never held whole: memory does not grow with its
// rows.
//
// A run is streamed when the executor can hand its rows over
// (driver.RowQuerier), the endpoint is a SQL endpoint whose version's
// columns are known, the run does not ask for debug, and the result
// cache holds no answer for it. Then w.Begin is called before the first
// row, and the answer returned has no Results (nil), with HasMore and the
// statistics of the run. With the result cache on, the rows are also
// encoded for the cache as they pass, and the answer kept when they end,
// as Run keeps its own; one that weighs more than
// Config.MaxCachedAnswerBytes is written on and not kept
// (RunEvent.CacheErr). A streamed run computes its own answer: it does
// not join an identical run under way. Otherwise w is not called, and
// the answer returned is Run's (a cached one, say), with its Results, for
// the caller to write.
//
// An error returned before w.Begin is Run's, which the caller answers as
// it would Run's. An error after it (the rows passed max_result_bytes,
// the run timed out, the engine failed, or w itself failed, then
// wrapping ErrWriterStopped) ends an answer whose head and first rows are
// written already: the caller ends it with the error, in words its reader
// sees (httpapi writes CSV's CSVErrorMarker record, NDJSON's error line
// and the X-Endpointkit-Error trailer).
func (s *Service) RunRows(ctx context.Context, project, name string, req RunRequest, w RowWriter) (*RunResult, error) {
	rec := s.beginRun(project, name, req)
	res, err := s.runRows(ctx, project, name, req, rec, w)
	return s.endRun(ctx, rec, res, err)
}

func (s *Service) runRows(ctx context.Context, project, name string, req RunRequest, rec *runRecord, w RowWriter) (*RunResult, error) {
	p, err := s.prepareRecorded(ctx, project, name, req, rec)
	if err != nil {
		return nil, err
	}
	sh, ok := s.streamShape(ctx, p)
	if !ok {
		return s.serve(ctx, p.ep, p.c, p.req, p.opts, p.now, rec)
	}
	mode, err := refreshMode(p.ep, p.opts)
	if err != nil {
		return nil, err
	}
	values, err := s.admit(p.ep, p.c, p.req, p.opts, p.now)
	if err != nil {
		return nil, err
	}
	rs := &rowStream{w: w, sh: sh, limit: p.opts.limit, head: RunResult{
		Name: p.ep.Name, EndpointVersion: p.opts.version, ExecutionID: rec.id,
	}}
	if s.results != nil && mode != RefreshDirect {
		// The result cache: an answer it holds is written whole; one it
		// does not is streamed, and kept as its rows pass (cacheFill).
		if key := s.resultKey(p.ep, p.c, p.req.Variables, values, p.opts, p.now); key != "" {
			cacheKey := hashKey(key)
			if mode == RefreshCache {
				if res := s.cacheHit(ctx, p.ep, p.c, p.opts, p.now, rec, cacheKey); res != nil {
					return res, nil
				}
			}
			rs.fill = s.newCacheFill(cacheKey, sh.kinds)
		}
	}
	res, err := s.computeMeasured(&streamContext{Context: ctx, rs: rs}, p.ep, p.c, p.req, values, p.opts, p.now)
	if rs.werr != nil {
		return nil, fmt.Errorf("%w: %w", ErrWriterStopped, rs.werr)
	}
	if err != nil {
		return nil, err
	}
	if !rs.begun {
		// No statement took the rows (none should fail to): the answer
		// is whole, for the caller to write.
		if rs.fill != nil {
			res.encoded, res.cacheErr = s.storeAnswer(ctx, rs.fill.key, p.ep, res)
		}
		return s.answerOwned(ctx, p.ep, res, false, resultRows(res.Results), p.now, rec), nil
	}
	res.Results, res.HasMore = nil, rs.more
	if rs.typeErr != nil {
		res.typeErr = rs.typeErr
	}
	if rs.fill != nil {
		if rs.sh == nil {
			// Its columns are not the version's: kept by no one.
			rs.fill.drop(fmt.Errorf("%w: %w", ErrAnswerNotCached, rs.typeErr))
		}
		res.cacheErr = s.storeFill(ctx, rs.fill, p.ep, res, &rs.head, rs.rows)
	}
	return s.answerOwned(ctx, p.ep, res, false, rs.rows, p.now, rec), nil
}

// streamShape is the shape of the version a run streams, false when the
// run is not streamed (see RunRows).
func (s *Service) streamShape(ctx context.Context, p prepared) (*shape, bool) {
	if _, ok := s.cfg.Executor.(driver.RowQuerier); !ok || p.c.insight != nil || p.opts.debug {
		return nil, false
	}
	// Known before the rows are read, so that the head has the
	// version's columns; versionShape keeps it with the compiled
	// version, where the run's own call finds it.
	sh := s.versionShape(ctx, p.ep, p.c, p.opts.version)
	return sh, sh != nil
}

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
	return answered{stored: s.storedReadOf(ctx, p.ep, p.c, p.opts, p.now).why == readsStored, admitted: a}, nil
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

// serve answers a run whose endpoint, version and values are known: from
// the result cache when the refresh mode allows and a fresh answer is
// there, otherwise by computing it, once for all identical runs under way
// at the same time (single flight), and caching what was computed.
//
// A cached answer is keyed by the endpoint's id, the version and every
// value and option that can change it (resultKey), so that a new version
// or another value never meets an old answer; it serves while its data is
// younger than the endpoint's data freshness as set now. Runs that ask for
// debug bypass the cache and the flight, since they ask how the query ran.
func (s *Service) serve(ctx context.Context, ep *driver.Endpoint, c *compiled, req RunRequest, opts runOptions, now time.Time, rec *runRecord) (*RunResult, error) {
	mode, err := refreshMode(ep, opts)
	if err != nil {
		return nil, err
	}
	// The rules of the endpoint's state first: a cached answer is never
	// given to a request that computing it would refuse.
	values, err := s.admit(ep, c, req, opts, now)
	if err != nil {
		return nil, err
	}
	return s.serveBound(ctx, ep, c, req, opts, now, rec, mode, values)
}

// refreshMode is the refresh mode of a run, RefreshCache when it names
// none; RefreshDirect is refused for an endpoint that is not materialized.
func refreshMode(ep *driver.Endpoint, opts runOptions) (string, error) {
	mode := opts.refresh
	if mode == "" {
		mode = RefreshCache
	}
	if mode == RefreshDirect && !ep.IsMaterialized {
		return "", invalidf(CodeInvalidInput, "refresh", "refresh 'direct' reads the stored table of a materialized endpoint; endpoint '%s' is not materialized.", ep.Name)
	}
	return mode, nil
}

// admit checks a run's variables and options against the rules of the
// state its endpoint is in: a SQL run binds every variable; an insight run
// takes no limit or offset, and its variables are those of a materialized
// insight (breakdowns only, required unless optional) when it runs the
// current version of a materialized endpoint, the inline ones otherwise.
// Every refresh mode, cached or not, runs it before anything else. A SQL
// run's coerced values are returned, for its cache key.
func (s *Service) admit(ep *driver.Endpoint, c *compiled, req RunRequest, opts runOptions, now time.Time) (map[string]any, error) {
	if c.insight == nil {
		return c.bind(req.Variables, now, 3) // room for runSQLInline's limit and offset
	}
	if req.Limit != nil {
		return nil, invalidf(CodeInvalidInput, "limit", "limit and offset apply to SQL endpoints only; an insight endpoint returns its whole result.")
	}
	if req.Offset != nil {
		return nil, invalidf(CodeInvalidInput, "offset", "limit and offset apply to SQL endpoints only; an insight endpoint returns its whole result.")
	}
	if materializedRun(ep, opts) {
		return nil, checkMaterializedInsightVars(ep, c, req.Variables)
	}
	if _, err := c.insight.Apply(req.Variables); err != nil {
		return nil, insightRunError(err)
	}
	return nil, nil
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

// checkQueryRequest refuses what RunQuery refuses before it compiles the
// query (none, bad options, variables by name on a SQL query), and returns
// the run's options; Admit checks it too, before any budget is charged.
func (s *Service) checkQueryRequest(req QueryRequest) (runOptions, error) {
	if req.Query == nil {
		return runOptions{}, required("query")
	}
	opts, err := s.runOptions(RunRequest{Limit: req.Limit, Offset: req.Offset, Debug: req.Debug})
	if err != nil {
		return runOptions{}, err
	}
	if req.Query.Kind == KindSQL && len(req.Variables) > 0 {
		return runOptions{}, invalidf(CodeInvalidInput, "variables",
			"A %s carries its test values in query.variables.<id>.value; variables by name apply to insight queries only.", KindSQL)
	}
	return opts, nil
}
