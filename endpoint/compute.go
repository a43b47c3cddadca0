package endpoint

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/insight"
	"github.com/endpointkit/endpointkit/internal/flight"
	"github.com/endpointkit/endpointkit/internal/jsontext"
	"github.com/endpointkit/endpointkit/materialize"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/scope"
	"github.com/endpointkit/endpointkit/sql/sqltoken"
	"github.com/endpointkit/endpointkit/variable"
)

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
		if res := s.cacheHit(ctx, ep, c, opts, now, rec, cacheKey); res != nil {
			return res, nil
		}
	}
	// One closure a run, which the flight calls as it is.
	computeAndStore := func() (flightAnswer, error) {
		res, err := s.computeMeasured(ctx, ep, c, req, values, opts, now)
		if err != nil {
			return flightAnswer{}, err
		}
		if useCache {
			res.encoded, res.cacheErr = s.storeAnswer(ctx, cacheKey, ep, res)
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
		table, at, ok := s.servingTable(ep, c, now)
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

// The JSON form of a float column: every value a JSON number written as a
// float, 256.0 as well as 256.83, so that a client's JSON decoder reads
// the column as one kind whatever the row (encoding/json alone writes the
// float 256 as 256, which most decoders read as an integer). Only the
// encoding changes: the Go values of RunResult.Results stay float64.
// Every writer of an answer's JSON writes it so: the HTTP API's JSON and
// NDJSON answers (which write their rows themselves, as
// appendFloatJSON does), the result cache and the answers shared by identical
// runs (encodeResults), and encoding/json on a RunResult (MarshalJSON:
// the MCP tools, a debug answer, a host).

// appendFloatJSON appends f as encoding/json writes a float64, and ".0"
// after it when that text is an integer's (256 becomes 256.0; 1e+21 and
// 2.5 stay as they are). f must be finite, as encoding/json requires.
func appendFloatJSON(buf []byte, f float64) []byte {
	n := len(buf)
	buf = appendJSONFloat(buf, f)
	return floatText(buf, n)
}

// floatText appends ".0" to buf when buf[from:], a JSON number's text, is
// an integer's (no fraction, no exponent), making it a float's.
func floatText(buf []byte, from int) []byte {
	if from >= len(buf) {
		return buf
	}
	for _, c := range buf[from:] {
		if c == '.' || c == 'e' || c == 'E' {
			return buf
		}
	}
	return append(buf, ".0"...)
}

// appendJSONFloat appends f as encoding/json writes a float64.
func appendJSONFloat(buf []byte, f float64) []byte {
	abs := f
	if abs < 0 {
		abs = -abs
	}
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	buf = strconv.AppendFloat(buf, f, format, -1, 64)
	if format == 'e' {
		// e-09 to e-9, as encoding/json.
		if n := len(buf); n >= 4 && buf[n-4] == 'e' && buf[n-3] == '-' && buf[n-2] == '0' {
			buf[n-2] = buf[n-1]
			buf = buf[:n-1]
		}
	}
	return buf
}

// floatJSON is a value of a float column as encoding/json writes it in
// an answer.
type floatJSON float64

// MarshalJSON writes f with appendFloatJSON; NaN and the infinities are
// refused as encoding/json refuses them.
func (f floatJSON) MarshalJSON() ([]byte, error) {
	x := float64(f)
	if x != x || x > maxFloat || x < -maxFloat {
		return nil, &json.UnsupportedValueError{Value: reflect.ValueOf(x), Str: strconv.FormatFloat(x, 'g', -1, 64)}
	}
	return appendFloatJSON(nil, x), nil
}

const maxFloat = 1.7976931348623157e308

// hasFloat reports whether kinds name a float column.
func hasFloat(kinds []ColumnKind) bool {
	for _, k := range kinds {
		if k == KindFloat {
			return true
		}
	}
	return false
}

// jsonResults is results as encoding/json should write them in an answer
// of columns of kinds: rows whose float columns' values are floatJSON (a
// copy: the rows are the caller's), anything else as it is.
func jsonResults(results any, kinds []ColumnKind) any {
	rows, ok := results.([][]any)
	if !ok || !hasFloat(kinds) {
		return results
	}
	out := make([][]any, len(rows))
	cells := make([]any, 0, len(rows)*len(kinds))
	for i, row := range rows {
		if row == nil {
			continue
		}
		start := len(cells)
		for j, v := range row {
			if j < len(kinds) && kinds[j] == KindFloat {
				switch x := v.(type) {
				case float64:
					v = floatJSON(x)
				case float32:
					v = floatJSON(x)
				}
			}
			cells = append(cells, v)
		}
		out[i] = cells[start:len(cells):len(cells)]
	}
	return out
}

// cacheHit returns the answer the result cache holds under cacheKey
// (cachedAnswer), as this run's own, nil when there is none. Its columns
// are the version's as it was described, whatever the entry says.
func (s *Service) cacheHit(ctx context.Context, ep *driver.Endpoint, c *compiled, opts runOptions, now time.Time, rec *runRecord, cacheKey string) *RunResult {
	res, rows := s.cachedAnswer(ctx, cacheKey, ep, opts, now)
	if res == nil {
		return nil
	}
	if sh := s.versionShape(ctx, ep, c, opts.version); sh != nil && len(sh.columns) == len(res.Columns) {
		sh.onto(res)
	}
	return s.answerOwned(ctx, ep, res, true, rows, now, rec)
}

// ErrAnswerNotCached is in the chain of RunEvent.CacheErr: a run's answer,
// computed and answered, was not kept in the result cache. The error
// says why: it weighed more than Config.MaxCachedAnswerBytes, JSON cannot
// carry one of its values (NaN, ±Inf), or the cache failed.
var ErrAnswerNotCached = errors.New("endpoint: the answer was not kept in the result cache")

// storeAnswer caches res under key until its data is as old as ep's data
// freshness, and returns its results' JSON as it encoded them (nil when
// it could not), so that the runs that joined its flight share them
// without encoding them again. An answer that is not kept (JSON cannot
// carry it, it weighs more than MaxCachedAnswerBytes, the cache failed)
// is answered all the same; the error, wrapping ErrAnswerNotCached, says
// why.
func (s *Service) storeAnswer(ctx context.Context, key string, ep *driver.Endpoint, res *RunResult) (json.RawMessage, error) {
	results, ok := encodeResults(res.Results, res.kinds)
	if !ok {
		return nil, notCachedNotJSON
	}
	return results, s.storeEncoded(ctx, key, ep, res, resultRows(res.Results), results)
}

// notCachedNotJSON is the CacheErr of an answer JSON cannot carry.
var notCachedNotJSON = fmt.Errorf("%w: a value of it is one JSON cannot carry (NaN or an infinity)", ErrAnswerNotCached)

// storeEncoded caches the answer res of rows rows or series, its results
// encoded as results (encodeResults' JSON), under key until its data is as
// old as ep's data freshness. The entry is one line of JSON, the answer's
// head (cachedHeader), then its results.
func (s *Service) storeEncoded(ctx context.Context, key string, ep *driver.Endpoint, res *RunResult, rows int, results []byte) error {
	expires := res.LastRefresh.Add(dataFreshness(ep))
	if !s.now().Before(expires) {
		return nil // as old as it may be served already: nothing to keep
	}
	var buf bytes.Buffer
	hdr := cachedHeader{
		Columns: res.Columns, Types: res.Types, Rows: rows, HasMore: res.HasMore,
		Materialized: res.EndpointMaterialized, MaterializedAt: res.EndpointMaterializedAt,
		LastRefresh: *res.LastRefresh, Statistics: res.Statistics,
	}
	if err := newAnswerEncoder(&buf).Encode(hdr); err != nil {
		return fmt.Errorf("%w: %w", ErrAnswerNotCached, err)
	}
	if limit := s.cfg.MaxCachedAnswerBytes; limit > 0 && int64(buf.Len()+len(results)) > limit {
		return s.tooLargeToCache()
	}
	buf.Write(results)
	if err := s.results.Set(context.WithoutCancel(ctx), key, buf.Bytes(), expires); err != nil {
		return fmt.Errorf("%w: the result cache failed: %w", ErrAnswerNotCached, err)
	}
	return nil
}

// tooLargeToCache is the CacheErr of an answer that weighs more than
// MaxCachedAnswerBytes.
func (s *Service) tooLargeToCache() error {
	return fmt.Errorf("%w: it weighs more than max_cached_answer_bytes (%d bytes)", ErrAnswerNotCached, s.cfg.MaxCachedAnswerBytes)
}

// cacheFill encodes the rows of a streamed run (rowStream) for the result
// cache as they pass, the entry storeAnswer would write for the same
// answer byte for byte, holding at most max bytes (none when max <= 0):
// an answer that weighs more drops what it held and keeps nothing, so
// that a streamed answer's memory does not grow with its rows.
type cacheFill struct {
	key      string
	max      int64
	tooLarge error // the error of an answer past max
	kinds    []ColumnKind
	floats   bool
	buf      []byte // "[" then the rows' JSON so far, separated by commas
	text     []byte // the row's JSON (appendRowJSON)
	row      bytes.Buffer
	enc      *json.Encoder
	cells    []any
	err      error // why nothing is kept, nil while the fill goes on
}

// newCacheFill returns the fill of an answer of columns of kinds, kept
// under key.
func (s *Service) newCacheFill(key string, kinds []ColumnKind) *cacheFill {
	f := &cacheFill{key: key, max: s.cfg.MaxCachedAnswerBytes, tooLarge: s.tooLargeToCache(), kinds: kinds, floats: hasFloat(kinds)}
	f.buf = append(make([]byte, 0, 512), '[')
	f.enc = newAnswerEncoder(&f.row)
	return f
}

// add encodes row (its values cast to the version's kinds), its float
// columns' values as floats (see jsonResults), unless the fill was
// dropped; past max it drops the fill.
func (f *cacheFill) add(row []any) {
	if f.err != nil {
		return
	}
	b, ok := appendRowJSON(f.text[:0], row, f.kinds)
	f.text = b
	if !ok {
		if b, ok = f.encoded(row); !ok {
			f.drop(notCachedNotJSON)
			return
		}
	}
	need := len(f.buf) + 1 + len(b) + 1 // a comma before, the closing bracket
	if f.max > 0 && int64(need) > f.max {
		f.drop(f.tooLarge)
		return
	}
	if need > cap(f.buf) {
		// Grown by doubling as append does, but never past max.
		size := max(2*cap(f.buf), need)
		if f.max > 0 {
			size = min(size, int(f.max))
		}
		f.buf = append(make([]byte, 0, size), f.buf...)
	}
	if len(f.buf) > 1 {
		f.buf = append(f.buf, ',')
	}
	f.buf = append(f.buf, b...)
}

// encoded is row as encoding/json writes it in an answer, its float
// columns' values as floats (see jsonResults), false when JSON cannot
// carry a value of it: the way of a row that appendRowJSON does not take.
func (f *cacheFill) encoded(row []any) ([]byte, bool) {
	cells := row
	if f.floats {
		f.cells = append(f.cells[:0], row...)
		for j, v := range f.cells {
			if j < len(f.kinds) && f.kinds[j] == KindFloat {
				switch x := v.(type) {
				case float64:
					f.cells[j] = floatJSON(x)
				case float32:
					f.cells[j] = floatJSON(x)
				}
			}
		}
		cells = f.cells
		defer clear(f.cells) // hold none of the row's values
	}
	f.row.Reset()
	if f.enc.Encode(cells) != nil {
		return nil, false
	}
	return bytes.TrimSuffix(f.row.Bytes(), []byte("\n")), true
}

// appendRowJSON appends row as encoding/json writes it in an answer of
// columns of kinds (jsonResults), without its reflection, and reports
// whether it could: false (buf then holds part of the row) when a value
// is of a type other than those a database's rows mostly hold (nil,
// bool, int64, float64, string) or is a float JSON cannot carry.
func appendRowJSON(buf []byte, row []any, kinds []ColumnKind) ([]byte, bool) {
	buf = append(buf, '[')
	for j, v := range row {
		if j > 0 {
			buf = append(buf, ',')
		}
		switch x := v.(type) {
		case nil:
			buf = append(buf, "null"...)
		case bool:
			buf = strconv.AppendBool(buf, x)
		case int64:
			buf = strconv.AppendInt(buf, x, 10) // in a float column too, as jsonResults leaves it
		case float64:
			if x != x || x > maxFloat || x < -maxFloat {
				return buf, false
			}
			if j < len(kinds) && kinds[j] == KindFloat {
				buf = appendFloatJSON(buf, x)
			} else {
				buf = appendJSONFloat(buf, x)
			}
		case string:
			buf = jsontext.AppendString(buf, x)
		default:
			return buf, false
		}
	}
	return append(buf, ']'), true
}

// drop ends the fill for err, letting go of what it held.
func (f *cacheFill) drop(err error) {
	f.err, f.buf, f.cells, f.text = err, nil, nil, nil
	f.row = bytes.Buffer{}
}

// storeFill keeps the answer res of rows rows, whose rows f encoded and
// whose columns head had, in the result cache, and returns why it was not
// kept, nil when it was.
func (s *Service) storeFill(ctx context.Context, f *cacheFill, ep *driver.Endpoint, res, head *RunResult, rows int) error {
	if f.err != nil {
		return f.err
	}
	results := append(f.buf, ']')
	f.drop(nil)
	answer := *res
	answer.Columns, answer.Types = head.Columns, head.Types
	return s.storeEncoded(ctx, f.key, ep, &answer, rows, results)
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

// dataFreshness is how long an answer of e stays fresh: a cached answer is
// served while its data is younger, and the scheduler rebuilds e's stored
// table at that period. 0, as stores written before the field existed
// hold, means the default.
func dataFreshness(e *driver.Endpoint) time.Duration {
	if e.DataFreshnessSeconds <= 0 {
		return DefaultDataFreshness * time.Second
	}
	return time.Duration(e.DataFreshnessSeconds) * time.Second
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
	out.ExecutionID, out.EndpointVersionCreatedAt, out.fallbackErr, out.typeErr, out.encoded, out.cacheErr = "", nil, nil, nil, nil, nil
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

// ownValue returns slot holding *p, nil when p is nil: a pointer to a
// copy of p's value, in memory of the caller's (slot).
func ownValue[T any](slot, p *T) *T {
	if p == nil {
		return nil
	}
	*slot = *p
	return slot
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

// computeMeasured computes the answer of a run, with its statistics and the
// time of the data it read.
func (s *Service) computeMeasured(ctx context.Context, ep *driver.Endpoint, c *compiled, req RunRequest, values map[string]any, opts runOptions, now time.Time) (*RunResult, error) {
	start := time.Now()
	// One allocation for what the run measures, the context that carries
	// it to noteRead, and what the answer points to.
	m := &struct {
		read      valueContext[readStatsKey, readStats]
		stats     Statistics
		refreshed time.Time
	}{}
	m.read.Context = ctx
	res, err := s.computeByKind(&m.read, ep, c, req, values, opts, now)
	if err != nil {
		return nil, err
	}
	m.stats = Statistics{ElapsedMS: ms(time.Since(start)), RowsRead: m.read.v.rows, BytesRead: m.read.v.bytes}
	res.Statistics = &m.stats
	m.refreshed = now
	if res.EndpointMaterializedAt != nil {
		m.refreshed = *res.EndpointMaterializedAt
	}
	res.LastRefresh = &m.refreshed
	return res, nil
}

// Statistics describe the execution that computed an answer. ElapsedMS is
// measured by the Service; RowsRead and BytesRead are what the engine
// reported (Result.RowsRead, Result.BytesRead), null when it reports
// nothing: they are never estimated.
type Statistics struct {
	ElapsedMS float64 `json:"elapsed_ms"`
	RowsRead  *int64  `json:"rows_read"`
	BytesRead *int64  `json:"bytes_read"`
}

// readStats collects what the engine reported reading during one run.
type readStats struct {
	rows, bytes *int64
}

type readStatsKey struct{}

// valueContext is a context that carries one value, v, under the key
// K{}, in one allocation with it, where context.WithValue makes two (its
// context and the value boxed in an any): a run's readStats, a request's
// id. Value gives a pointer to v, not v boxed anew at each lookup.
type valueContext[K comparable, V any] struct {
	context.Context
	v V
}

// Value implements context.Context.
func (c *valueContext[K, V]) Value(key any) any {
	if _, ok := key.(K); ok {
		return &c.v
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

// computeByKind runs version c of ep with the request's values: the query
// itself, or a read of the endpoint's stored table.
func (s *Service) computeByKind(ctx context.Context, ep *driver.Endpoint, c *compiled, req RunRequest, values map[string]any, opts runOptions, now time.Time) (*RunResult, error) {
	if c.insight != nil {
		return s.runInsight(ctx, ep, c, req, opts, now)
	}
	return s.runSQL(ctx, ep, c, values, opts, now)
}

// runSQL pages, renders and executes a SQL version with values, the run's
// values as bind coerced them (admit, once a run), with room for the limit
// and the offset, which it adds. A run without
// an offset reads its rows straight from the query when the engine stops
// working once its first limit+1 rows are read (engine.Engine.StopsEarly);
// otherwise the query is wrapped to page in SQL (see compilePaged).
//
// Every answer has the version's columns and types (versionShape, conform).
func (s *Service) runSQL(ctx context.Context, ep *driver.Endpoint, c *compiled, values map[string]any, opts runOptions, now time.Time) (*RunResult, error) {
	sh := s.versionShape(ctx, ep, c, opts.version)
	res, fb, err := s.readMaterializedSQL(ctx, ep, c, values, opts, now)
	if err != nil {
		return nil, err
	}
	if res == nil {
		if res, err = s.runSQLInline(ctx, ep, c, values, opts); err != nil {
			return nil, err
		}
		res = fb.onto(res)
	}
	res.typeErr = conform(res, sh)
	return res, nil
}

// ColumnKinds are the kinds of the answer's columns, in order (see
// ColumnKindOf); nil for an insight answer, and for a SQL answer whose
// version could not be described (its types are then the engine's).
func (r *RunResult) ColumnKinds() []ColumnKind { return slices.Clone(r.kinds) }

// runSQLInline runs a SQL version inline with its bound values.
func (s *Service) runSQLInline(ctx context.Context, ep *driver.Endpoint, c *compiled, values map[string]any, opts runOptions) (*RunResult, error) {
	trace := newRunTrace(opts.debug)
	// One row more than asked tells whether there are more.
	tmpl, capped := c.paged, 0
	if c.direct != nil && opts.offset == 0 && s.cfg.Executor.Engine().StopsEarly() {
		tmpl, capped = c.direct, opts.limit+1
	} else {
		values[c.limitName] = int64(opts.limit) + 1
		values[c.offsetName] = int64(opts.offset)
	}
	st, err := tmpl.Render(values)
	if err != nil {
		// Values come from Coerce and list positions were checked at save,
		// so this is a value the dialect cannot bind.
		return nil, withCause(invalidf(CodeInvalidVariableValue, "variables", "%s", placeholderError(err).Detail), err)
	}
	trace.rendered(st)
	res, err := s.executeCapped(ctx, st, capped)
	if err != nil {
		if e := argFault(err, st, c, values); e != nil {
			return nil, e
		}
		return nil, err
	}
	return sqlResult(ep, opts, nil, res, 0, &trace), nil
}

// sqlResult answers a run of a SQL endpoint with the rows of res past the
// first skip: at most opts.limit of them, HasMore telling that more were
// read. at is as for newRunResult.
func sqlResult(ep *driver.Endpoint, opts runOptions, at *time.Time, res *driver.Result, skip int, trace *runTrace) *RunResult {
	out := newRunResult(ep, opts, at)
	out.Columns = nonNil(res.Columns)
	out.Types = nonNil(res.Types)
	var rows [][]any
	if skip < len(res.Rows) {
		rows = res.Rows[skip:]
	}
	if len(rows) > opts.limit {
		rows, out.HasMore = rows[:opts.limit], true
	}
	if rows == nil {
		rows = [][]any{}
	}
	out.Results = rows
	out.Debug = trace.info()
	return out
}

// newRunResult starts the answer of a run of ep. at is when the data of
// the stored table the run read was computed, nil for a run that went
// inline.
func newRunResult(ep *driver.Endpoint, opts runOptions, at *time.Time) *RunResult {
	return &RunResult{
		Name:                   ep.Name,
		EndpointVersion:        opts.version,
		EndpointMaterialized:   at != nil,
		EndpointMaterializedAt: at,
	}
}

// runTrace records, for DebugInfo, the statement a run executed and how
// long it took to render (or compile) and to execute. It reads the clock
// only when the run asks for debug.
type runTrace struct {
	on                bool
	start, renderedAt time.Time
	query             string
	argCount          int
}

// newRunTrace starts timing the rendering of a run's statement.
func newRunTrace(debug bool) runTrace {
	if !debug {
		return runTrace{}
	}
	return runTrace{on: true, start: time.Now()}
}

// rendered records the statement about to be executed; execution is timed
// from here.
func (t *runTrace) rendered(st scope.Statement) {
	if t.on {
		t.renderedAt = time.Now()
		t.query, t.argCount = st.SQL(), len(st.Args())
	}
}

// info returns the DebugInfo of the run, which ends now, or nil when the
// run did not ask for it.
func (t *runTrace) info() *DebugInfo {
	if !t.on {
		return nil
	}
	return &DebugInfo{
		SQL:       t.query,
		ArgCount:  t.argCount,
		RenderMS:  ms(t.renderedAt.Sub(t.start)),
		ExecuteMS: ms(time.Since(t.renderedAt)),
	}
}

// runInsight runs an insight endpoint: from its stored table when it is
// materialized and the table can answer, inline otherwise, saying why
// (RunResult.InlineReason).
func (s *Service) runInsight(ctx context.Context, ep *driver.Endpoint, c *compiled, req RunRequest, opts runOptions, now time.Time) (*RunResult, error) {
	var fb *fallback
	if r := s.storedReadOf(ctx, ep, c, opts, now); r.why == readsStored {
		// admit checked the variables by the materialized rules.
		var res *RunResult
		var err error
		res, fb, err = s.readMaterializedInsight(ctx, ep, c, r, req.Variables, opts)
		if res != nil || err != nil {
			return res, err
		}
	} else {
		fb = r.fallback(s, ep, opts, now)
	}
	res, err := s.runInsightInline(ctx, ep, c, req, opts, now)
	return fb.onto(res), err
}

// runInsightInline runs an insight version inline: the run's values filter
// a copy of the saved query (an omitted variable does not filter; see the
// package documentation), which is compiled for the executor's dialect
// against now, executed, and shaped as PostHog shapes it. The whole result
// is returned: limit and offset, which page the rows of a SQL endpoint,
// are refused (admit).
func (s *Service) runInsightInline(ctx context.Context, ep *driver.Endpoint, c *compiled, req RunRequest, opts runOptions, now time.Time) (*RunResult, error) {
	trace := newRunTrace(opts.debug)
	applied, err := c.insight.Apply(req.Variables)
	if err != nil {
		return nil, insightRunError(err)
	}
	st, stmt, err := c.scope.Insight(applied, now)
	if err != nil {
		return nil, insightRunError(err)
	}
	trace.rendered(st)
	res, err := s.execute(ctx, st)
	if err != nil {
		return nil, err
	}
	return insightResult(ep, opts, nil, stmt, res, &trace)
}

// insightResult answers a run of an insight endpoint with the rows stmt
// returned, shaped as PostHog shapes them. at is as for newRunResult.
func insightResult(ep *driver.Endpoint, opts runOptions, at *time.Time, stmt *insight.Compiled, res *driver.Result, trace *runTrace) (*RunResult, error) {
	shaped, err := stmt.Shape(res.Rows)
	if err != nil {
		// The executor answered rows the statement cannot return.
		return nil, withCause(NewError(ErrExecution, CodeExecutionFailed, "", "query execution failed"), err)
	}
	out := newRunResult(ep, opts, at)
	out.Columns, out.Types = []string{}, []string{}
	out.Results = shaped
	// As PostHog's hasMore: a breakdown had values past its limit.
	out.HasMore = shaped.HasMore
	out.Debug = trace.info()
	return out, nil
}

// fallback is why a run of a materialized endpoint went inline: a reason
// for the answer, and err when the database refused the stored table's
// read. A nil *fallback is a run that had no stored table to read.
type fallback struct {
	reason string
	err    error
}

// onto says in res why it ran inline; res may be nil (a failed run).
func (f *fallback) onto(res *RunResult) *RunResult {
	if f != nil && res != nil {
		res.InlineReason, res.fallbackErr = f.reason, f.err
	}
	return res
}

// inlineBecause is a fallback of reason.
func inlineBecause(format string, args ...any) *fallback {
	return &fallback{reason: fmt.Sprintf(format, args...)}
}

// olderVersion is the fallback of a run of another version than the
// materialized one.
func olderVersion(ep *driver.Endpoint, opts runOptions) *fallback {
	return inlineBecause("version %d is not the materialized version (%d)", opts.version, ep.CurrentVersion)
}

// noTable is the fallback of a run with no fresh stored table.
var noTable = &fallback{reason: "no stored table is fresh for the current version and settings"}

// storedRead is the decision whether the stored table answers a run,
// made from what is known before the run starts: the endpoint's record,
// the version asked and its compiled form, and the clock. The run path
// (readMaterializedSQL, runInsight) and admission (Service.Admit, which
// charges a run to the materialized budget only when the stored table
// answers it) both take it from storedReadOf, so that the two cannot
// disagree. What only the run can know (a read the database refuses, a
// value the table cannot answer) sends the run inline after it was
// charged as stored: admission counts on the decision, not on the
// outcome.
type storedRead struct {
	why   inlineWhy
	table string
	at    time.Time
	v     *verdict // a SQL endpoint's plan, when why is readsStored
}

// inlineWhy is why a run does not read the stored table; readsStored
// when it does.
type inlineWhy int

const (
	readsStored inlineWhy = iota
	notMaterialized
	notCurrentVersion
	noFreshTable
	cannotMaterialize
)

// storedReadOf decides whether the stored table of ep answers a run of
// opts.version (the current one when 0), compiled as c, at now: ep is
// materialized, the version is the current one, a table built from it is
// fresh (servingTable) and, for a SQL endpoint, its query can be
// materialized. It has no side effect.
func (s *Service) storedReadOf(ctx context.Context, ep *driver.Endpoint, c *compiled, opts runOptions, now time.Time) storedRead {
	version := opts.version
	if version == 0 {
		version = ep.CurrentVersion
	}
	switch {
	case !ep.IsMaterialized:
		return storedRead{why: notMaterialized}
	case version != ep.CurrentVersion:
		return storedRead{why: notCurrentVersion}
	}
	table, at, ok := s.servingTable(ep, c, now)
	if !ok {
		return storedRead{why: noFreshTable}
	}
	r := storedRead{table: table, at: at}
	if c.insight == nil {
		if r.v = s.verdict(ctx, c, ep.MaterializationBuckets, ep.MaterializationTailColumn); !r.v.ok {
			r.why = cannotMaterialize
		}
	}
	return r
}

// fallback is the fallback of a run that r sends inline (nil for one that
// reads the table or of an endpoint that is not materialized); for a run
// with no fresh table it wakes a hibernating materialization (noTable).
func (r storedRead) fallback(s *Service, ep *driver.Endpoint, opts runOptions, now time.Time) *fallback {
	switch r.why {
	case notCurrentVersion:
		return olderVersion(ep, opts)
	case noFreshTable:
		return s.noTable(ep, now)
	case cannotMaterialize:
		return inlineBecause("the query cannot be materialized: %s", r.v.reason)
	}
	return nil
}

// noTable is the fallback of a run of e that found no fresh stored table
// at now. When e's materialization was hibernating, the run wakes it: it
// asks the scheduler to refresh e at once, and says so.
func (s *Service) noTable(e *driver.Endpoint, now time.Time) *fallback {
	if _, ok := s.hibernatingSince(e, now); !ok {
		return noTable
	}
	select {
	case s.refreshRequests <- refreshRequest{e.ProjectID, e.ID, e.Name, triggerWoken}:
		return inlineBecause("the materialization was hibernating (no run read it for %s); this run woke it and a refresh is queued", s.cfg.HibernateAfter)
	default:
		// This run's last_executed_at wakes it at the scheduler's next
		// look.
		return inlineBecause("the materialization was hibernating (no run read it for %s); this run woke it and the scheduler refreshes it at its next look", s.cfg.HibernateAfter)
	}
}

// readMaterializedSQL answers a run of a materialized SQL endpoint from its
// stored table, with values bound and checked. It returns no result and no
// error when the run must go inline instead, with the reason: an older
// version, no fresh table for the current version and buckets, a value the
// table cannot answer exactly (materialize.ErrRunInline), or a read the
// database refused (the table being swapped by a refresh at that instant,
// or a defect, which is logged and counted). The read filters, orders and
// pages in SQL, as the inline run does: it fetches at most limit+1 rows,
// the one more telling whether there are more.
func (s *Service) readMaterializedSQL(ctx context.Context, ep *driver.Endpoint, c *compiled, values map[string]any, opts runOptions, now time.Time) (*RunResult, *fallback, error) {
	r := s.storedReadOf(ctx, ep, c, opts, now)
	if r.why != readsStored {
		return nil, r.fallback(s, ep, opts, now), nil
	}
	table, at, v := r.table, r.at, r.v
	trace := newRunTrace(opts.debug)
	if v.plan.Tail() {
		// The newer rows come from the source: those after the instant
		// the table was built at.
		values = maps.Clone(values)
		values[materialize.BuiltAtVariable] = at
	}
	st, err := v.scoped.ReadPage(table, values, int64(opts.limit)+1, int64(opts.offset))
	var ve *materialize.ValueError
	switch {
	case errors.As(err, &ve):
		return nil, nil, withCause(invalidf(CodeInvalidVariableValue, variableAttr(ve.Variable), "Invalid value for variable '%s': %s", ve.Variable, ve.Detail), err)
	case err != nil:
		return nil, s.readFailed(ep, err), nil
	}
	trace.rendered(st)
	res, fb, err := s.readStored(ctx, ep, st)
	if res == nil {
		return nil, fb, err
	}
	return sqlResult(ep, opts, &at, res, 0, &trace), nil, nil
}

// readStored executes a read of a stored table. A read the database
// refuses returns no result and no error but its fallback, so that the run
// goes inline: the table may be being swapped by a refresh at that
// instant. A timeout, a result over MaxResultBytes (inline would be as
// large), or a run whose context ended, is an error.
func (s *Service) readStored(ctx context.Context, ep *driver.Endpoint, st scope.Statement) (*driver.Result, *fallback, error) {
	res, err := s.execute(ctx, st)
	// A read whose rows were streamed out already cannot go inline.
	if err != nil && !errors.Is(err, ErrTimeout) && !errors.Is(err, driver.ErrResultTooLarge) && ctx.Err() == nil && !streamBegun(ctx) {
		return nil, s.readFailed(ep, err), nil
	}
	return res, nil, err
}

// readFailed records that the read of ep's stored table failed with err,
// for its materialization status, and returns the fallback that reports it
// with the run (logged and counted by the Observer).
func (s *Service) readFailed(ep *driver.Endpoint, err error) *fallback {
	s.readFailures.Store(ep.ID, readFailure{at: s.now(), table: tableOf(ep.MaterializationState), err: errorDetail(err)})
	var e *Error
	if errors.As(err, &e) && e.Err != nil {
		// The database's own words, for the log; never for the client.
		err = e.Err
	}
	return &fallback{reason: "the read of the stored table failed on the database; the run went inline", err: err}
}

// readFailure is the latest failed read of an endpoint's stored table:
// when, of which table (tableOf), and why, without engine internals.
type readFailure struct {
	at    time.Time
	table string
	err   string
}

// tableOf names the stored table a state serves: its key and build
// instant, which a refresh changes.
func tableOf(st driver.MaterializationState) string {
	if st.At == nil {
		return st.Built
	}
	return st.Built + "@" + st.At.Format(time.RFC3339Nano)
}

// readMaterializedInsight answers a run of a materialized insight endpoint
// from its stored table: exactly what the inline run would have answered
// when the table was built. Like readMaterializedSQL it returns no result
// and no error, but its fallback, when the run must go inline.
// r is storedReadOf's decision that the table answers.
func (s *Service) readMaterializedInsight(ctx context.Context, ep *driver.Endpoint, c *compiled, r storedRead, given map[string]any, opts runOptions) (*RunResult, *fallback, error) {
	table, at := r.table, r.at
	trace := newRunTrace(opts.debug)
	st, stmt, err := c.scope.InsightRead(c.insight, table, given, at)
	if err != nil {
		return nil, nil, insightRunError(err)
	}
	trace.rendered(st)
	res, fb, err := s.readStored(ctx, ep, st)
	if res == nil {
		return nil, fb, err
	}
	out, err := insightResult(ep, opts, &at, stmt, res, &trace)
	return out, nil, err
}

// freshness is how long e's stored table serves: its own
// materialization_freshness when set, otherwise its data freshness.
func freshness(e *driver.Endpoint) time.Duration {
	if e.MaterializationFreshness <= 0 {
		return dataFreshness(e)
	}
	return time.Duration(e.MaterializationFreshness)
}

// servingTable returns the stored table that may answer a run of e's
// current version, compiled as c, at now, and the instant its data is of:
// the table of the last completed refresh, if it was built from the
// current version, buckets and variable definitions (tableKey) and is not
// older than the freshness period. A failed refresh leaves the last good
// table serving until it is stale. A table with a live tail serves a
// while beyond its period (tailGrace): its runs read every row newer than
// it, and the scheduler may refresh it at the very end of its period (at
// the start of a day, see cutAligned), so that its runs do not go inline
// while that refresh waits for its turn and builds the next table.
func (s *Service) servingTable(e *driver.Endpoint, c *compiled, now time.Time) (string, time.Time, bool) {
	st := &e.MaterializationState
	if !e.IsMaterialized || st.Table == "" || st.At == nil || st.Built != tableKey(e, c) {
		return "", time.Time{}, false
	}
	limit := freshness(e)
	if e.MaterializationTailColumn != "" {
		limit += s.tailGrace(limit)
	}
	if now.Sub(*st.At) > limit {
		return "", time.Time{}, false
	}
	return st.Table, *st.At, true
}

// tailGrace is how long beyond its freshness period a table with a live
// tail serves: the jitter's share of the period (Config.RefreshJitter, a
// tenth: what the other tables are refreshed early by), so that the
// refreshes due at one midnight may wait their turns, and at least
// Config.RefreshTimeout, the longest a refresh may take
// (DefaultRefreshTimeout when refreshes are not bounded).
func (s *Service) tailGrace(period time.Duration) time.Duration {
	grace := DefaultRefreshTimeout
	if s.cfg.RefreshTimeout > 0 {
		grace = s.cfg.RefreshTimeout
	}
	if s.cfg.RefreshJitter > 0 {
		grace = max(grace, time.Duration(float64(period)*s.cfg.RefreshJitter))
	}
	return grace
}

// tableKey identifies what the stored table of e's current version,
// compiled as c, is built from: the version, the buckets, and the
// definitions of the variables the query was compiled with, since a
// variable's type decides how its column is stored (a Date range is
// bucketed, a String is not). A table serves only while its key is the
// current one, so that after a change to any of them runs go inline until
// a refresh builds the table anew. The key holds materialize's Layout
// too: after an upgrade that stores tables differently, a table of the old
// layout does not serve the new read, and the scheduler builds it anew
// (pending) while runs go inline.
func tableKey(e *driver.Endpoint, c *compiled) string {
	return "v" + strconv.Itoa(e.CurrentVersion) + ";layout=" + materialize.Layout + ";" + bucketKey(e.MaterializationBuckets) + "tail=" + e.MaterializationTailColumn + ";" + c.varsKey()
}

// varsKey is the part of a table key that the variables' definitions
// decide: code name, type and whether it takes a list, in code name order
// (empty for a query without variables).
func (c *compiled) varsKey() string {
	var b strings.Builder
	for i := range c.vars {
		v := &c.vars[i]
		b.WriteString("|" + v.CodeName + ":" + string(v.Type))
		if v.IsMulti {
			b.WriteString("[]")
		}
	}
	return b.String()
}

// execute runs a statement of a run under Config.RunTimeout and
// Config.MaxResultBytes. An error the engine blames on a query its author
// wrote is a 400 query_error showing the engine's message (queryFault);
// other executor errors are reported without their text, which may hold
// engine internals, the cause reachable through errors.Is and errors.As
// for a host that logs it.
func (s *Service) execute(ctx context.Context, st scope.Statement) (*driver.Result, error) {
	return s.executeCapped(ctx, st, 0)
}

// executeCapped is execute reading at most max rows (0: all of them). The
// executor enforces every bound of the run (driver.Bounds) while it reads
// the rows. It, execAll and queryOwn are the only callers of the executor:
// a statement reaches the database only as a scope.Statement.
func (s *Service) executeCapped(ctx context.Context, st scope.Statement, max int) (*driver.Result, error) {
	caller := ctx
	if s.cfg.RunTimeout > 0 {
		rc := s.deadlines.Start(ctx)
		defer s.deadlines.Stop(rc)
		ctx = rc
	}
	res, err := s.query(ctx, st, s.bounds(max)) // rowStream: a streamed run's rows go to its writer
	switch {
	case err != nil && errors.Is(err, driver.ErrResultTooLarge):
		return nil, withCause(s.tooLarge(), err)
	case err != nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded)):
		return nil, withCause(s.timedOut(caller.Err() == nil), err)
	case st.User() && queryFault(err) != nil:
		// The author's SQL; an error in SQL the library generated (an
		// insight, a stored table's read) stays the 502 below.
		return nil, queryFault(err)
	case err != nil:
		return nil, withCause(NewError(ErrExecution, CodeExecutionFailed, "", "query execution failed"), err)
	case res == nil:
		return nil, NewError(ErrExecution, CodeExecutionFailed, "", "query execution failed")
	}
	noteRead(ctx, res)
	return res, nil
}

// query runs st within b on the executor: Query, or, for the statement of
// a streamed run that answers (RunRows), QueryRows with the rows handed
// to the run's rowStream.
func (s *Service) query(ctx context.Context, st scope.Statement, b driver.Bounds) (*driver.Result, error) {
	if rs := streamOf(ctx); rs != nil && !rs.begun {
		if _, ok := s.cfg.Executor.(driver.RowQuerier); ok {
			// One row more than the page tells that there are more, as
			// the executor's MaxRows or the statement's LIMIT bound it.
			return s.cfg.Executor.(driver.RowQuerier).QueryRows(ctx, st, b, rs)
		}
	}
	return s.cfg.Executor.Query(ctx, st, b)
}

// rowStream takes the rows of a streamed run's statement (a
// driver.RowSink), casts them to the version's kinds as conform does,
// and writes the first limit of them to w; the row after them tells that
// there are more.
type rowStream struct {
	w       RowWriter
	sh      *shape
	limit   int
	head    RunResult
	begun   bool  // Begin was called
	rows    int   // rows written
	more    bool  // a row past the limit was read
	werr    error // w's failure
	typeErr error // the first value its column's kind could not hold
	// fill encodes the rows written for the result cache, nil when the
	// run does not fill it.
	fill *cacheFill
}

// Columns implements driver.RowSink.
func (rs *rowStream) Columns(names, types []string) error {
	h := &rs.head
	h.Columns, h.Types = nonNil(names), nonNil(types)
	if len(names) == len(rs.sh.columns) {
		h.Columns, h.Types = append([]string(nil), names...), nil
		rs.sh.onto(h)
	} else {
		rs.typeErr = fmt.Errorf("the answer has %d columns where version %d was saved with %d", len(names), h.EndpointVersion, len(rs.sh.columns))
		rs.sh = nil
	}
	rs.begun = true
	if err := rs.w.Begin(h); err != nil {
		rs.werr = err
		return err
	}
	return nil
}

// Row implements driver.RowSink.
func (rs *rowStream) Row(row []any) error {
	if rs.rows >= rs.limit {
		rs.more = true
		return nil
	}
	if sh := rs.sh; sh != nil {
		for i, v := range row {
			if i >= len(sh.kinds) {
				break
			}
			w, ok := castValue(sh.kinds[i], v)
			if !ok {
				if rs.typeErr == nil {
					rs.typeErr = fmt.Errorf("column %q of type %s has a value of Go type %T", sh.columns[i], sh.types[i], v)
				}
				continue
			}
			row[i] = w
		}
	}
	if rs.fill != nil {
		// Before w takes the row, which it may change.
		rs.fill.add(row)
	}
	if err := rs.w.Row(row); err != nil {
		rs.werr = err
		return err
	}
	rs.rows++
	return nil
}

// streamContext is a run's context that carries its rowStream: the first
// statement of the run that the executor runs (s.query) hands its rows to
// it, the one that answers.
type streamContext struct {
	context.Context
	rs *rowStream
}

type streamKey struct{}

// Value implements context.Context.
func (c *streamContext) Value(key any) any {
	if key == (streamKey{}) {
		return c.rs
	}
	return c.Context.Value(key)
}

// streamOf is the run's rowStream, nil when the run is not streamed.
func streamOf(ctx context.Context) *rowStream {
	rs, _ := ctx.Value(streamKey{}).(*rowStream)
	return rs
}

// streamBegun reports whether the rows of ctx's run began to be written:
// its statement can no longer be replaced by another (the inline run of a
// stored table's failed read).
func streamBegun(ctx context.Context) bool {
	rs := streamOf(ctx)
	return rs != nil && rs.begun
}

// bounds are the Bounds of a run's query reading at most rows rows (0: all
// of them): Config.MaxResultBytes and Config.RunTimeout, none where they
// are negative.
func (s *Service) bounds(rows int) driver.Bounds {
	return driver.Bounds{MaxRows: rows, MaxBytes: max(s.cfg.MaxResultBytes, 0), Timeout: max(s.cfg.RunTimeout, 0)}
}

// timedOut is the 504 of a run that ran out of time. The limit is named
// when it was the Service's own (own), not a shorter deadline of the
// caller's context.
func (s *Service) timedOut(own bool) *Error {
	if !own || s.cfg.RunTimeout <= 0 {
		return NewError(ErrTimeout, CodeTimeout, "", "query timed out")
	}
	return limited(NewError(ErrTimeout, CodeTimeout, "",
		fmt.Sprintf("query timed out: it ran longer than run_timeout (%s)", s.cfg.RunTimeout)), LimitRunTimeout, s.cfg.RunTimeout.Milliseconds())
}

// tooLarge is the 400 of a run whose rows weigh more than MaxResultBytes;
// the caller adds ErrResultTooLarge as its cause.
func (s *Service) tooLarge() *Error {
	return limited(invalidf(CodeResultTooLarge, "",
		"The result is larger than max_result_bytes (%d bytes); ask for fewer rows (limit) or narrow the query.", s.cfg.MaxResultBytes),
		LimitMaxResultBytes, s.cfg.MaxResultBytes)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// ColumnKind is the JSON form of a column's values, decided by the
// column's database type (ColumnKindOf): every value of the column has
// this form, whatever row it is in, and null.
type ColumnKind string

// The column kinds.
const (
	// KindInteger columns hold whole numbers, JSON integers (Go int64).
	KindInteger ColumnKind = "integer"
	// KindFloat columns hold floating-point numbers: Go float64 in every
	// row, DOUBLE in Parquet, and in every JSON answer numbers written as
	// floats, 256.0 beside 256.83 (never 256, which decoders read as an
	// integer), the OpenAPI document's "number".
	KindFloat ColumnKind = "number"
	// KindDecimal columns hold the exact decimals of PostgreSQL NUMERIC,
	// MySQL and MariaDB DECIMAL and ClickHouse Decimal: JSON strings of
	// the engine's decimal text ("99220", "12.50"), so that no digit is
	// lost to a float. SQLite has no decimal type: its NUMERIC is
	// KindFloat.
	KindDecimal ColumnKind = "decimal"
	// KindString columns hold text, JSON strings.
	KindString ColumnKind = "string"
	// KindBoolean columns hold JSON true or false.
	KindBoolean ColumnKind = "boolean"
	// KindTime columns hold instants and dates, JSON strings (RFC 3339
	// when the engine gives a time).
	KindTime ColumnKind = "date-time"
	// KindOther is a type of no other kind (arrays, JSON, bytes, a type
	// the engine left unnamed): its values are as the engine gives them.
	KindOther ColumnKind = ""
)

// ColumnKindOf is the kind of a column of database type typ on engine e
// (nil: an engine whose columns hold values of their declared types).
func ColumnKindOf(e engine.Engine, typ string) ColumnKind {
	t := strings.ToUpper(strings.TrimSpace(typ))
	for _, wrap := range []string{"NULLABLE(", "LOWCARDINALITY("} {
		for strings.HasPrefix(t, wrap) && strings.HasSuffix(t, ")") {
			t = strings.TrimSpace(t[len(wrap) : len(t)-1])
		}
	}
	if i := strings.IndexAny(t, "( "); i > 0 {
		t = t[:i]
	}
	switch t {
	case "INT", "INTEGER", "INT2", "INT4", "INT8", "BIGINT", "SMALLINT", "TINYINT", "MEDIUMINT",
		"INT16", "INT32", "INT64", "UINT8", "UINT16", "UINT32", "UINT64",
		"UNSIGNED", "SERIAL", "BIGSERIAL", "OID", "YEAR":
		return KindInteger
	case "REAL", "FLOAT", "FLOAT4", "FLOAT8", "DOUBLE", "FLOAT32", "FLOAT64":
		return KindFloat
	case "NUMERIC", "DECIMAL", "DECIMAL32", "DECIMAL64", "DECIMAL128", "DECIMAL256",
		"INT128", "INT256", "UINT128", "UINT256":
		if e != nil && !e.TypedAsDeclared() {
			return KindFloat // SQLite's NUMERIC affinity: doubles
		}
		return KindDecimal
	case "TEXT", "VARCHAR", "CHAR", "BPCHAR", "NAME", "STRING", "FIXEDSTRING", "CLOB",
		"NVARCHAR", "NCHAR", "TINYTEXT", "MEDIUMTEXT", "LONGTEXT", "UUID", "CITEXT", "ENUM", "ENUM8", "ENUM16":
		return KindString
	case "BOOL", "BOOLEAN":
		return KindBoolean
	case "TIMESTAMP", "TIMESTAMPTZ", "DATETIME", "DATETIME64", "DATE", "DATE32":
		return KindTime
	}
	return KindOther
}

// shape is what a version's answers are: its columns, their types and
// kinds.
type shape struct {
	columns, types []string
	kinds          []ColumnKind
}

// newShape is the shape of columns and types on engine eng.
func newShape(eng engine.Engine, columns, types []string) *shape {
	sh := &shape{columns: nonNil(columns), types: nonNil(types), kinds: make([]ColumnKind, len(types))}
	for i, t := range types {
		sh.kinds[i] = ColumnKindOf(eng, t)
	}
	return sh
}

// shapeSlot holds a compiled version's shape once known.
type shapeSlot struct{ p atomic.Pointer[shape] }

// engine is the executor's engine.
func (s *Service) engine() engine.Engine { return s.cfg.Executor.Engine() }

// versionShape returns the shape of version n of ep, compiled as c: the
// one kept with c, or the version's stored columns and types, or, for a
// version saved before versions kept them, the engine's description of it
// now, which is stored with the version. nil (the answer then keeps the
// engine's types) when the version is an insight or cannot be described;
// the run itself will say why.
func (s *Service) versionShape(ctx context.Context, ep *driver.Endpoint, c *compiled, n int) *shape {
	if c.insight != nil {
		return nil
	}
	if sh := c.shape.p.Load(); sh != nil {
		return sh
	}
	v, err := s.cfg.Endpoints.Version(ctx, ep.ProjectID, ep.ID, n)
	if err != nil {
		return nil
	}
	if v.Columns == nil {
		res, err := s.describe(ctx, ep, c)
		if err != nil {
			return nil
		}
		v.Columns, v.Types = nonNil(res.Columns), s.describedTypes(c, nonNil(res.Types))
		// Stored so that the next Service (or this one, once the compiled
		// version leaves its cache) need not describe it again; a failed
		// write is described again then.
		_ = s.cfg.Endpoints.SetVersionColumns(context.WithoutCancel(ctx), ep.ProjectID, ep.ID, n, v.Columns, v.Types)
	}
	sh := newShape(s.engine(), v.Columns, s.describedTypes(c, v.Types))
	c.shape.p.Store(sh)
	return sh
}

// describedTypes are types, those the engine described a version's
// columns with, and on SQLite, for an expression it leaves untyped whose
// result SQLite types the same whatever the values, that type (see
// sqliteFixedTypes): never a type learned from one answer's values.
func (s *Service) describedTypes(c *compiled, types []string) []string {
	if s.engine().TypedAsDeclared() {
		return types
	}
	return sqliteFixedTypes(c.query.SQL, types)
}

// conform makes out, an answer of a SQL version computed now, have the
// version's columns and types, and each value the form of its column's
// kind: a re-aggregated sum that a stored table's read answers as NUMERIC
// is cast back to the integer the inline run answers, an integral float of
// a float column stays a float, and so on. A value that its column's kind
// cannot hold exactly is left as the engine gave it; the error returned
// names the first one (the run reports it to the Observer).
func conform(out *RunResult, sh *shape) error {
	if sh == nil {
		return nil
	}
	if len(out.Columns) != len(sh.columns) {
		return fmt.Errorf("the answer has %d columns where version %d was saved with %d (%s)",
			len(out.Columns), out.EndpointVersion, len(sh.columns), strings.Join(sh.columns, ", "))
	}
	sh.onto(out)
	rows, ok := out.Results.([][]any)
	if !ok {
		return nil
	}
	var first error
	for _, row := range rows {
		for i, v := range row {
			if i >= len(sh.kinds) {
				break
			}
			w, ok := castValue(sh.kinds[i], v)
			if !ok {
				if first == nil {
					first = fmt.Errorf("column %q of type %s has a value of Go type %T", sh.columns[i], sh.types[i], v)
				}
				continue
			}
			row[i] = w
		}
	}
	return first
}

// onto gives out, an answer of as many columns as sh, sh's names, types
// and kinds; the names and types are out's own, as an answer's are (its
// caller may write to them).
func (sh *shape) onto(out *RunResult) {
	if len(out.Types) != len(sh.types) {
		out.Types = make([]string, len(sh.types))
	}
	copy(out.Columns, sh.columns)
	copy(out.Types, sh.types)
	out.kinds = sh.kinds
}

// castValue is v in the form of kind k, and whether it could be cast
// exactly. nil is null in every kind. A value already of its kind's Go
// type is returned as the same interface value, not boxed again: an
// answer's rows are cast cell by cell (conform, and each row of an
// export), and boxing an int64, a float64 or a string again allocated
// once a cell.
func castValue(k ColumnKind, v any) (any, bool) {
	if v == nil {
		return nil, true
	}
	switch k {
	case KindInteger:
		switch x := v.(type) {
		case int64:
			return v, true
		case int:
			return int64(x), true
		case int32:
			return int64(x), true
		case int16:
			return int64(x), true
		case int8:
			return int64(x), true
		case uint8:
			return int64(x), true
		case uint16:
			return int64(x), true
		case uint32:
			return int64(x), true
		case uint64:
			if x <= math.MaxInt64 {
				return int64(x), true
			}
		case float64:
			if x == math.Trunc(x) && math.Abs(x) < 1<<63 {
				return int64(x), true
			}
		case float32:
			if f := float64(x); f == math.Trunc(f) && math.Abs(f) < 1<<63 {
				return int64(f), true
			}
		case bool:
			if x {
				return int64(1), true
			}
			return int64(0), true
		case string:
			if n, err := strconv.ParseInt(x, 10, 64); err == nil {
				return n, true
			}
			// A decimal's text with a zero fraction ("99220.00").
			if whole, frac, ok := strings.Cut(x, "."); ok && strings.Trim(frac, "0") == "" {
				if n, err := strconv.ParseInt(whole, 10, 64); err == nil {
					return n, true
				}
			}
		case fmt.Stringer:
			return castValue(k, x.String())
		}
		return v, false
	case KindFloat:
		switch x := v.(type) {
		case float64:
			return v, true
		case float32:
			return float64(x), true
		case int64:
			return float64(x), true
		case int:
			return float64(x), true
		case int32:
			return float64(x), true
		case string:
			if f, err := strconv.ParseFloat(x, 64); err == nil {
				return f, true
			}
		case fmt.Stringer:
			return castValue(k, x.String())
		}
		return v, false
	case KindDecimal:
		switch x := v.(type) {
		case string:
			return v, true
		case int64:
			return strconv.FormatInt(x, 10), true
		case int:
			return strconv.Itoa(x), true
		case int32:
			return strconv.FormatInt(int64(x), 10), true
		case float64:
			return strconv.FormatFloat(x, 'f', -1, 64), true
		case float32:
			return strconv.FormatFloat(float64(x), 'f', -1, 32), true
		case fmt.Stringer:
			return x.String(), true
		}
		return v, false
	case KindString:
		switch x := v.(type) {
		case string:
			return v, true
		case int64:
			// SQLite's text affinity: a number in a text column reads as
			// its text.
			return strconv.FormatInt(x, 10), true
		case float64:
			return strconv.FormatFloat(x, 'g', -1, 64), true
		}
		return v, false
	case KindBoolean:
		switch x := v.(type) {
		case bool:
			return v, true
		case int64:
			if x == 0 || x == 1 {
				return x == 1, true
			}
		}
		return v, false
	case KindTime:
		switch v.(type) {
		case time.Time, string:
			return v, true
		}
		return v, false
	}
	return v, true
}

// SQLite declares a type for a result column that reads a table's column,
// and none for an expression: the type of count(*) is only that of its
// values, which an answer with no rows does not have, and the type of
// sum(x), min(x) or json_extract(...) is the type of each value, which may
// change from row to row (sum is INTEGER while its inputs are, REAL once
// one is not). A version's types are therefore what SQLite declares, and,
// for an expression whose result SQLite types the same whatever its input
// (sqliteFixedTypes), that type; any other expression keeps the type ""
// (KindOther: its values as SQLite gives them), the same with rows and
// without, inline and materialized. Learning a type from an answer's
// values would not be exact: a json_extract whose first answer holds 12
// and a later one 3.5.

// sqliteFixedResult is the type of the result of each SQLite function
// whose result is of one type whatever its arguments, NULL aside.
var sqliteFixedResult = map[string]string{
	"count": "INTEGER", "length": "INTEGER", "octet_length": "INTEGER", "instr": "INTEGER", "unicode": "INTEGER",
	"avg": "REAL", "total": "REAL", "round": "REAL",
	"lower": "TEXT", "upper": "TEXT", "typeof": "TEXT", "quote": "TEXT", "hex": "TEXT", "printf": "TEXT",
	"format": "TEXT", "group_concat": "TEXT", "string_agg": "TEXT", "date": "TEXT", "time": "TEXT",
	"datetime": "TEXT", "strftime": "TEXT", "char": "TEXT",
}

// sqliteFixedTypes returns the types that types leaves unnamed ("") of the
// result columns of query, a SQL version's text, where SQLite types the
// column's expression the same whatever its values: a call of a function of
// sqliteFixedResult, or CAST(... AS INTEGER, REAL or TEXT), with an alias
// or none. types is returned as it is when the query's first SELECT list
// cannot be read, or has another number of items than types (a *).
func sqliteFixedTypes(query string, types []string) []string {
	if !slices.Contains(types, "") {
		return types
	}
	items := selectItems(query)
	if len(items) != len(types) {
		return types
	}
	out := append([]string(nil), types...)
	for i, item := range items {
		if out[i] == "" {
			out[i] = fixedType(query, item)
		}
	}
	return out
}

// selectItems returns the tokens of each item of the first SELECT list of
// query (past opening parentheses, SELECT, DISTINCT or ALL), comments left
// out; nil when query does not start so, or an item is a *.
func selectItems(query string) [][]sqltoken.Token {
	var toks []sqltoken.Token
	for _, t := range sqltoken.Tokens(engine.SQLite.Lexical(), query) {
		if t.Kind != sqltoken.Comment {
			toks = append(toks, t)
		}
	}
	word := func(t sqltoken.Token, w string) bool {
		return t.Kind == sqltoken.Word && strings.EqualFold(t.Text(query), w)
	}
	punct := func(t sqltoken.Token, p string) bool { return t.Kind == sqltoken.Punct && t.Text(query) == p }
	i := 0
	for i < len(toks) && punct(toks[i], "(") {
		i++
	}
	if i >= len(toks) || !word(toks[i], "select") {
		return nil
	}
	i++
	for i < len(toks) && (word(toks[i], "distinct") || word(toks[i], "all")) {
		i++
	}
	var items [][]sqltoken.Token
	depth, start := 0, i
	end := func(t sqltoken.Token) bool {
		for _, kw := range []string{"from", "where", "group", "having", "window", "order", "limit", "union", "intersect", "except"} {
			if word(t, kw) {
				return true
			}
		}
		return punct(t, ";")
	}
loop:
	for ; i < len(toks); i++ {
		t := toks[i]
		switch {
		case punct(t, "("):
			depth++
		case punct(t, ")"):
			depth--
			if depth < 0 {
				break loop
			}
		case depth > 0:
		case punct(t, ","):
			items = append(items, toks[start:i])
			start = i + 1
		case end(t):
			break loop
		}
	}
	items = append(items, toks[start:i])
	for _, item := range items {
		if len(item) == 0 || punct(item[len(item)-1], "*") {
			return nil
		}
	}
	return items
}

// fixedType is the type SQLite gives the item's expression whatever its
// values, "" when it has none: the item is name(...) or CAST(... AS type),
// followed by nothing, an alias, or AS and an alias.
func fixedType(query string, item []sqltoken.Token) string {
	if len(item) < 3 || item[0].Kind != sqltoken.Word || item[1].Kind != sqltoken.Punct || item[1].Text(query) != "(" {
		return ""
	}
	// The parenthesis that closes the call.
	depth, closeAt := 0, -1
	for j := 1; j < len(item) && closeAt < 0; j++ {
		if item[j].Kind != sqltoken.Punct {
			continue
		}
		switch item[j].Text(query) {
		case "(":
			depth++
		case ")":
			if depth--; depth == 0 {
				closeAt = j
			}
		}
	}
	if closeAt < 0 {
		return ""
	}
	rest := item[closeAt+1:]
	isName := func(t sqltoken.Token) bool { return t.Kind == sqltoken.Word || t.Kind == sqltoken.QuotedName }
	switch {
	case len(rest) == 0:
	case len(rest) == 1 && isName(rest[0]) && !strings.EqualFold(rest[0].Text(query), "over") && !strings.EqualFold(rest[0].Text(query), "filter"):
	case len(rest) == 2 && rest[0].Kind == sqltoken.Word && strings.EqualFold(rest[0].Text(query), "as") && isName(rest[1]):
	default:
		return "" // an operator, a window, a FILTER: not the call's type alone
	}
	name := strings.ToLower(item[0].Text(query))
	if name != "cast" {
		return sqliteFixedResult[name]
	}
	// CAST(expr AS type-name): the type name is the words after the last
	// AS at the call's own depth; SQLite gives it an affinity by its
	// letters, and CAST to INTEGER, REAL or TEXT affinity yields that.
	depth, as := 0, -1
	for j := 2; j < closeAt; j++ {
		t := item[j]
		switch {
		case t.Kind == sqltoken.Punct && t.Text(query) == "(":
			depth++
		case t.Kind == sqltoken.Punct && t.Text(query) == ")":
			depth--
		case depth == 0 && t.Kind == sqltoken.Word && strings.EqualFold(t.Text(query), "as"):
			as = j
		}
	}
	if as < 0 {
		return ""
	}
	var typ strings.Builder
	for j := as + 1; j < closeAt; j++ {
		typ.WriteString(strings.ToUpper(item[j].Text(query)))
	}
	t := typ.String()
	switch {
	case strings.Contains(t, "INT"):
		return "INTEGER"
	case strings.Contains(t, "CHAR"), strings.Contains(t, "CLOB"), strings.Contains(t, "TEXT"):
		return "TEXT"
	case strings.Contains(t, "REAL"), strings.Contains(t, "FLOA"), strings.Contains(t, "DOUB"):
		return "REAL"
	}
	return "" // NUMERIC, BLOB: the value's own type
}

// materializedRun reports whether a run follows the rules of a
// materialized endpoint: it runs the current version of one.
func materializedRun(ep *driver.Endpoint, opts runOptions) bool {
	return ep.IsMaterialized && opts.version == ep.CurrentVersion
}

// describe runs a SQL version with LIMIT 0, each variable bound to a
// value of its type (no row is read, so which value does not matter), to
// learn its columns as a run through the paging wrapper names them.
func (s *Service) describe(ctx context.Context, e *driver.Endpoint, c *compiled) (*driver.Result, error) {
	values := make(map[string]any, len(c.vars)+3)
	for _, v := range c.vars {
		values[v.CodeName] = sampleValue(v)
	}
	values[c.limitName] = int64(0)
	values[c.offsetName] = int64(0)
	st, err := c.paged.Render(values)
	if err != nil {
		return nil, withCause(invalidf(CodeInvalidVariableValue, "variables", "%s", placeholderError(err).Detail), err)
	}
	return s.execute(ctx, st)
}
