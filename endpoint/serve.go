package endpoint

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/insight"
	"github.com/endpointkit/endpointkit/internal/flight"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/google/uuid"
)

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

// Statistics describe the execution that computed an answer. ElapsedMS is
// measured by the Service; RowsRead and BytesRead are what the engine
// reported (Result.RowsRead, Result.BytesRead), null when it reports
// nothing: they are never estimated.
type Statistics struct {
	ElapsedMS float64 `json:"elapsed_ms"`
	RowsRead  *int64  `json:"rows_read"`
	BytesRead *int64  `json:"bytes_read"`
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

// serveBound is serve once the refresh mode is known and the run's
// values are bound (admit): by serve, or by Admit for the run it
// admitted (admittedRun).
func (s *Service) serveBound(ctx context.Context, ep *driver.Endpoint, c *compiled, req RunRequest, opts runOptions, now time.Time, rec *runRecord, mode string, values map[string]any) (*RunResult, error) {
	var key string
	if !opts.debug {
		key = s.resultKey(ep, c, req.Variables, values, opts, now)
	}
	useCache := key != "" && s.results != nil && mode != RefreshDirect
	var cacheKey string
	if useCache {
		cacheKey = hashKey(key)
	}
	if useCache && mode == RefreshCache {
		if res, rows := s.cachedAnswer(ctx, cacheKey, ep, opts, now); res != nil {
			if sh := s.versionShape(ctx, ep, c, opts.version); sh != nil && len(sh.columns) == len(res.Columns) {
				// As the version was described, whatever the entry says.
				sh.onto(res)
			}
			return s.answerOwned(ctx, ep, res, true, rows, now, rec), nil
		}
	}
	// One closure a run, which the flight calls as it is.
	computeAndStore := func() (flightAnswer, error) {
		res, err := s.computeMeasured(ctx, ep, c, req, values, opts, now)
		if err != nil {
			return flightAnswer{}, err
		}
		if useCache {
			res.encoded = s.storeAnswer(ctx, cacheKey, ep, res)
		}
		return flightAnswer{res, resultRows(res.Results)}, nil
	}
	var (
		a      flightAnswer
		shared bool
		err    error
	)
	if key == "" {
		a, err = computeAndStore()
	} else {
		if mode == RefreshDirect {
			key = "direct:" + key
		}
		a, shared, err = s.runFlights.doAnswer(ctx, key, computeAndStore)
	}
	if err != nil {
		return nil, err
	}
	res, rows := a.res, a.rows
	return s.answerOwned(ctx, ep, res, shared, rows, now, rec), nil
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

// materializedRun reports whether a run follows the rules of a
// materialized endpoint: it runs the current version of one.
func materializedRun(ep *driver.Endpoint, opts runOptions) bool {
	return ep.IsMaterialized && opts.version == ep.CurrentVersion
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

// computeMeasured computes the answer of a run, with its statistics and the
// time of the data it read.
func (s *Service) computeMeasured(ctx context.Context, ep *driver.Endpoint, c *compiled, req RunRequest, values map[string]any, opts runOptions, now time.Time) (*RunResult, error) {
	start := time.Now()
	// One allocation for what the run measures, the context that carries
	// it to noteRead, and what the answer points to.
	m := &struct {
		read      readStatsContext
		stats     Statistics
		refreshed time.Time
	}{}
	m.read.Context = ctx
	res, err := s.computeByKind(&m.read, ep, c, req, values, opts, now)
	if err != nil {
		return nil, err
	}
	m.stats = Statistics{ElapsedMS: ms(time.Since(start)), RowsRead: m.read.stats.rows, BytesRead: m.read.stats.bytes}
	res.Statistics = &m.stats
	m.refreshed = now
	if res.EndpointMaterializedAt != nil {
		m.refreshed = *res.EndpointMaterializedAt
	}
	res.LastRefresh = &m.refreshed
	return res, nil
}

// ownedCopy returns a copy of res, with results as its Results, that
// shares nothing with res: its columns and types, and what its time and
// statistics pointers point to, are its own, in two allocations. Its
// execution id and version instant are left for answerOwned to set.
func ownedCopy(res *RunResult, results any) *RunResult {
	a := &struct {
		out                       RunResult
		refreshed, materializedAt time.Time
		stats                     Statistics
		rowsRead, bytesRead       int64
		debug                     DebugInfo
	}{out: *res}
	out := &a.out
	out.Results = results
	out.ExecutionID, out.EndpointVersionCreatedAt, out.fallbackErr, out.typeErr, out.encoded = "", nil, nil, nil, nil
	nc := len(res.Columns)
	names := make([]string, nc+len(res.Types))
	copy(names, res.Columns)
	copy(names[nc:], res.Types)
	out.Columns, out.Types = names[:nc:nc], names[nc:]
	if res.Columns == nil {
		out.Columns = nil
	}
	if res.Types == nil {
		out.Types = nil
	}
	out.LastRefresh = ownValue(&a.refreshed, res.LastRefresh)
	out.EndpointMaterializedAt = ownValue(&a.materializedAt, res.EndpointMaterializedAt)
	if out.Statistics = ownValue(&a.stats, res.Statistics); out.Statistics != nil {
		a.stats.RowsRead = ownValue(&a.rowsRead, a.stats.RowsRead)
		a.stats.BytesRead = ownValue(&a.bytesRead, a.stats.BytesRead)
	}
	out.Debug = ownValue(&a.debug, res.Debug)
	return out
}

// answerOwned makes out, an answer that nothing but this run holds
// (computed by it, read from the result cache for it, or its copy of a
// flight's answer), the answer of this run: with its execution id, and
// cached telling that it did not compute it. rows is the number of rows
// or series it holds. Nothing of out is kept once it returns: the caller
// may write to any of it.
func (s *Service) answerOwned(ctx context.Context, ep *driver.Endpoint, out *RunResult, cached bool, rows int, now time.Time, rec *runRecord) *RunResult {
	out.ExecutionID = rec.id
	out.IsCached = cached
	out.EndpointVersionCreatedAt = nil
	if t, ok := s.versionCreated(ctx, ep, out.EndpointVersion); ok {
		// In the answer's own allocation.
		out.created = t
		out.EndpointVersionCreatedAt = &out.created
	}
	rec.cached, rec.materialized, rec.inlineReason = cached, out.EndpointMaterialized, out.InlineReason
	if !cached {
		// The failed read is reported by the run that made it only.
		rec.fallbackErr, rec.typeErr = out.fallbackErr, out.typeErr
	}
	out.fallbackErr, out.typeErr = nil, nil
	rec.rows = rows
	rec.stats = out.Statistics
	s.markExecuted(ep, now)
	return out
}

// resultRows counts the rows (SQL) or series and cohorts (insight) of a
// computed answer, -1 when it cannot tell.
func resultRows(results any) int {
	switch r := results.(type) {
	case [][]any:
		return len(r)
	case *insight.Result:
		if r.Kind == insight.Retention {
			return len(r.Cohorts)
		}
		if r.Kind == insight.Lifecycle {
			return len(r.Lifecycle)
		}
		return len(r.Series)
	}
	return -1
}

// resultKey returns the key of a run's answer, which keys its flight
// (runFlights) as it is and the result cache hashed (hashKey): the project, the
// endpoint's id, the version and everything the answer depends on besides
// the data. For a SQL endpoint that is the coerced values (so "-7d" keys
// the day it means, not its text), the limit and the offset; for an
// insight endpoint the statement compiled for the values at now, which
// holds the dates they resolve to. values are a SQL run's values as admit
// coerced them; an insight run that cannot be keyed returns "" and goes
// uncached, computeByKind reporting the error.
func (s *Service) resultKey(ep *driver.Endpoint, c *compiled, given, values map[string]any, opts runOptions, now time.Time) string {
	var buf [256]byte // most keys fit: the key is then one allocation, its string
	b := buf[:0]
	// v2: a float column's integral values are written 256.0 (jsonResults);
	// an entry of v1, written 256, is never read.
	b = appendKeyStr(b, "endpointkit result v2")
	b = appendKeyStr(b, ep.ProjectID)
	b = appendKeyStr(b, ep.ID)
	b = appendKeyInt(b, int64(opts.version))
	// The state the answer is computed in: inline, or from which stored
	// table, so that no answer of another state is ever given.
	if materializedRun(ep, opts) {
		table, at, ok := servingTable(ep, c, now)
		b = appendKeyStr(b, "materialized")
		b = appendKeyStr(b, tableKey(ep, c))
		if ok {
			b = appendKeyStr(b, table)
			b = appendKeyInt(b, at.UnixNano())
		}
	} else {
		b = appendKeyStr(b, "inline")
	}
	if c.insight != nil {
		applied, err := c.insight.Apply(given)
		if err != nil {
			return ""
		}
		stmt, err := insight.Compile(applied, s.cfg.Executor.Engine(), now)
		if err != nil {
			return ""
		}
		b = appendKeyStr(b, "insight")
		b = appendKeyStr(b, stmt.SQL)
		b = appendKeyInt(b, int64(len(stmt.Args)))
		for _, a := range stmt.Args {
			var ok bool
			if b, ok = appendKeyValue(b, a); !ok {
				return ""
			}
		}
		return string(b)
	}
	b = appendKeyStr(b, "sql")
	b = appendKeyInt(b, int64(opts.limit))
	b = appendKeyInt(b, int64(opts.offset))
	b = appendKeyInt(b, int64(len(c.vars)))
	for i := range c.vars {
		name := c.vars[i].CodeName
		b = appendKeyStr(b, name)
		var ok bool
		if b, ok = appendKeyValue(b, values[name]); !ok {
			return ""
		}
	}
	return string(b)
}

// hashKey is the result cache's key of a run's key (resultKey): its
// SHA-256 in hex, so that the cache holds no value of a run.
func hashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// appendKeyTag, appendKeyStr and appendKeyValue append the parts of a key
// (resultKey), each tagged with its kind and length so that no two
// sequences of parts write the same bytes. They return the slice, which
// lets the compiler keep resultKey's buffer on the stack.
func appendKeyTag(b []byte, t byte, n uint64) []byte {
	return binary.AppendUvarint(append(b, t), n)
}

func appendKeyInt(b []byte, n int64) []byte { return appendKeyTag(b, 'i', uint64(n)) }

func appendKeyStr(b []byte, s string) []byte {
	return append(appendKeyTag(b, 's', uint64(len(s))), s...)
}

func appendKeyBool(b []byte, x bool) []byte {
	if x {
		return appendKeyTag(b, 'b', 1)
	}
	return appendKeyTag(b, 'b', 0)
}

// appendKeyValue appends a coerced value or a driver argument; it reports
// false for a type it does not know, which the caller then does not cache.
// It is not recursive, so that the compiler sees that b goes to the result
// only.
func appendKeyValue(b []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case nil:
		b = appendKeyTag(b, 'n', 0)
	case string:
		b = appendKeyStr(b, x)
	case []byte:
		b = append(appendKeyTag(b, 'y', uint64(len(x))), x...)
	case int64:
		b = appendKeyTag(b, 'i', uint64(x))
	case int:
		b = appendKeyTag(b, 'i', uint64(x))
	case float64:
		b = appendKeyTag(b, 'f', math.Float64bits(x))
	case bool:
		b = appendKeyBool(b, x)
	case time.Time:
		b = appendKeyStr(appendKeyTag(b, 't', uint64(x.UnixNano())), x.Location().String())
	case variable.Timestamp:
		b = appendKeyTag(b, 'T', uint64(x.Time.UnixNano()))
		b = appendKeyBool(b, x.DateOnly)
	case []string:
		b = appendKeyTag(b, 'l', uint64(len(x)))
		for _, s := range x {
			b = appendKeyStr(b, s)
		}
	default:
		return b, false
	}
	return b, true
}

// cachedHeader is what a cached answer holds besides its results, encoded
// as one line of JSON before the results' JSON.
type cachedHeader struct {
	Columns        []string    `json:"columns"`
	Types          []string    `json:"types"`
	Rows           int         `json:"rows"`
	HasMore        bool        `json:"has_more,omitempty"`
	Materialized   bool        `json:"materialized,omitempty"`
	MaterializedAt *time.Time  `json:"materialized_at,omitempty"`
	LastRefresh    time.Time   `json:"last_refresh"`
	Statistics     *Statistics `json:"statistics,omitempty"`
}

// newAnswerEncoder returns an encoder that writes JSON to buf as the HTTP
// API writes answers (HTML characters as they are), so that an answer
// encoded, cached or shared, reads byte for byte as a computed one.
func newAnswerEncoder(buf *bytes.Buffer) *json.Encoder {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	return enc
}

// encodeResults returns the JSON of an answer's results, of columns of
// kinds (a float column's values written as floats, see jsonResults),
// false when JSON cannot carry them (NaN, ±Inf).
func encodeResults(results any, kinds []ColumnKind) (json.RawMessage, bool) {
	var buf bytes.Buffer
	if newAnswerEncoder(&buf).Encode(jsonResults(results, kinds)) != nil {
		return nil, false
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), true
}

// storeAnswer caches res under key until its data is as old as ep's data
// freshness, and returns its results' JSON as it encoded them (nil when
// it did not), so that the runs that joined its flight share them
// without encoding them again. An answer JSON cannot carry (NaN, ±Inf) is
// not cached: the HTTP API refuses it anyway. A failure of the cache is
// ignored; the run has its answer.
func (s *Service) storeAnswer(ctx context.Context, key string, ep *driver.Endpoint, res *RunResult) json.RawMessage {
	expires := res.LastRefresh.Add(dataFreshness(ep))
	if !s.now().Before(expires) {
		return nil
	}
	var buf bytes.Buffer
	enc := newAnswerEncoder(&buf)
	hdr := cachedHeader{
		Columns: res.Columns, Types: res.Types, Rows: resultRows(res.Results), HasMore: res.HasMore,
		Materialized: res.EndpointMaterialized, MaterializedAt: res.EndpointMaterializedAt,
		LastRefresh: *res.LastRefresh, Statistics: res.Statistics,
	}
	if enc.Encode(hdr) != nil {
		return nil
	}
	mark := buf.Len()
	if enc.Encode(jsonResults(res.Results, res.kinds)) != nil {
		return nil
	}
	entry := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	// A copy: the cache may keep the entry it is given.
	results := bytes.Clone(entry[mark:])
	_ = s.results.Set(context.WithoutCancel(ctx), key, entry, expires)
	return results
}

// cachedAnswer returns the answer cached under key if its data is still
// younger than ep's data freshness at now, and how many rows it holds; nil
// when there is none. An entry that does not decode is a miss.
func (s *Service) cachedAnswer(ctx context.Context, key string, ep *driver.Endpoint, opts runOptions, now time.Time) (*RunResult, int) {
	b, ok, err := s.results.Get(ctx, key, now)
	if err != nil || !ok {
		return nil, 0
	}
	// The results are not scanned here: whoever encodes the answer checks
	// a json.RawMessage as it copies it, and the entries were encoded by
	// storeAnswer. A line that is not an array is not an entry of ours.
	line, results, ok := bytes.Cut(b, []byte("\n"))
	if !ok || len(results) < 2 || results[0] != '[' || results[len(results)-1] != ']' {
		return nil, 0
	}
	var hdr cachedHeader
	if json.Unmarshal(line, &hdr) != nil || !now.Before(hdr.LastRefresh.Add(dataFreshness(ep))) {
		return nil, 0
	}
	refreshed := hdr.LastRefresh
	return &RunResult{
		Name:                   ep.Name,
		EndpointVersion:        opts.version,
		Columns:                nonNil(hdr.Columns),
		Types:                  nonNil(hdr.Types),
		Results:                json.RawMessage(results),
		HasMore:                hdr.HasMore,
		EndpointMaterialized:   hdr.Materialized,
		EndpointMaterializedAt: hdr.MaterializedAt,
		LastRefresh:            &refreshed,
		Statistics:             hdr.Statistics,
	}, hdr.Rows
}

// flightGroup runs each computation once for all the runs that ask for it
// at the same time (internal/flight): the runs that join a computation
// under way get each a copy of its answer, its results as JSON (see
// sharedAnswer).
type flightGroup struct {
	g flight.Group[flightAnswer, *sharedAnswer]
}

// flightAnswer is an answer of a flight and the number of rows or series
// it holds.
type flightAnswer struct {
	res  *RunResult
	rows int
}

// sharedAnswer is a flight's answer as the runs that joined it copy it:
// its results as JSON, as the result cache holds them (so that, as a
// cached answer, it is the same whatever the executor's values are, and
// a copy of it is one copy of bytes), and its count of rows or series.
type sharedAnswer struct {
	res  *RunResult
	rows int
}

// shareAnswer returns a as the runs that joined its flight copy it, false
// when its results are not something JSON can carry (NaN, ±Inf).
func shareAnswer(a flightAnswer) (*sharedAnswer, bool) {
	results, ok := json.RawMessage(a.res.encoded), a.res.encoded != nil
	if !ok {
		results, ok = encodeResults(a.res.Results, a.res.kinds)
	}
	if !ok {
		return nil, false
	}
	return &sharedAnswer{res: ownedCopy(a.res, results), rows: a.rows}, true
}

// Copy returns a copy of the shared answer for one of the runs that
// joined its flight.
func (a *sharedAnswer) Copy() flightAnswer {
	return flightAnswer{ownedCopy(a.res, append(json.RawMessage(nil), a.res.Results.(json.RawMessage)...)), a.rows}
}

// do returns fn's answer for key, and the number of rows or series it
// holds: computed by this caller, or shared with the caller already
// computing it (shared true). Either way the answer is this caller's own:
// a caller that joined the computation gets its own copy of the answer,
// its results as JSON, and the caller that computed it the answer fn
// returned, which nothing else holds once do returns. When the answer
// is not something JSON can carry, each caller that joined computes its
// own. A caller waits for the computation at most as long as its own
// context lasts; when the computing caller's context was cancelled, a
// waiting caller whose context is alive computes again rather than
// inherit the cancellation.
func (g *flightGroup) do(ctx context.Context, key string, fn func() (*RunResult, error)) (res *RunResult, rows int, shared bool, err error) {
	a, shared, err := g.doAnswer(ctx, key, func() (flightAnswer, error) {
		res, err := fn()
		if err != nil {
			return flightAnswer{}, err
		}
		return flightAnswer{res, resultRows(res.Results)}, nil
	})
	return a.res, a.rows, shared, err
}

// doAnswer is do with fn's answer counted by fn.
func (g *flightGroup) doAnswer(ctx context.Context, key string, fn func() (flightAnswer, error)) (flightAnswer, bool, error) {
	a, shared, err := g.g.Do(ctx, key, fn, shareAnswer)
	if err != nil {
		return flightAnswer{}, false, flightError(ctx, err)
	}
	return a, shared, nil
}

// flightError words the error of a flight as a run's: a caller whose
// context ended while it waited, a computation that panicked.
func flightError(ctx context.Context, err error) error {
	var pe *flight.PanicError
	switch {
	case errors.Is(err, flight.ErrAbandoned):
		return contextError(ctx.Err())
	case errors.As(err, &pe):
		return fmt.Errorf("endpoint: run panicked: %v", pe.Value)
	}
	return err
}

// waiting returns how many runs wait for the flight of key.
func (g *flightGroup) waiting(key string) int { return g.g.Waiting(key) }

// contextError words the end of a run's context as an execution would.
func contextError(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return withCause(NewError(ErrTimeout, CodeTimeout, "", "query timed out"), err)
	}
	return withCause(NewError(ErrExecution, CodeExecutionFailed, "", "query execution failed"), err)
}

// readStats collects what the engine reported reading during one run.
type readStats struct {
	rows, bytes *int64
}

type readStatsKey struct{}

// readStatsContext is a run's context that carries its readStats (under
// readStatsKey), in one allocation with them rather than
// context.WithValue's own.
type readStatsContext struct {
	context.Context
	stats readStats
}

// Value implements context.Context.
func (c *readStatsContext) Value(key any) any {
	if key == (readStatsKey{}) {
		return &c.stats
	}
	return c.Context.Value(key)
}

// noteRead adds what res says the engine read to the run's statistics,
// when the run collects them.
func noteRead(ctx context.Context, res *driver.Result) {
	st, _ := ctx.Value(readStatsKey{}).(*readStats)
	if st == nil {
		return
	}
	st.rows = addCount(st.rows, res.RowsRead)
	st.bytes = addCount(st.bytes, res.BytesRead)
}

func addCount(sum, n *int64) *int64 {
	switch {
	case n == nil:
		return sum
	case sum == nil:
		v := *n
		return &v
	}
	v := *sum + *n
	return &v
}

// versionKey names one version of one endpoint.
type versionKey struct {
	id      string
	version int
}

// versionCreated returns when version n of ep was saved, from a memo of
// this Service (versions never change) or the store; false when the store
// cannot say.
func (s *Service) versionCreated(ctx context.Context, ep *driver.Endpoint, n int) (time.Time, bool) {
	if n == 1 && ep.VersionsCount <= 1 {
		return ep.CreatedAt, true
	}
	k := versionKey{ep.ID, n}
	if t, _, ok, _ := s.versionTimes.get(k); ok {
		return t, true
	}
	gen := s.versionTimes.generation()
	v, err := s.cfg.Endpoints.Version(ctx, ep.ProjectID, ep.ID, n)
	if err != nil {
		return time.Time{}, false
	}
	s.versionTimes.put(k, v.CreatedAt, time.Time{}, gen)
	return v.CreatedAt, true
}

// newExecutionID returns a fresh execution id: a random (version 4) UUID,
// as uuid.NewString makes, in one allocation (the text) where NewString
// makes two.
func newExecutionID() string {
	var u uuid.UUID
	_, _ = rand.Read(u[:])  // crypto/rand.Read never fails (it ends the program instead)
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // the variant of RFC 9562
	return u.String()
}
