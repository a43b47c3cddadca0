package endpoint

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

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/limit"
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
	// tokens, never giving more than the key itself has.
	ScopeKeyAdmin = "key:admin"
)

// Scopes lists every scope a key may hold.
var Scopes = []string{ScopeEndpointRead, ScopeEndpointWrite, ScopeQueryRun, ScopeKeyAdmin}

// KeyPrefix starts every stored key's secret, so that a server (and a
// secret scanner) tells it from other credentials.
const KeyPrefix = "ekk_"

// keySecretBytes is the entropy of a secret: 256 bits, so that the
// secret's SHA-256 is as safe at rest as a slow password hash would be.
const keySecretBytes = 32

// keySecretLen is the length of a secret: the prefix and 32 bytes in
// unpadded base64url.
var keySecretLen = len(KeyPrefix) + base64.RawURLEncoding.EncodedLen(keySecretBytes)

// keyShownLen is how much of a secret its Prefix shows: the prefix and 8
// characters (48 bits), enough to tell keys apart, far too few to use.
const keyShownLen = len(KeyPrefix) + 8

// Defaults of KeysConfig.
const (
	// DefaultKeyRunsPerMinute and DefaultKeyRunsPerHour are a key's budget
	// of runs answered inline: PostHog's, 240 per minute and 2,400 per hour.
	DefaultKeyRunsPerMinute = 240
	DefaultKeyRunsPerHour   = 2400
	// DefaultKeyMaterializedRunsPerMinute and
	// DefaultKeyMaterializedRunsPerHour are a key's budget of runs of
	// materialized endpoints, which read a stored table and cost little:
	// PostHog's, 1,200 per minute and 12,000 per hour.
	DefaultKeyMaterializedRunsPerMinute = 1200
	DefaultKeyMaterializedRunsPerHour   = 12000
	// DefaultKeyCacheTTL bounds how long a Keys trusts what it read of a
	// key: a key revoked by another process sharing the store is refused
	// here within this time.
	DefaultKeyCacheTTL = 5 * time.Second
	// DefaultKeyCacheSize bounds the keys (and unknown secrets) a Keys
	// remembers.
	DefaultKeyCacheSize = 10_000
	// DefaultKeyUsedResolution is the least time between two writes of a
	// key's last_used_at by one Keys.
	DefaultKeyUsedResolution = time.Minute
	// MaxKeyEndpoints is how many endpoint names a key may be limited to.
	MaxKeyEndpoints = 1000
	// MaxKeyNameLength is the longest key name, in characters.
	MaxKeyNameLength = 200
)

// The limits a key's refused run names in Error.Limit, each a setting of
// KeysConfig and a field of CreateKeyRequest.
const (
	LimitKeyRunsPerMinute             = "key_runs_per_minute"
	LimitKeyRunsPerHour               = "key_runs_per_hour"
	LimitKeyMaterializedRunsPerMinute = "key_materialized_runs_per_minute"
	LimitKeyMaterializedRunsPerHour   = "key_materialized_runs_per_hour"
)

// CodeThrottled is the Code of a run refused by a budget (429).
const CodeThrottled = "throttled"

// KeysConfig configures Keys. Store is required; the other fields have
// defaults. A budget field holds a positive number, 0 for its default or
// -1 (limit.Unlimited) for none.
type KeysConfig struct {
	Store driver.KeyStore
	// Now is the clock; nil means time.Now in UTC, to the microsecond.
	Now func() time.Time
	// RunsPerMinute, RunsPerHour, MaterializedRunsPerMinute and
	// MaterializedRunsPerHour are the budgets of a key created without its
	// own (DefaultKeyRunsPerMinute and the others).
	RunsPerMinute             int
	RunsPerHour               int
	MaterializedRunsPerMinute int
	MaterializedRunsPerHour   int
	// CacheTTL is how long what was read of a key (or of an unknown
	// secret) is trusted: the bound on how late a revocation made by
	// another process is seen here. A revocation made through this Keys is
	// effective at once. 0 means DefaultKeyCacheTTL, a negative value
	// reads the store on every request.
	CacheTTL time.Duration
	// CacheSize bounds the cached lookups; 0 means DefaultKeyCacheSize.
	CacheSize int
	// UsedResolution is the least time between two writes of a key's
	// last_used_at; 0 means DefaultKeyUsedResolution, a negative value
	// writes it on every request.
	UsedResolution time.Duration
	// Logger receives the failures to write last_used_at (the request
	// goes on); nil means slog.Default().
	Logger *slog.Logger
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

// CreateKeyRequest is what Keys.Create is given. Name and Scopes are
// required; Endpoints nil gives every endpoint of the project, a list
// names the only ones the key may use. A budget of 0 takes the host's
// default, -1 is unlimited.
type CreateKeyRequest struct {
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
// Authenticate caches what it read of a key for KeysConfig.CacheTTL: a
// revocation through this Keys is effective at once, one made by another
// process sharing the store within CacheTTL. Budgets are counted in this
// process (several processes each allow a key its budget).
type Keys struct {
	cfg    KeysConfig
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

	limMu    sync.Mutex
	limiters map[[2]int]*limit.Limiter

	markFailures atomic.Int64
}

// keyLookup is a cached read of a secret's hash: the key, or nil for an
// unknown secret.
type keyLookup struct {
	rec *driver.KeyRecord
	at  time.Time
}

// NewKeys returns the Keys of cfg, or an error naming a setting that is
// missing or out of range.
func NewKeys(cfg KeysConfig) (*Keys, error) {
	if cfg.Store == nil {
		return nil, errors.New("endpoint: KeysConfig.Store is required")
	}
	for _, f := range []struct {
		name string
		v    *int
		def  int
	}{
		{"RunsPerMinute", &cfg.RunsPerMinute, DefaultKeyRunsPerMinute},
		{"RunsPerHour", &cfg.RunsPerHour, DefaultKeyRunsPerHour},
		{"MaterializedRunsPerMinute", &cfg.MaterializedRunsPerMinute, DefaultKeyMaterializedRunsPerMinute},
		{"MaterializedRunsPerHour", &cfg.MaterializedRunsPerHour, DefaultKeyMaterializedRunsPerHour},
	} {
		switch {
		case *f.v == 0:
			*f.v = f.def
		case *f.v < limit.Unlimited:
			return nil, fmt.Errorf("endpoint: KeysConfig.%s is %d; use a positive number, 0 for the default or -1 for none", f.name, *f.v)
		}
	}
	if cfg.CacheTTL == 0 {
		cfg.CacheTTL = DefaultKeyCacheTTL
	}
	if cfg.CacheSize <= 0 {
		cfg.CacheSize = DefaultKeyCacheSize
	}
	if cfg.UsedResolution == 0 {
		cfg.UsedResolution = DefaultKeyUsedResolution
	}
	k := &Keys{cfg: cfg, store: cfg.Store, now: cfg.Now, logger: cfg.Logger,
		cache: map[[driver.KeyHashSize]byte]keyLookup{}, used: map[string]time.Time{},
		limiters: map[[2]int]*limit.Limiter{}}
	if k.now == nil {
		k.now = func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }
	}
	if k.logger == nil {
		k.logger = slog.Default()
	}
	return k, nil
}

// LooksLikeKey reports whether s has the shape of a stored key's secret
// (KeyPrefix and 43 base64url characters), so that a server hands only
// those to Authenticate and the others to its other credentials.
func LooksLikeKey(s string) bool {
	if len(s) != keySecretLen || !strings.HasPrefix(s, KeyPrefix) {
		return false
	}
	_, err := base64.RawURLEncoding.Strict().DecodeString(s[len(KeyPrefix):])
	return err == nil
}

// Create makes a key of project as req asks and returns it with its
// secret, which is shown this once: only its hash is stored.
func (k *Keys) Create(ctx context.Context, project string, req CreateKeyRequest) (Key, string, error) {
	rec, err := k.validate(project, req)
	if err != nil {
		return Key{}, "", err
	}
	var raw [keySecretBytes]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return Key{}, "", fmt.Errorf("endpoint: making a key: %w", err)
	}
	secret := KeyPrefix + base64.RawURLEncoding.EncodeToString(raw[:])
	rec.ID, rec.Prefix, rec.Hash, rec.CreatedAt = uuid.NewString(), secret[:keyShownLen], sha256.Sum256([]byte(secret)), k.now()
	if err := k.store.CreateKey(ctx, rec); err != nil {
		return Key{}, "", storeError(err, nil)
	}
	return k.view(rec), secret, nil
}

// validate checks req and returns the record it asks for (without its
// id, secret and time).
func (k *Keys) validate(project string, req CreateKeyRequest) (driver.KeyRecord, error) {
	name := strings.TrimSpace(req.Name)
	switch {
	case name == "":
		return driver.KeyRecord{}, required("name")
	case utf8.RuneCountInString(name) > MaxKeyNameLength:
		return driver.KeyRecord{}, invalidf(CodeInvalidInput, "name", "name may hold at most %d characters.", MaxKeyNameLength)
	case len(req.Scopes) == 0:
		return driver.KeyRecord{}, invalidf(CodeInvalidInput, "scopes", "scopes must name at least one of %s.", strings.Join(Scopes, ", "))
	}
	rec := driver.KeyRecord{ProjectID: project, Name: name,
		RunsPerMinute: req.RunsPerMinute, RunsPerHour: req.RunsPerHour,
		MaterializedRunsPerMinute: req.MaterializedRunsPerMinute, MaterializedRunsPerHour: req.MaterializedRunsPerHour}
	for _, s := range req.Scopes {
		if !slices.Contains(Scopes, s) {
			return driver.KeyRecord{}, invalidf(CodeInvalidInput, "scopes", "Unknown scope '%s'; the scopes are %s.", cut(s), strings.Join(Scopes, ", "))
		}
		if !slices.Contains(rec.Scopes, s) {
			rec.Scopes = append(rec.Scopes, s)
		}
	}
	slices.Sort(rec.Scopes)
	if req.Endpoints != nil {
		if len(req.Endpoints) == 0 || len(req.Endpoints) > MaxKeyEndpoints {
			return driver.KeyRecord{}, invalidf(CodeInvalidInput, "endpoints",
				"endpoints must name between 1 and %d endpoints, or be left out for every endpoint of the project.", MaxKeyEndpoints)
		}
		rec.Endpoints = []string{}
		for _, n := range req.Endpoints {
			if !validName(n) {
				return driver.KeyRecord{}, invalidf(CodeInvalidInput, "endpoints", "Invalid endpoint name '%s' in endpoints.", cut(n))
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
		{LimitKeyRunsPerMinute[len("key_"):], req.RunsPerMinute},
		{LimitKeyRunsPerHour[len("key_"):], req.RunsPerHour},
		{LimitKeyMaterializedRunsPerMinute[len("key_"):], req.MaterializedRunsPerMinute},
		{LimitKeyMaterializedRunsPerHour[len("key_"):], req.MaterializedRunsPerHour},
	} {
		if b.v < limit.Unlimited {
			return driver.KeyRecord{}, invalidf(CodeInvalidInput, b.attr, "%s must be a positive number of runs, 0 for the default or -1 for no limit.", b.attr)
		}
	}
	return rec, nil
}

// Grants checks that a key made by req gives no more than k has: no scope
// k lacks, and when k is limited to named endpoints, none beyond them. A
// key that creates keys uses it, so that key:admin cannot widen itself.
func (k *Key) Grants(req CreateKeyRequest) error {
	for _, s := range req.Scopes {
		// An unknown scope is Create's 400, not a refusal.
		if slices.Contains(Scopes, s) && !k.Allows(s) {
			return NewError(ErrForbidden, CodeForbidden, "scopes", fmt.Sprintf("This API key may not give the scope '%s', which it does not have.", cut(s)))
		}
	}
	if !k.Restricted() {
		return nil
	}
	if req.Endpoints == nil {
		return NewError(ErrForbidden, CodeForbidden, "endpoints", "This API key is limited to named endpoints: the key it creates must name its endpoints among them.")
	}
	for _, n := range req.Endpoints {
		if validName(n) && !k.AllowsEndpoint(n) {
			return NewError(ErrForbidden, CodeForbidden, "endpoints", fmt.Sprintf("This API key may not give endpoint '%s', which it may not use.", cut(n)))
		}
	}
	return nil
}

// List returns the keys of project, revoked ones included, oldest first;
// never their secrets nor hashes.
func (k *Keys) List(ctx context.Context, project string) ([]Key, error) {
	recs, err := k.store.ListKeys(ctx, project)
	if err != nil {
		return nil, storeError(err, nil)
	}
	out := make([]Key, len(recs))
	for i, r := range recs {
		out[i] = k.view(r)
	}
	return out, nil
}

// Revoke revokes the key with id in project: from now on this Keys
// refuses it, and other processes sharing the store within their
// CacheTTL. Revoking a revoked key changes nothing.
func (k *Keys) Revoke(ctx context.Context, project, id string) error {
	if err := k.store.RevokeKey(ctx, project, id, k.now()); err != nil {
		return storeError(err, func() *Error { return notFoundf("API key '%s' not found.", cut(id)) })
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

// Authenticate returns the live key whose secret is secret, or an *Error
// wrapping ErrUnauthorized (401) for an unknown or revoked one. It does not
// check the project: compare Key.ProjectID.
func (k *Keys) Authenticate(ctx context.Context, secret string) (Key, error) {
	hash := sha256.Sum256([]byte(secret))
	rec, err := k.lookup(ctx, hash)
	if err != nil {
		return Key{}, err
	}
	if rec == nil {
		return Key{}, NewError(ErrUnauthorized, CodeUnauthorized, "", "Invalid API key.")
	}
	if rec.RevokedAt != nil {
		return Key{}, NewError(ErrUnauthorized, CodeUnauthorized, "", "This API key was revoked.")
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
		return nil, storeError(err, nil)
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
		k.logger.ErrorContext(ctx, "endpoint: writing an API key's last_used_at failed", "key_id", rec.ID, "err", err)
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
// (Service.Admit decides which, and calls it). A run past
// it is refused with an *Error of Status 429 and Code CodeThrottled whose
// Limit names the budget (LimitKeyRunsPerMinute and the others) and whose
// Err is the *limit.Error that says when to retry (RetryAfter).
func (k *Keys) Admit(key Key, materialized bool) error {
	perMinute, perHour := key.RunsPerMinute, key.RunsPerHour
	minuteLimit, hourLimit, kind := LimitKeyRunsPerMinute, LimitKeyRunsPerHour, "runs answered inline"
	if materialized {
		perMinute, perHour = key.MaterializedRunsPerMinute, key.MaterializedRunsPerHour
		minuteLimit, hourLimit, kind = LimitKeyMaterializedRunsPerMinute, LimitKeyMaterializedRunsPerHour, "runs of materialized endpoints"
	}
	if perMinute == limit.Unlimited && perHour == limit.Unlimited {
		return nil
	}
	l, err := k.limiter(perMinute, perHour)
	if err != nil {
		return err
	}
	counter := key.ID + "/inline"
	if materialized {
		counter = key.ID + "/materialized"
	}
	release, err := l.Acquire(counter)
	if err == nil {
		release() // budgets count starts; a key's concurrency is its project's
		return nil
	}
	var le *limit.Error
	if !errors.As(err, &le) {
		return err
	}
	name, per := minuteLimit, "minute"
	if le.Limit == limit.ProjectPerHour {
		name, per = hourLimit, "hour"
	}
	secs := int((le.RetryAfter + time.Second - 1) / time.Second)
	e := &Error{Status: http.StatusTooManyRequests, Code: CodeThrottled,
		Detail: fmt.Sprintf("Too many runs: this API key may start %d %s per %s (%s). Retry after %d s.", le.Max, kind, per, name, max(secs, 1)),
		Err:    le}
	return limited(e, name, int64(le.Max))
}

// limiter returns the limiter of the budget (perMinute, perHour), shared
// by the keys that have it, each counted apart.
func (k *Keys) limiter(perMinute, perHour int) (*limit.Limiter, error) {
	k.limMu.Lock()
	defer k.limMu.Unlock()
	b := [2]int{perMinute, perHour}
	if l, ok := k.limiters[b]; ok {
		return l, nil
	}
	l, err := limit.New(limit.Config{
		ProjectPerMinute: perMinute, ProjectPerHour: perHour,
		ProjectConcurrency: limit.Unlimited, GlobalConcurrency: limit.Unlimited,
		Now: k.now,
	})
	if err != nil {
		return nil, fmt.Errorf("endpoint: key budget: %w", err)
	}
	k.limiters[b] = l
	return l, nil
}
