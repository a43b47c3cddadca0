package endpoint

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/limit"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/insight"
	"github.com/endpointkit/endpointkit/internal/deadline"
	"github.com/endpointkit/endpointkit/internal/execmark"
	lrucache "github.com/endpointkit/endpointkit/internal/lru"
	"github.com/endpointkit/endpointkit/internal/refreshes"
	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/google/uuid"
)

// Defaults of Config.
const (
	// DefaultLimit is how many rows a run returns when it names no limit.
	DefaultLimit = 100
	// DefaultMaxLimit is the largest limit a run may ask for.
	DefaultMaxLimit = 50000
	// DefaultRunTimeout is how long a run may take.
	DefaultRunTimeout = 30 * time.Second
	// DefaultMaxResultBytes is how much the rows a run reads may weigh (as
	// RowBytes weighs them): 10 MiB.
	DefaultMaxResultBytes = 10 << 20
	// DefaultMaxQueryLength is the longest query a create or update may
	// save, in bytes: 100 KiB.
	DefaultMaxQueryLength = 100 << 10
	// DefaultMaxPlaceholders is how many {variables.x} placeholders a
	// saved query may hold.
	DefaultMaxPlaceholders = 1000
	// DefaultMaxBreakdownLimit is the largest breakdown_limit a saved
	// insight query may ask for. The default limit is
	// insight.DefaultBreakdownLimit (25), PostHog's.
	DefaultMaxBreakdownLimit = 1000
	// DefaultRefreshTimeout is how long a refresh of a materialized
	// endpoint may take.
	DefaultRefreshTimeout = 10 * time.Minute
	// DefaultMaxMaterializedRows is how many rows a materialized
	// endpoint's stored table may hold.
	DefaultMaxMaterializedRows = 1_000_000
	// DefaultMaxMaterializedBytes is how many bytes a materialized
	// endpoint's stored table may take in the database: 1 GiB.
	DefaultMaxMaterializedBytes = 1 << 30
	// DefaultMaxRefreshes is how many refreshes a Service runs at once.
	DefaultMaxRefreshes = 2
	// DefaultCacheSize is how many compiled versions a Service keeps.
	DefaultCacheSize = 1024
	// DefaultExecutedResolution is how often, at most, a run of one
	// endpoint writes its last_executed_at.
	DefaultExecutedResolution = time.Second
	// DefaultRecheckInterval is how long, at most, a run trusts what a
	// Service cached of an endpoint before it reads the store again.
	DefaultRecheckInterval = time.Second
	// DefaultRunLogBuffer is how many run log entries and last_executed_at
	// marks may wait for the background writer.
	DefaultRunLogBuffer = 4096
	// DefaultRunLogInterval is how often the background writer writes the
	// run log entries and last_executed_at marks runs queued.
	DefaultRunLogInterval = 100 * time.Millisecond
	// DefaultMaxCachedAnswerBytes is the most an answer may weigh, as the
	// result cache holds it, to be kept there: 8 MiB (what a
	// memstore.ResultCache of its default size keeps at most).
	DefaultMaxCachedAnswerBytes = 8 << 20
)

// Config wires a Service to its dependencies. Endpoints, Variables and
// Executor are required; the other fields have defaults.
type Config struct {
	Endpoints driver.Store
	Variables variable.Store
	Executor  driver.Executor
	// Access decides what the queries of each project may read and scopes
	// them to the project's rows (package access). nil allows every table
	// but the library's own and the engines' catalogs, unscoped: give the
	// executor a database user that reads only the analytics tables then.
	Access access.Policy
	// Now is the clock; nil means time.Now in UTC, to the microsecond.
	Now func() time.Time
	// DefaultLimit is the row limit of a run that names none; 0 means
	// DefaultLimit. Every run is paged, so that a query without a LIMIT of
	// its own cannot return a whole table by accident.
	DefaultLimit int
	// MaxLimit is the largest limit a run may ask for (a larger one is a
	// 400); 0 means DefaultMaxLimit.
	MaxLimit int
	// RunTimeout bounds the execution of each run, through the context
	// and Bounds.Timeout, which the executor passes on to the engine; 0
	// means DefaultRunTimeout, a negative value no bound beyond the
	// caller's context. A run that runs out of time is a 504
	// of code CodeTimeout naming the limit (LimitRunTimeout).
	RunTimeout time.Duration
	// MaxResultBytes bounds what the rows a run reads may weigh, as
	// RowBytes weighs them: it is Bounds.MaxBytes, and the executor stops
	// reading past it. 0 means DefaultMaxResultBytes, a negative value no
	// bound. Past it a run is a 400 of code CodeResultTooLarge naming the
	// limit.
	MaxResultBytes int64
	// MaxQueryLength is the longest query, in bytes, that a create or
	// update may save (the SQL text, or an insight query's JSON); 0 means
	// DefaultMaxQueryLength, a negative value no bound.
	MaxQueryLength int
	// MaxPlaceholders is how many {variables.x} placeholders a saved SQL
	// query may hold (each use counts): every one becomes at least one
	// bound argument, and engines refuse statements with too many. 0
	// means DefaultMaxPlaceholders, a negative value no bound.
	MaxPlaceholders int
	// DefaultBreakdownLimit is how many combinations of breakdown values
	// each series of a trends insight keeps when its query names no
	// breakdown_limit (the others are summed into one "Other" series, as
	// PostHog does); 0 means insight.DefaultBreakdownLimit. It applies to
	// saved endpoints too, from their next run.
	DefaultBreakdownLimit int
	// MaxBreakdownLimit is the largest breakdown_limit a saved trends
	// insight may name: a larger one is a 400 naming the limit
	// (LimitMaxBreakdownLimit), at create, at update, and at the runs of
	// an endpoint saved under a larger maximum. 0 means
	// DefaultMaxBreakdownLimit.
	MaxBreakdownLimit int
	// RefreshTimeout bounds each refresh of a materialized endpoint; 0
	// means DefaultRefreshTimeout, a negative value no bound beyond the
	// caller's context.
	RefreshTimeout time.Duration
	// MaxMaterializedRows is how many rows a stored table may hold: a
	// refresh that builds more fails, and the previous table keeps
	// serving. 0 means DefaultMaxMaterializedRows, a negative value no
	// bound.
	MaxMaterializedRows int64
	// MaxMaterializedBytes is how many bytes a stored table may take in
	// the database, measured once it is built and before it is swapped
	// in: a refresh that builds more fails naming it, the table it built
	// is dropped, and the previous table keeps serving. 0 means
	// DefaultMaxMaterializedBytes, a negative value no bound. See
	// tableBytes for how each engine measures.
	MaxMaterializedBytes int64
	// LowSavingsRatio is the share of the source rows at or above which
	// a stored table's rows make the materialization status warn that it
	// saves little: at the first refresh of each version of a SQL
	// endpoint the Service counts the rows its query reads (one more
	// scan of the source), and a table holding this share of them or
	// more is no cheaper to read than the query. 0 means
	// DefaultLowSavingsRatio (0.5), a negative value no warning.
	LowSavingsRatio float64
	// MaxRefreshes is how many refreshes the Service runs at once (by
	// Materialize and RefreshStale together); the others wait for a turn.
	// 0 means DefaultMaxRefreshes; a negative value is refused.
	MaxRefreshes int
	// CacheSize bounds the compiled versions, and separately the endpoint
	// records, kept in memory; 0 means DefaultCacheSize, a negative value
	// disables both caches (every run reads the store and compiles).
	CacheSize int
	// RecheckInterval bounds how stale a run's view of an endpoint can be
	// when another process writes the store this Service reads. A run of
	// an endpoint that this Service ran recently uses the record and the
	// compiled query it cached, without reading the store; once an entry
	// is RecheckInterval old, the next run reads the record (and the
	// variables the version uses) again and keeps the compiled query if
	// they did not change. Writes made through this Service are seen by
	// its next run at once, whatever the setting. 0 means
	// DefaultRecheckInterval; a negative value reads the store on every
	// run. Entries are timed with Config.Now.
	RecheckInterval time.Duration
	// ExecutedResolution is the least time between two writes of an
	// endpoint's last_executed_at by this Service; 0 means
	// DefaultExecutedResolution, a negative value queues a write on every
	// run (the background writer writes the latest of an endpoint's
	// marks queued at once).
	ExecutedResolution time.Duration

	// Operations (see compute.go, runlog.go, observer.go, schedule.go).

	// ResultCache keeps the answers of runs for their endpoint's
	// data_freshness_seconds (see RunRequest.Refresh); nil caches nothing.
	ResultCache driver.ResultCache
	// MaxCachedAnswerBytes is the most an answer may weigh, encoded as the
	// result cache keeps it, to be kept there; 0 means
	// DefaultMaxCachedAnswerBytes, a negative value no bound. A streamed
	// run (RunRows: a CSV, NDJSON or Parquet export) encodes its rows for
	// the cache as they pass, holding at most this much: past it the run
	// writes its rows on and keeps nothing, and an answer not kept for it
	// is told in RunEvent.CacheErr (ErrAnswerNotCached).
	MaxCachedAnswerBytes int64
	// RunLog records every run of a known endpoint; nil means a
	// memstore.RunLog with its defaults, on the Service's clock.
	RunLog driver.RunLog
	// RunLogBuffer is how many run log entries and last_executed_at marks
	// may wait for the background writer (see Close); a run whose entry
	// finds it full drops the entry and says so in RunEvent.LogErr
	// (ErrRunLogFull), never waiting. 0 means DefaultRunLogBuffer.
	RunLogBuffer int
	// RunLogInterval is how often the background writer writes what runs
	// queued (at once when the buffer is half full, and on Flush and
	// Close); 0 means DefaultRunLogInterval.
	RunLogInterval time.Duration
	// Observer is told of every run and refresh; nil means a SlogObserver
	// on slog.Default().
	Observer Observer
	// ScheduleInterval is how often Schedule looks for due endpoints; 0
	// means DefaultScheduleInterval.
	ScheduleInterval time.Duration
	// RefreshJitter is the share of a freshness period by which a
	// scheduled refresh may come early, in [0, 1); 0 means
	// DefaultRefreshJitter, a negative value none.
	RefreshJitter float64
	// ScheduleConcurrency is how many refreshes Schedule runs at once; 0
	// means DefaultScheduleConcurrency.
	ScheduleConcurrency int
	// HibernateAfter is how long a materialization may go without a run
	// reading it (nor a save of its endpoint) before it hibernates: the
	// scheduler and RefreshStale stop refreshing it, its status says
	// hibernating, and the next run answers inline and wakes it (queues a
	// refresh). 0 means DefaultHibernateAfter, a negative value never.
	HibernateAfter time.Duration
	// DeletedRetention is how long a soft-deleted endpoint (SoftDelete,
	// or PATCH {"deleted": true}) keeps its record, versions, run log and
	// stored tables, and can be restored (Restore); past it the next
	// listing of its project, or the scheduler, deletes it for good. 0
	// means DefaultDeletedRetention.
	DeletedRetention time.Duration
	// LeaseDuration is how long a refresh lease lasts without renewal (the
	// time another process waits to take over from a holder that died);
	// 0 means DefaultLeaseDuration.
	LeaseDuration time.Duration
}

// Service creates, updates, lists, deletes and runs endpoints, and keeps
// the variables they use. It is safe for concurrent use.
//
// Writes (of endpoints and variables) are serialized within a Service so
// that a check and the write it guards see the same state; between Services
// sharing a store, Store.Update's version compare-and-swap keeps an endpoint
// from moving back to an older query.
//
// Runs read the store only when what the Service cached is missing or old:
// it keeps each endpoint's record by project and name, and each version's
// compiled query with the variable definitions it was validated with. A
// Service drops what its own writes change at once; a write made through
// another Service (another process sharing the store) is seen within
// Config.RecheckInterval.
type Service struct {
	cfg Config
	// tokens is TokenLimiter's, made on first use.
	tokens   func() *limit.Limiter
	now      func() time.Time
	writeMu  sync.Mutex
	cache    *templateCache
	records  recordCache
	executed *execmark.Marks
	// refreshing serializes the refreshes of each endpoint, and
	// refreshSlots bounds how many run at once (refresh.go).
	refreshing   refreshes.Locks
	refreshSlots chan struct{}

	// Operations: the result cache, identical runs under way, when each
	// version was saved, the run log, the observer, the refresh leases of
	// the store (nil when it has none) with this Service's holder id, and
	// the scheduler's state.
	results      driver.ResultCache
	runFlights   flightGroup
	versionTimes *lru[versionKey, time.Time]
	runLog       driver.RunLog
	observer     Observer
	leases       driver.Leaser
	holder       string
	// logs writes the run log and last_executed_at off the run path.
	logs *logWriter
	// deadlines gives runs their time limit (RunTimeout), one timer for all.
	deadlines *deadline.Timer
	// readFailures holds, by endpoint id, the latest read of a stored
	// table the database refused (readFailure), for its status.
	readFailures    sync.Map
	refreshRequests chan refreshRequest
	scheduling      atomic.Bool
	// runs are the refreshes under way, for their progress; saved the
	// tables a save's refresh built that no Materialize claimed yet;
	// manual the endpoints with a StartMaterialize queued or under way.
	runs   refreshes.Runs
	saved  refreshes.Savings
	manual sync.Map
}

// orDefault is v, or def when v is 0; a negative v (no bound) becomes 0,
// which the Service reads as no bound.
func orDefault[T int | int64 | time.Duration](v, def T) T {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

// New returns a Service over cfg, or an error naming a missing dependency
// or a setting out of range.
func New(cfg Config) (*Service, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	cfg.fillDefaults()
	if cfg.DefaultLimit > cfg.MaxLimit {
		return nil, fmt.Errorf("endpoint: Config.DefaultLimit %d exceeds MaxLimit %d", cfg.DefaultLimit, cfg.MaxLimit)
	}
	if cfg.DefaultBreakdownLimit > cfg.MaxBreakdownLimit {
		return nil, fmt.Errorf("endpoint: Config.DefaultBreakdownLimit %d exceeds MaxBreakdownLimit %d", cfg.DefaultBreakdownLimit, cfg.MaxBreakdownLimit)
	}
	now := cfg.Now
	if now == nil {
		now = systemNow
	}
	s := &Service{
		cfg:      cfg,
		now:      now,
		cache:    newTemplateCache(cfg.CacheSize),
		records:  recordCache{newLRU[recordKey, *driver.Endpoint](cfg.CacheSize)},
		executed: execmark.New(cfg.ExecutedResolution),

		results:         cfg.ResultCache,
		versionTimes:    newLRU[versionKey, time.Time](cfg.CacheSize),
		runLog:          cfg.RunLog,
		observer:        cfg.Observer,
		holder:          uuid.NewString(),
		refreshRequests: make(chan refreshRequest, refreshRequestQueue),
	}
	s.tokens = sync.OnceValue(func() *limit.Limiter { return limit.Tokens(nil) })
	s.attachOptional(cfg)
	s.logs = newLogWriter(s, cfg.RunLogBuffer, cfg.RunLogInterval)
	s.deadlines = deadline.New(cfg.RunTimeout, 0)
	return s, nil
}

// check returns an error naming a missing dependency or a setting out of
// range, before defaults are filled in.
func (cfg *Config) check() error {
	switch {
	case cfg.Endpoints == nil:
		return errors.New("endpoint: Config.Endpoints is nil")
	case cfg.Variables == nil:
		return errors.New("endpoint: Config.Variables is nil")
	case cfg.Executor == nil:
		return errors.New("endpoint: Config.Executor is nil")
	case cfg.DefaultLimit < 0 || cfg.MaxLimit < 0 || cfg.MaxRefreshes < 0:
		return errors.New("endpoint: Config.DefaultLimit, MaxLimit and MaxRefreshes must not be negative")
	case cfg.DefaultBreakdownLimit < 0 || cfg.MaxBreakdownLimit < 0:
		return errors.New("endpoint: Config.DefaultBreakdownLimit and MaxBreakdownLimit must not be negative")
	case cfg.ScheduleInterval < 0 || cfg.ScheduleConcurrency < 0 || cfg.LeaseDuration < 0 || cfg.DeletedRetention < 0:
		return errors.New("endpoint: Config.ScheduleInterval, ScheduleConcurrency, LeaseDuration and DeletedRetention must not be negative")
	case cfg.RefreshJitter >= 1:
		return fmt.Errorf("endpoint: Config.RefreshJitter %v must be less than 1", cfg.RefreshJitter)
	}
	return nil
}

// fillDefaults replaces every zero setting by its default; a negative
// bound becomes 0, no bound.
func (cfg *Config) fillDefaults() {
	// These refuse a negative value (check), so 0 alone means the default.
	cfg.ScheduleInterval = orDefault(cfg.ScheduleInterval, DefaultScheduleInterval)
	cfg.DefaultBreakdownLimit = orDefault(cfg.DefaultBreakdownLimit, insight.DefaultBreakdownLimit)
	cfg.MaxBreakdownLimit = orDefault(cfg.MaxBreakdownLimit, DefaultMaxBreakdownLimit)
	cfg.ScheduleConcurrency = orDefault(cfg.ScheduleConcurrency, DefaultScheduleConcurrency)
	cfg.LeaseDuration = orDefault(cfg.LeaseDuration, DefaultLeaseDuration)
	cfg.DeletedRetention = orDefault(cfg.DeletedRetention, DefaultDeletedRetention)
	switch {
	case cfg.HibernateAfter == 0:
		cfg.HibernateAfter = DefaultHibernateAfter
	case cfg.HibernateAfter < 0:
		cfg.HibernateAfter = 0
	}
	switch {
	case cfg.RefreshJitter == 0:
		cfg.RefreshJitter = DefaultRefreshJitter
	case cfg.RefreshJitter < 0:
		cfg.RefreshJitter = 0
	}
	cfg.RunTimeout = orDefault(cfg.RunTimeout, DefaultRunTimeout)
	cfg.MaxResultBytes = orDefault(cfg.MaxResultBytes, DefaultMaxResultBytes)
	cfg.MaxQueryLength = orDefault(cfg.MaxQueryLength, DefaultMaxQueryLength)
	cfg.MaxPlaceholders = orDefault(cfg.MaxPlaceholders, DefaultMaxPlaceholders)
	cfg.RefreshTimeout = orDefault(cfg.RefreshTimeout, DefaultRefreshTimeout)
	cfg.MaxMaterializedRows = orDefault(cfg.MaxMaterializedRows, DefaultMaxMaterializedRows)
	cfg.MaxMaterializedBytes = orDefault(cfg.MaxMaterializedBytes, DefaultMaxMaterializedBytes)
	switch {
	case cfg.LowSavingsRatio == 0:
		cfg.LowSavingsRatio = DefaultLowSavingsRatio
	case cfg.LowSavingsRatio < 0:
		cfg.LowSavingsRatio = 0
	}
	cfg.MaxRefreshes = orDefault(cfg.MaxRefreshes, DefaultMaxRefreshes)
	cfg.DefaultLimit = orDefault(cfg.DefaultLimit, DefaultLimit)
	cfg.MaxLimit = orDefault(cfg.MaxLimit, DefaultMaxLimit)
	cfg.RunLogBuffer = orDefault(cfg.RunLogBuffer, DefaultRunLogBuffer)
	cfg.RunLogInterval = orDefault(cfg.RunLogInterval, DefaultRunLogInterval)
	cfg.MaxCachedAnswerBytes = orDefault(cfg.MaxCachedAnswerBytes, DefaultMaxCachedAnswerBytes)
	if cfg.CacheSize == 0 {
		cfg.CacheSize = DefaultCacheSize
	}
	if cfg.ExecutedResolution == 0 {
		cfg.ExecutedResolution = DefaultExecutedResolution
	}
	if cfg.RecheckInterval == 0 {
		cfg.RecheckInterval = DefaultRecheckInterval
	}
}

// attachOptional sets the parts of s that cfg may leave out (run log,
// observer) and those an implementation offers beyond its interface
// (leases, row caps, time bounds).
func (s *Service) attachOptional(cfg Config) {
	if s.runLog == nil {
		l := memstore.NewRunLog(0, 0)
		l.Now = s.now
		s.runLog = l
	}
	if s.observer == nil {
		s.observer = SlogObserver{}
	}
	if l, ok := cfg.Endpoints.(driver.Leaser); ok {
		s.leases = l
	}
	// Every write of an endpoint goes through s.cfg.Endpoints, so that
	// none can leave a stale record in the cache.
	s.cfg.Endpoints = forgettingStore{Store: cfg.Endpoints, records: s.records, versions: s.cache}
	s.refreshSlots = make(chan struct{}, cfg.MaxRefreshes)
}

// TokenLimiter is the Limiter that holds embed tokens to their rpm
// (limit.Limiter.AdmitToken) on the surfaces of this Service that have no
// Limiter of their own: the HTTP API (package httpapi) and /mcp (package
// mcp) with their limits off count a token here, once for both, rather
// than once each. It is made on first use, one per Service, and counts in
// this process.
func (s *Service) TokenLimiter() *limit.Limiter { return s.tokens() }

// systemNow is the Service's clock when Config.Now is nil: the system's,
// in UTC, to the microsecond (what SQL stores keep, so that an endpoint
// reads back with the times Create and Update returned).
func systemNow() time.Time { return systemInstant(time.Now()) }

// systemInstant is t as systemNow reads it.
func systemInstant(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// lru is a bounded least-recently-used map, safe for concurrent use. Each
// entry remembers when it was last checked against the store, so that a
// Service can trust it for Config.RecheckInterval and then read the store
// again to see writes made by other processes.
//
// gen is bumped by every purge. A caller that missed (or found a stale
// entry) reads the store, and stores what it read only if no purge happened
// meanwhile, so that a record or definition written during the read is not
// cached in its old form.
type lru[K comparable, V any] struct {
	mu      sync.RWMutex // read-locked by get: a hit moves nothing (lrucache.Cache.Peek)
	gen     uint64
	entries *lrucache.Cache[K, lruEntry[V]]
}

type lruEntry[V any] struct {
	val     V
	checked time.Time
}

// newLRU returns an lru of at most max entries; max <= 0 keeps none.
func newLRU[K comparable, V any](max int) *lru[K, V] {
	return &lru[K, V]{entries: lrucache.New[K, lruEntry[V]](int64(max), nil)}
}

// get returns the entry for k, when it was checked, whether there is one,
// and the current generation.
func (c *lru[K, V]) get(k K) (v V, checked time.Time, ok bool, gen uint64) {
	c.mu.RLock()
	e, ok := c.entries.Peek(k)
	gen = c.gen
	c.mu.RUnlock()
	return e.val, e.checked, ok, gen
}

// put stores v under k as checked at checked, unless a purge happened since
// generation gen.
func (c *lru[K, V]) put(k K, v V, checked time.Time, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen == c.gen {
		c.entries.Add(k, lruEntry[V]{val: v, checked: checked}, 1)
	}
}

// remove drops the entry for k, if any. It is not a purge: an entry that
// was read before it went is still right.
func (c *lru[K, V]) remove(k K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries.Remove(k)
}

// purge drops the entries for which match holds, and makes every read
// begun before it unfit to be stored.
func (c *lru[K, V]) purge(match func(K, V) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.entries.RemoveFunc(func(k K, e lruEntry[V]) bool { return match(k, e.val) })
}

// len returns the number of entries.
func (c *lru[K, V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entries.Len()
}

// generation returns the current generation, for a put by a caller that
// read the store under Service.writeMu (which every purge by this Service's
// own writes follows, under the same lock).
func (c *lru[K, V]) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// cacheKey names one version of one endpoint. A version's query never
// changes, so an entry stays right until the variables it was validated
// with change.
type cacheKey struct {
	project, id string
	version     int
}

// templateCache keeps the compiled queries of recently run versions, so that
// a run neither re-reads the variables nor re-parses the query.
type templateCache struct {
	*lru[cacheKey, *compiled]
}

func newTemplateCache(max int) *templateCache {
	return &templateCache{newLRU[cacheKey, *compiled](max)}
}

// purge drops the entries of project for which match holds (every entry of
// the project when match is nil).
func (tc *templateCache) purge(project string, match func(cacheKey) bool) {
	tc.lru.purge(func(k cacheKey, _ *compiled) bool {
		return k.project == project && (match == nil || match(k))
	})
}

// recordKey names an endpoint as a run names it.
type recordKey struct{ project, name string }

// recordCache keeps the stored records of recently run endpoints, so that a
// run of an unchanged endpoint does not read (and decode) it from the store.
// An entry is immutable: runs share it and only read it, and a write
// replaces the pointer.
type recordCache struct {
	*lru[recordKey, *driver.Endpoint]
}

// forget drops the records of the endpoint with id in project and the
// record cached under name (a stale one that another process deleted or
// renamed); either may be "".
func (rc recordCache) forget(project, id, name string) {
	rc.purge(func(k recordKey, e *driver.Endpoint) bool {
		return k.project == project && (id != "" && e.ID == id || name != "" && k.name == name)
	})
}

// fresh reports whether an entry checked at checked may be used at now
// without reading the store again. A clock that went back makes it stale.
func (s *Service) fresh(checked, now time.Time) bool {
	age := now.Sub(checked)
	return age >= 0 && age < s.cfg.RecheckInterval
}

// forgettingStore is the Store a Service uses: the host's Store, which drops
// this Service's cached record of an endpoint as soon as the Service writes
// it, through whichever path writes (create, update, delete, a refresh's
// state). A write that fails drops it too: a conflict means another process
// changed the endpoint. MarkExecuted changes nothing a run reads, so it
// drops nothing; that a run's own bookkeeping does not empty the cache is
// the point.
type forgettingStore struct {
	driver.Store
	records  recordCache
	versions *templateCache
}

func (f forgettingStore) Create(ctx context.Context, e driver.Endpoint, first driver.Version) error {
	defer f.records.forget(e.ProjectID, e.ID, e.Name)
	return f.Store.Create(ctx, e, first)
}

func (f forgettingStore) Update(ctx context.Context, e driver.Endpoint, next *driver.Version) error {
	defer f.records.forget(e.ProjectID, e.ID, e.Name)
	return f.Store.Update(ctx, e, next)
}

func (f forgettingStore) SetMaterialization(ctx context.Context, project, id string, st driver.MaterializationState) error {
	defer f.records.forget(project, id, "")
	return f.Store.SetMaterialization(ctx, project, id, st)
}

func (f forgettingStore) Delete(ctx context.Context, project, id string) error {
	defer f.versions.purge(project, func(k cacheKey) bool { return k.id == id })
	defer f.records.forget(project, id, "")
	return f.Store.Delete(ctx, project, id)
}
