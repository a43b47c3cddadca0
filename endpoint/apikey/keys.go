// Package apikey creates, lists, revokes and authenticates the API keys of
// projects kept in a driver.KeyStore, holds each key to its run budget and
// each credential (a key or an embed token) to its Grant: a credential
// gives no more than it has. package endpoint's Service admits a Caller
// with a Key (Service.Admit, Budgets.Keys) and mints embed tokens on
// behalf of a Grant (endpoint.Service.MintEmbedTokenAs); the HTTP API and /mcp
// authenticate with Keys.
package apikey

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/endpointkit/endpointkit/endpoint/budget"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/limit"
	"github.com/endpointkit/endpointkit/internal/apierror"
	"github.com/google/uuid"
)

// The scopes of a stored API key (Keys). A key may do what its scopes
// name and nothing else; an operation needs one scope.
const (
	// ScopeEndpointRead runs endpoints and reads them: their definitions,
	// versions, OpenAPI documents, run logs and materialization status, and
	// the project's variables.
	ScopeEndpointRead = "endpoint:read"
	// ScopeEndpointWrite creates, updates, deletes and materializes
	// endpoints, and writes the project's variables (for a key limited to
	// named endpoints, endpoints only: variables serve every endpoint).
	ScopeEndpointWrite = "endpoint:write"
	// ScopeQueryRun runs queries that are not saved (the editor's query
	// route) and reads the project's schema.
	ScopeQueryRun = "query:run"
	// ScopeKeyAdmin creates, lists and revokes keys, and mints embed
	// tokens, never giving more than the key itself has nor revoking a
	// key that has more (Grant).
	ScopeKeyAdmin = "key:admin"
)

// Scopes lists every scope a key may hold.
var Scopes = []string{ScopeEndpointRead, ScopeEndpointWrite, ScopeQueryRun, ScopeKeyAdmin}

// Prefix starts every stored key's secret, so that a server (and a
// secret scanner) tells it from other credentials.
const Prefix = "ekk_"

// keySecretBytes is the entropy of a secret: 256 bits, so that the
// secret's SHA-256 is as safe at rest as a slow password hash would be.
const keySecretBytes = 32

// keySecretLen is the length of a secret: the prefix and 32 bytes in
// unpadded base64url.
var keySecretLen = len(Prefix) + base64.RawURLEncoding.EncodedLen(keySecretBytes)

// keyShownLen is how much of a secret its Prefix shows: the prefix and 8
// characters (48 bits), enough to tell keys apart, far too few to use.
const keyShownLen = len(Prefix) + 8

// Defaults of Config.
const (
	// DefaultRunsPerMinute and DefaultRunsPerHour are a key's budget
	// of runs answered inline: PostHog's, 240 per minute and 2,400 per hour.
	DefaultRunsPerMinute = 240
	DefaultRunsPerHour   = 2400
	// DefaultMaterializedRunsPerMinute and
	// DefaultMaterializedRunsPerHour are a key's budget of runs of
	// materialized endpoints, which read a stored table and cost little:
	// PostHog's, 1,200 per minute and 12,000 per hour.
	DefaultMaterializedRunsPerMinute = 1200
	DefaultMaterializedRunsPerHour   = 12000
	// DefaultCacheTTL bounds how long a Keys trusts what it read of a
	// key: a key revoked by another process sharing the store is refused
	// here within this time.
	DefaultCacheTTL = 5 * time.Second
	// DefaultCacheSize bounds the keys (and unknown secrets) a Keys
	// remembers.
	DefaultCacheSize = 10_000
	// DefaultUsedResolution is the least time between two writes of a
	// key's last_used_at by one Keys.
	DefaultUsedResolution = time.Minute
	// MaxEndpoints is how many endpoint names a key may be limited to.
	MaxEndpoints = 1000
	// MaxNameLength is the longest key name, in characters.
	MaxNameLength = 200
)

// The limits a key's refused run names in endpoint.Error.Limit, each a setting of
// Config and a field of CreateRequest.
const (
	LimitRunsPerMinute             = "key_runs_per_minute"
	LimitRunsPerHour               = "key_runs_per_hour"
	LimitMaterializedRunsPerMinute = "key_materialized_runs_per_minute"
	LimitMaterializedRunsPerHour   = "key_materialized_runs_per_hour"
)

// Config configures Keys. Store is required; the other fields have
// defaults. A budget field holds a positive number, 0 for its default or
// -1 (limit.Unlimited) for none.
type Config struct {
	Store driver.KeyStore
	// Now is the clock; nil means time.Now in UTC, to the microsecond.
	Now func() time.Time
	// RunsPerMinute, RunsPerHour, MaterializedRunsPerMinute and
	// MaterializedRunsPerHour are the budgets of a key created without its
	// own (DefaultRunsPerMinute and the others).
	RunsPerMinute             int
	RunsPerHour               int
	MaterializedRunsPerMinute int
	MaterializedRunsPerHour   int
	// CacheTTL is how long what was read of a key (or of an unknown
	// secret) is trusted: the bound on how late a revocation made by
	// another process is seen here. A revocation made through this Keys is
	// effective at once. 0 means DefaultCacheTTL, a negative value
	// reads the store on every request.
	CacheTTL time.Duration
	// CacheSize bounds the cached lookups; 0 means DefaultCacheSize.
	CacheSize int
	// UsedResolution is the least time between two writes of a key's
	// last_used_at; 0 means DefaultUsedResolution, a negative value
	// writes it on every request.
	UsedResolution time.Duration
	// Logger receives the failures to write last_used_at (the request
	// goes on) and of Counter; nil means slog.Default().
	Logger *slog.Logger
	// Counter counts the keys' budgets. nil counts them in this process
	// (budget.Memory): several processes then each allow a key its
	// budget. A store several processes share (sqlstore's Store.Counter,
	// package budget/redisbudget) makes it one budget across them. It is
	// used through a budget.Guard: pass one to choose what a failure of
	// the store means (budget.GuardConfig.FailOpen) and to count failures
	// with the host's other budgets; otherwise Keys makes one that fails
	// closed, refusing the run with 503 (endpoint.CodeBudgetUnavailable), logged
	// and counted (CounterFailures).
	Counter budget.Counter
}

// Key is an API key for machines as the API shows it: never its secret nor
// the secret's hash. Endpoints nil means every endpoint of the project. The
// budgets are those in force (the key's own or the host's defaults; -1 is
// unlimited).
type Key struct {
	ID        string   `json:"id"`
	ProjectID string   `json:"project_id"`
	Name      string   `json:"name"`
	Prefix    string   `json:"prefix"`
	Scopes    []string `json:"scopes"`
	Endpoints []string `json:"endpoints"`
	// RunsPerMinute and RunsPerHour bound its runs answered inline,
	// MaterializedRunsPerMinute and MaterializedRunsPerHour those of
	// materialized endpoints.
	RunsPerMinute             int        `json:"runs_per_minute"`
	RunsPerHour               int        `json:"runs_per_hour"`
	MaterializedRunsPerMinute int        `json:"materialized_runs_per_minute"`
	MaterializedRunsPerHour   int        `json:"materialized_runs_per_hour"`
	CreatedAt                 time.Time  `json:"created_at"`
	LastUsedAt                *time.Time `json:"last_used_at"`
	RevokedAt                 *time.Time `json:"revoked_at"`
}

// Allows reports whether the key holds scope.
func (k *Key) Allows(scope string) bool { return slices.Contains(k.Scopes, scope) }

// AllowsEndpoint reports whether the key may use the endpoint named name.
func (k *Key) AllowsEndpoint(name string) bool {
	return k.Endpoints == nil || slices.Contains(k.Endpoints, name)
}

// Restricted reports whether the key is limited to named endpoints.
func (k *Key) Restricted() bool { return k.Endpoints != nil }

// CreateRequest is what Keys.Create is given. Name and Scopes are
// required; Endpoints nil gives every endpoint of the project, a list
// names the only ones the key may use. A budget of 0 takes the host's
// default, -1 is unlimited.
type CreateRequest struct {
	Name                      string   `json:"name"`
	Scopes                    []string `json:"scopes"`
	Endpoints                 []string `json:"endpoints"`
	RunsPerMinute             int      `json:"runs_per_minute"`
	RunsPerHour               int      `json:"runs_per_hour"`
	MaterializedRunsPerMinute int      `json:"materialized_runs_per_minute"`
	MaterializedRunsPerHour   int      `json:"materialized_runs_per_hour"`
}

// Keys creates, lists, revokes and authenticates the API keys of projects
// kept in a driver.KeyStore, and holds each key to its run budget. A key's
// secret is shown once, by Create; the store keeps its SHA-256 only. It is
// safe for concurrent use.
//
// Authenticate caches what it read of a key for Config.CacheTTL: a
// revocation through this Keys is effective at once, one made by another
// process sharing the store within CacheTTL. Budgets are counted in
// Config.Counter: in this process by default, across processes when it
// is a shared store.
type Keys struct {
	cfg    Config
	store  driver.KeyStore
	now    func() time.Time
	logger *slog.Logger

	mu    sync.Mutex
	cache map[[driver.KeyHashSize]byte]keyLookup
	// revocations counts the revocations made through this Keys: a read
	// of the store that a revocation overtook is not cached, so that a
	// request in flight during Revoke cannot put the key back.
	revocations uint64
	used        map[string]time.Time // the last write of each key's last_used_at

	counter *budget.Guard

	markFailures atomic.Int64
}

// keyLookup is a cached read of a secret's hash: the key, or nil for an
// unknown secret.
type keyLookup struct {
	rec *driver.KeyRecord
	at  time.Time
}

// New returns the Keys of cfg, or an error naming a setting that is
// missing or out of range.
func New(cfg Config) (*Keys, error) {
	if cfg.Store == nil {
		return nil, errors.New("apikey: Config.Store is required")
	}
	for _, f := range []struct {
		name string
		v    *int
		def  int
	}{
		{"RunsPerMinute", &cfg.RunsPerMinute, DefaultRunsPerMinute},
		{"RunsPerHour", &cfg.RunsPerHour, DefaultRunsPerHour},
		{"MaterializedRunsPerMinute", &cfg.MaterializedRunsPerMinute, DefaultMaterializedRunsPerMinute},
		{"MaterializedRunsPerHour", &cfg.MaterializedRunsPerHour, DefaultMaterializedRunsPerHour},
	} {
		switch {
		case *f.v == 0:
			*f.v = f.def
		case *f.v < limit.Unlimited:
			return nil, fmt.Errorf("apikey: Config.%s is %d; use a positive number, 0 for the default or -1 for none", f.name, *f.v)
		}
	}
	if cfg.CacheTTL == 0 {
		cfg.CacheTTL = DefaultCacheTTL
	}
	if cfg.CacheSize <= 0 {
		cfg.CacheSize = DefaultCacheSize
	}
	if cfg.UsedResolution == 0 {
		cfg.UsedResolution = DefaultUsedResolution
	}
	k := &Keys{cfg: cfg, store: cfg.Store, now: cfg.Now, logger: cfg.Logger,
		cache: map[[driver.KeyHashSize]byte]keyLookup{}, used: map[string]time.Time{}}
	if k.now == nil {
		k.now = func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }
	}
	if k.logger == nil {
		k.logger = slog.Default()
	}
	counter := cfg.Counter
	if counter == nil {
		counter = budget.NewMemory(budget.MemoryConfig{Now: k.now})
	}
	k.counter = budget.Guarded(counter, budget.GuardConfig{Logger: k.logger})
	return k, nil
}

// LooksLikeKey reports whether s has the shape of a stored key's secret
// (Prefix and 43 base64url characters), so that a server hands only
// those to Authenticate and the others to its other credentials.
func LooksLikeKey(s string) bool {
	if len(s) != keySecretLen || !strings.HasPrefix(s, Prefix) {
		return false
	}
	_, err := base64.RawURLEncoding.Strict().DecodeString(s[len(Prefix):])
	return err == nil
}

// Create makes a key of project as req asks and returns it with its
// secret, which is shown this once: only its hash is stored. It is the
// host's own act (CreateAs with no Grant): the key may have anything.
func (k *Keys) Create(ctx context.Context, project string, req CreateRequest) (Key, string, error) {
	return k.CreateAs(ctx, nil, project, req)
}

// CreateAs is Create on behalf of a credential whose Grant is by (nil:
// the host, which may give anything): the key may have no scope, endpoint
// or budget that by lacks, a budget of 0 counting as the host's default
// it takes and -1 as more than any number. A request that would widen is
// refused with an *endpoint.Error of Status 403 whose Attr names the field and
// whose Detail says what by has and what was asked. A request that is
// invalid is the 400 of Create first.
func (k *Keys) CreateAs(ctx context.Context, by *Grant, project string, req CreateRequest) (Key, string, error) {
	rec, err := k.validate(project, req)
	if err != nil {
		return Key{}, "", err
	}
	asked := map[string]int{"runs_per_minute": req.RunsPerMinute, "runs_per_hour": req.RunsPerHour,
		"materialized_runs_per_minute": req.MaterializedRunsPerMinute, "materialized_runs_per_hour": req.MaterializedRunsPerHour}
	view := k.view(rec)
	if err := by.forbids(view.Grant(), grantee{what: "the key it creates", budget: func(b grantBudget, v int) string {
		if asked[b.attr] == 0 {
			return fmt.Sprintf("%s 0 = the host's default, %s", b.attr, budgetText(v))
		}
		return b.attr + " " + budgetText(v)
	}}); err != nil {
		return Key{}, "", err
	}
	var raw [keySecretBytes]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return Key{}, "", fmt.Errorf("apikey: making a key: %w", err)
	}
	secret := Prefix + base64.RawURLEncoding.EncodeToString(raw[:])
	rec.ID, rec.Prefix, rec.Hash, rec.CreatedAt = uuid.NewString(), secret[:keyShownLen], sha256.Sum256([]byte(secret)), k.now()
	if err := k.store.CreateKey(ctx, rec); err != nil {
		return Key{}, "", apierror.StoreError(err, nil)
	}
	return k.view(rec), secret, nil
}

// validate checks req and returns the record it asks for (without its
// id, secret and time).
func (k *Keys) validate(project string, req CreateRequest) (driver.KeyRecord, error) {
	name := strings.TrimSpace(req.Name)
	switch {
	case name == "":
		return driver.KeyRecord{}, apierror.Required("name")
	case utf8.RuneCountInString(name) > MaxNameLength:
		return driver.KeyRecord{}, apierror.Invalidf(apierror.CodeInvalidInput, "name", "name may hold at most %d characters.", MaxNameLength)
	case strings.IndexByte(name, 0) >= 0:
		return driver.KeyRecord{}, apierror.Invalidf(apierror.CodeInvalidInput, "name", "name holds a NUL character (\\u0000), which databases cannot store in text.")
	case !utf8.ValidString(name):
		return driver.KeyRecord{}, apierror.Invalidf(apierror.CodeInvalidInput, "name", "name is not valid UTF-8.")
	case len(req.Scopes) == 0:
		return driver.KeyRecord{}, apierror.Invalidf(apierror.CodeInvalidInput, "scopes", "scopes must name at least one of %s.", strings.Join(Scopes, ", "))
	}
	rec := driver.KeyRecord{ProjectID: project, Name: name,
		RunsPerMinute: req.RunsPerMinute, RunsPerHour: req.RunsPerHour,
		MaterializedRunsPerMinute: req.MaterializedRunsPerMinute, MaterializedRunsPerHour: req.MaterializedRunsPerHour}
	for _, s := range req.Scopes {
		if !slices.Contains(Scopes, s) {
			return driver.KeyRecord{}, apierror.Invalidf(apierror.CodeInvalidInput, "scopes", "Unknown scope '%s'; the scopes are %s.", apierror.Cut(s), strings.Join(Scopes, ", "))
		}
		if !slices.Contains(rec.Scopes, s) {
			rec.Scopes = append(rec.Scopes, s)
		}
	}
	slices.Sort(rec.Scopes)
	if req.Endpoints != nil {
		if len(req.Endpoints) == 0 || len(req.Endpoints) > MaxEndpoints {
			return driver.KeyRecord{}, apierror.Invalidf(apierror.CodeInvalidInput, "endpoints",
				"endpoints must name between 1 and %d endpoints, or be left out for every endpoint of the project.", MaxEndpoints)
		}
		rec.Endpoints = []string{}
		for _, n := range req.Endpoints {
			if !apierror.ValidName(n) {
				return driver.KeyRecord{}, apierror.Invalidf(apierror.CodeInvalidInput, "endpoints", "Invalid endpoint name '%s' in endpoints.", apierror.Cut(n))
			}
			if !slices.Contains(rec.Endpoints, n) {
				rec.Endpoints = append(rec.Endpoints, n)
			}
		}
		slices.Sort(rec.Endpoints)
	}
	for _, b := range []struct {
		attr string
		v    int
	}{
		{LimitRunsPerMinute[len("key_"):], req.RunsPerMinute},
		{LimitRunsPerHour[len("key_"):], req.RunsPerHour},
		{LimitMaterializedRunsPerMinute[len("key_"):], req.MaterializedRunsPerMinute},
		{LimitMaterializedRunsPerHour[len("key_"):], req.MaterializedRunsPerHour},
	} {
		if b.v < limit.Unlimited {
			return driver.KeyRecord{}, apierror.Invalidf(apierror.CodeInvalidInput, b.attr, "%s must be a positive number of runs, 0 for the default or -1 for no limit.", b.attr)
		}
	}
	return rec, nil
}

// List returns the keys of project, revoked ones included, oldest first;
// never their secrets nor hashes.
func (k *Keys) List(ctx context.Context, project string) ([]Key, error) {
	recs, err := k.store.ListKeys(ctx, project)
	if err != nil {
		return nil, apierror.StoreError(err, nil)
	}
	out := make([]Key, len(recs))
	for i, r := range recs {
		out[i] = k.view(r)
	}
	return out, nil
}

// budgetText is a budget in force as a refusal writes it: -1 is "-1 = no
// limit".
func budgetText(v int) string {
	if v == limit.Unlimited {
		return "-1 = no limit"
	}
	return fmt.Sprint(v)
}

// RevokeAs is Revoke on behalf of a credential whose Grant is by (nil: the
// host): a live key that may do more than by (a scope, an endpoint or a
// budget by lacks) is refused with an *endpoint.Error of Status 403 naming what it
// has more of. A key already revoked is left as it is, as Revoke does.
func (k *Keys) RevokeAs(ctx context.Context, by *Grant, project, id string) error {
	if by != nil {
		recs, err := k.store.ListKeys(ctx, project)
		if err != nil {
			return apierror.StoreError(err, nil)
		}
		i := slices.IndexFunc(recs, func(r driver.KeyRecord) bool { return r.ID == id })
		if i < 0 {
			return notFoundf("API key '%s' not found.", apierror.Cut(id))
		}
		if recs[i].RevokedAt != nil {
			return nil
		}
		target := k.view(recs[i])
		if err := by.forbids(target.Grant(), grantee{what: "the key it revokes", budget: func(b grantBudget, v int) string {
			return b.attr + " " + budgetText(v)
		}}); err != nil {
			return err
		}
	}
	return k.Revoke(ctx, project, id)
}

// Revoke revokes the key with id in project: from now on this Keys
// refuses it, and other processes sharing the store within their
// CacheTTL. Revoking a revoked key changes nothing. It is the host's own
// act (RevokeAs with no Grant).
func (k *Keys) Revoke(ctx context.Context, project, id string) error {
	if err := k.store.RevokeKey(ctx, project, id, k.now()); err != nil {
		return apierror.StoreError(err, func() *apierror.Error { return notFoundf("API key '%s' not found.", apierror.Cut(id)) })
	}
	k.mu.Lock()
	k.revocations++
	for h, l := range k.cache {
		if l.rec != nil && l.rec.ID == id {
			delete(k.cache, h)
		}
	}
	k.mu.Unlock()
	return nil
}

// Authenticate returns the live key whose secret is secret, or an *endpoint.Error
// wrapping ErrUnauthorized (401) for an unknown or revoked one. It does not
// check the project: compare Key.ProjectID.
func (k *Keys) Authenticate(ctx context.Context, secret string) (Key, error) {
	hash := sha256.Sum256([]byte(secret))
	rec, err := k.lookup(ctx, hash)
	if err != nil {
		return Key{}, err
	}
	if rec == nil {
		return Key{}, unauthorized("Invalid API key.")
	}
	if rec.RevokedAt != nil {
		return Key{}, unauthorized("This API key was revoked.")
	}
	k.markUsed(ctx, rec)
	return k.view(*rec), nil
}

// lookup returns the key of hash, nil when there is none, from the cache
// when it is fresh.
func (k *Keys) lookup(ctx context.Context, hash [driver.KeyHashSize]byte) (*driver.KeyRecord, error) {
	now := k.now()
	k.mu.Lock()
	l, ok := k.cache[hash]
	gen := k.revocations
	k.mu.Unlock()
	if ok && now.Sub(l.at) < k.cfg.CacheTTL && !now.Before(l.at) {
		return l.rec, nil
	}
	r, err := k.store.KeyByHash(ctx, hash)
	var rec *driver.KeyRecord
	switch {
	case err == nil:
		rec = &r
	case errors.Is(err, driver.ErrNotFound):
	default:
		return nil, apierror.StoreError(err, nil)
	}
	if k.cfg.CacheTTL > 0 {
		k.mu.Lock()
		defer k.mu.Unlock()
		if k.revocations != gen {
			return rec, nil // a revocation came in between: do not cache
		}
		if len(k.cache) >= k.cfg.CacheSize {
			for h, l := range k.cache {
				if now.Sub(l.at) >= k.cfg.CacheTTL || now.Before(l.at) {
					delete(k.cache, h)
				}
			}
			if len(k.cache) >= k.cfg.CacheSize {
				clear(k.cache) // all fresh: start over rather than grow
			}
		}
		k.cache[hash] = keyLookup{rec: rec, at: now}
	}
	return rec, nil
}

// markUsed writes the key's last_used_at when the last write by this Keys
// is UsedResolution old. A failure is logged and counted
// (UsedMarkFailures); the request goes on.
func (k *Keys) markUsed(ctx context.Context, rec *driver.KeyRecord) {
	now := k.now()
	k.mu.Lock()
	last, ok := k.used[rec.ID]
	due := !ok || now.Sub(last) >= k.cfg.UsedResolution || now.Before(last)
	if due {
		if len(k.used) >= k.cfg.CacheSize {
			clear(k.used)
		}
		k.used[rec.ID] = now
	}
	k.mu.Unlock()
	if !due {
		return
	}
	if err := k.store.MarkKeyUsed(ctx, rec.ProjectID, rec.ID, now); err != nil {
		k.markFailures.Add(1)
		k.logger.ErrorContext(ctx, "apikey: writing an API key's last_used_at failed", "key_id", rec.ID, "err", err)
	}
}

// UsedMarkFailures is how many writes of last_used_at failed.
func (k *Keys) UsedMarkFailures() int64 { return k.markFailures.Load() }

// view is the API's view of rec, with the budgets in force.
func (k *Keys) view(rec driver.KeyRecord) Key {
	or := func(v, def int) int {
		if v == 0 {
			return def
		}
		return v
	}
	key := Key{
		ID: rec.ID, ProjectID: rec.ProjectID, Name: rec.Name, Prefix: rec.Prefix,
		Scopes: slices.Clone(rec.Scopes), CreatedAt: rec.CreatedAt,
		RunsPerMinute:             or(rec.RunsPerMinute, k.cfg.RunsPerMinute),
		RunsPerHour:               or(rec.RunsPerHour, k.cfg.RunsPerHour),
		MaterializedRunsPerMinute: or(rec.MaterializedRunsPerMinute, k.cfg.MaterializedRunsPerMinute),
		MaterializedRunsPerHour:   or(rec.MaterializedRunsPerHour, k.cfg.MaterializedRunsPerHour),
		LastUsedAt:                rec.LastUsedAt, RevokedAt: rec.RevokedAt,
	}
	if key.Scopes == nil {
		key.Scopes = []string{}
	}
	if rec.Endpoints != nil {
		key.Endpoints = slices.Clone(rec.Endpoints)
	}
	return key
}

// Admit counts a run by key against its budget: the materialized one for
// a run its endpoint's stored table answers, the inline one otherwise
// (endpoint.Service.Admit decides which, and calls it); per minute first, then per
// hour. A run past it is refused with an *endpoint.Error of Status 429 and Code
// endpoint.CodeThrottled whose Limit names the budget (LimitRunsPerMinute and the
// others) and whose Err is the *limit.Error that says when to retry
// (RetryAfter). A run whose budget could not be counted (the counter store
// failed, failing closed) is refused with Status 503 and Code
// endpoint.CodeBudgetUnavailable. The count waits for the counter store at most
// budget.DefaultTakeTimeout (or the Guard's Timeout).
func (k *Keys) Admit(key Key, materialized bool) error {
	perMinute, perHour := key.RunsPerMinute, key.RunsPerHour
	minuteLimit, hourLimit, kind := LimitRunsPerMinute, LimitRunsPerHour, "runs answered inline"
	counter := "key/" + key.ID + "/inline"
	if perMinute == 0 {
		perMinute = k.cfg.RunsPerMinute
	}
	if perHour == 0 {
		perHour = k.cfg.RunsPerHour
	}
	if materialized {
		perMinute, perHour = or0(key.MaterializedRunsPerMinute, k.cfg.MaterializedRunsPerMinute), or0(key.MaterializedRunsPerHour, k.cfg.MaterializedRunsPerHour)
		minuteLimit, hourLimit, kind = LimitMaterializedRunsPerMinute, LimitMaterializedRunsPerHour, "runs of materialized endpoints"
		counter = "key/" + key.ID + "/materialized"
	}
	for _, b := range []struct {
		max    int
		window time.Duration
		name   string
		per    string
		limit  limit.Limit
	}{
		{perMinute, time.Minute, minuteLimit, "minute", limit.ProjectPerMinute},
		{perHour, time.Hour, hourLimit, "hour", limit.ProjectPerHour},
	} {
		if b.max <= 0 { // limit.Unlimited
			continue
		}
		d, err := k.counter.Take(context.Background(), fmt.Sprintf("%s/%d", counter, b.window.Milliseconds()), int64(b.max), b.window)
		if errors.Is(err, budget.ErrUnavailable) {
			return &apierror.Error{Status: http.StatusServiceUnavailable, Code: apierror.CodeBudgetUnavailable,
				Detail: "This API key's budget could not be counted: the budget store is unavailable. Retry after 1 s.",
				Err:    &limit.Error{Limit: limit.CounterUnavailable, Project: key.ProjectID, Max: b.max, RetryAfter: time.Second}}
		}
		if err != nil {
			return fmt.Errorf("apikey: counting a run of API key %s: %w", key.ID, err)
		}
		if d.Allowed {
			continue
		}
		le := &limit.Error{Limit: b.limit, Project: key.ProjectID, Max: b.max, RetryAfter: d.RetryAfter}
		secs := int((le.RetryAfter + time.Second - 1) / time.Second)
		e := &apierror.Error{Status: http.StatusTooManyRequests, Code: apierror.CodeThrottled,
			Detail: fmt.Sprintf("Too many runs: this API key may start %d %s per %s (%s). Retry after %d s.", le.Max, kind, b.per, b.name, max(secs, 1)),
			Err:    le}
		e.Limit, e.LimitValue = b.name, int64(le.Max)
		return e
	}
	return nil
}

// or0 is v, or def when v is 0.
func or0(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// CounterFailures is how many times the counter store failed to count a
// key's run (each logged; see budget.Guard).
func (k *Keys) CounterFailures() int64 { return k.counter.Failures() }

// unauthorized is the 401 of a secret that is not a live key.
func unauthorized(detail string) *apierror.Error {
	return &apierror.Error{Status: http.StatusUnauthorized, Code: apierror.CodeUnauthorized, Detail: detail, Err: apierror.ErrUnauthorized}
}

// notFoundf is the 404 of a key that is not there.
func notFoundf(format string, args ...any) *apierror.Error {
	return &apierror.Error{Status: http.StatusNotFound, Code: apierror.CodeNotFound, Detail: fmt.Sprintf(format, args...), Err: driver.ErrNotFound}
}
