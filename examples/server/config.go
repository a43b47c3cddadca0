package main

import (
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/embed"
	"github.com/endpointkit/endpointkit/endpoint/limit"
	"github.com/endpointkit/endpointkit/endpoint/metrics"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/sql/engine"
)

// envAPIKey is the environment variable that supplies the API key when the
// -api-key flag does not.
const envAPIKey = "ENDPOINTKIT_API_KEY"

// envMetricsKey is the environment variable that supplies the metrics key
// when the -metrics-key flag does not.
const envMetricsKey = "ENDPOINTKIT_METRICS_KEY"

// keySource says where the API key came from, which decides how the curl
// session refers to it.
type keySource int

const (
	keyFromFlag keySource = iota
	keyFromEnv
	keyGenerated
	// keyFromGrant: no bare key; the session uses the KEY=PROJECT key of
	// -project, already in the grants.
	keyFromGrant
)

// config is the parsed command line.
type config struct {
	addr string
	// driver is the engine of the data; dsn its database (-db on SQLite),
	// storeDSN the store's when it is not the data's.
	driver, dsn, storeDSN string
	// cluster is the ClickHouse cluster of the materialized tables, ""
	// for a single server.
	cluster   string
	dbPath    string // "" is a temporary database
	storePath string // "": beside dbPath (see openDatabases)
	apiKey    string
	keySource keySource
	project   string
	// grants are the keys given as KEY=PROJECT, each for its project.
	grants     []grant
	demoEvents int
	// demoEnd is the UTC day the demo events end at (they lie in the
	// demo.Days days before it): the day the server starts unless
	// -demo-end names another, so that relative dates (-7d) answer.
	demoEnd time.Time
	limits  limit.Config
	// embedSecret signs the embed tokens of every project (kid "default");
	// embedGenerated tells that it was generated.
	embedSecret    string
	embedGenerated bool
	// runTimeout, refreshTimeout and maxRefreshes are the Service's
	// RunTimeout, RefreshTimeout and MaxRefreshes; a negative time is no
	// limit.
	runTimeout, refreshTimeout time.Duration
	maxRefreshes               int
	// cacheBytes bounds the result cache; 0 turns it off.
	cacheBytes int64
	// maxCachedAnswerBytes is the most one cached answer may weigh.
	maxCachedAnswerBytes int64
	// metricsAddr is the listen address of /metrics, "" for the API's
	// address; metricsKey the credential /metrics needs ("" for none, on
	// its own address only), metricsKeyGenerated that it was generated.
	metricsAddr         string
	metricsKey          string
	metricsKeyGenerated bool
	// metricsMaxEndpoints caps the endpoint names labelled in the metrics
	// (metrics.WithMaxEndpoints: negative is no cap).
	metricsMaxEndpoints int
	// pprofAddr is the listen address of net/http/pprof, "" (the default)
	// for none.
	pprofAddr string
	// sqliteLength is sqlexec.SQLiteLimits.Length of the SQLite data.
	sqliteLength int
	// maxMaterializedBytes is the Service's MaxMaterializedBytes.
	maxMaterializedBytes int64
	// mcpStdio serves the MCP tools of project on stdin and stdout instead
	// of HTTP.
	mcpStdio bool
	// mcpLoadWait is how long a stdio tool call that needs the demo data
	// waits for its background load before answering that it is still
	// loading.
	mcpLoadWait time.Duration
	// budgets is where the run budgets (keys', projects', tokens') are
	// counted: budgetsMemory, budgetsStore or budgetsRedis (at redisURL);
	// budgetsFailOpen admits the runs whose budget could not be counted.
	budgets         string
	redisURL        string
	budgetsFailOpen bool
}

// The places -budgets names.
const (
	budgetsMemory = "memory"
	budgetsStore  = "store"
	budgetsRedis  = "redis"
)

// parseFlags reads args; getenv supplies the environment.
func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.addr, "addr", "127.0.0.1:8080", "address to listen on")
	fs.StringVar(&c.driver, "driver", "sqlite", "engine of the analytics data: sqlite, postgres, mysql, clickhouse (chdb with -tags chdb)")
	fs.StringVar(&c.dsn, "dsn", "", "database of the data: a pgx URL, a go-sql-driver DSN, clickhouse://host:port/db, or chDB's data directory (sqlite: use -db)")
	fs.StringVar(&c.cluster, "clickhouse-cluster", "", "with -driver clickhouse: the cluster (remote_servers name or macro) to create the materialized tables on, ON CLUSTER, as Replicated tables behind Distributed ones")
	fs.StringVar(&c.storeDSN, "store-dsn", "", "database of the store, of the same engine (default: the -dsn database; with clickhouse or chdb, a SQLite file: -store or a temporary one)")
	fs.StringVar(&c.dbPath, "db", "", "SQLite database file of the events and materialized tables (default: a temporary one, deleted at exit)")
	fs.StringVar(&c.storePath, "store", "", "SQLite database file of the endpoints and variables (default: beside -db, FILE-store.db)")
	fs.DurationVar(&c.runTimeout, "run-timeout", endpoint.DefaultRunTimeout, "time limit of each run (0 for none)")
	fs.DurationVar(&c.refreshTimeout, "refresh-timeout", endpoint.DefaultRefreshTimeout, "time limit of each refresh of a materialized endpoint (0 for none)")
	fs.Int64Var(&c.maxMaterializedBytes, "max-materialized-bytes", endpoint.DefaultMaxMaterializedBytes, "bytes a materialized endpoint's stored table may take in the database (negative: no bound)")
	fs.IntVar(&c.maxRefreshes, "max-refreshes", endpoint.DefaultMaxRefreshes, "refreshes of materialized endpoints that run at once")
	keys := &keyFlag{c: &c}
	fs.Var(keys, "api-key", "API key: KEY for -project (default $"+envAPIKey+"), or KEY=PROJECT for that project; repeatable. A key is generated and printed only when none is given")
	fs.StringVar(&c.project, "project", "1", "the project the API key may use")
	fs.DurationVar(&c.mcpLoadWait, "mcp-load-wait", defaultMCPLoadWait, "with -mcp-stdio: how long a tool call that reads the events waits for the demo data still loading in the background before answering that it is still loading (0 answers at once)")
	fs.BoolVar(&c.mcpStdio, "mcp-stdio", false, "serve the endpoints of -project as MCP tools on stdin/stdout instead of HTTP, acting as -project's API key (stdio has no credential)")
	fs.StringVar(&c.embedSecret, "embed-secret", "", "HS256 secret of the embed tokens of every project (kid default; generated and printed when not given; at least 16 bytes)")
	fs.IntVar(&c.demoEvents, "demo-events", 100000, "demo events to load when the events table is empty (0 for none)")
	demoEnd := fs.String("demo-end", "", "the day YYYY-MM-DD the loaded demo events end at, the last of them on the day before (default: today, UTC)")
	fs.IntVar(&c.sqliteLength, "sqlite-max-length", sqlexec.DefaultSQLiteLength, "with -driver sqlite: SQLITE_LIMIT_LENGTH of every run and refresh, the longest string, blob or row one query may build (negative: SQLite's own, a billion bytes)")
	fs.Int64Var(&c.cacheBytes, "cache-bytes", 64<<20, "bytes of run answers the result cache keeps in memory (0 for no cache)")
	fs.Int64Var(&c.maxCachedAnswerBytes, "max-cached-answer-bytes", endpoint.DefaultMaxCachedAnswerBytes, "bytes one answer may weigh to be kept in the result cache: a larger one (a long export) is answered, streamed, and not kept (negative: no bound)")
	fs.StringVar(&c.metricsAddr, "metrics-addr", "", "serve /metrics on this address of its own instead of -addr (no key needed there unless -metrics-key is given)")
	fs.StringVar(&c.metricsKey, "metrics-key", "", "the key /metrics needs, as 'Authorization: Bearer KEY' (default $"+envMetricsKey+"; without -metrics-addr, generated and printed when not given)")
	fs.IntVar(&c.metricsMaxEndpoints, "metrics-max-endpoints", metrics.DefaultMaxEndpoints, "endpoint names (per project) labelled in the metrics, the rest counted as "+metrics.OtherEndpoint+" (0 for no limit)")
	fs.StringVar(&c.pprofAddr, "pprof-addr", "", "serve Go's profiles (net/http/pprof, /debug/pprof/) on this address of its own, with no key: for measuring, on a loopback address only (default: not served)")
	fs.StringVar(&c.budgets, "budgets", "", "where run budgets (keys', projects', embed tokens') are counted: memory (this process alone), store (the store's database, shared by the servers on it) or redis (-redis; the default when -redis is given)")
	fs.StringVar(&c.redisURL, "redis", "", "Redis of -budgets redis, as redis://[user:password@]host:port/db")
	fs.BoolVar(&c.budgetsFailOpen, "budgets-fail-open", false, "admit the runs whose budget cannot be counted (the budget store down); by default they are refused (503)")
	limits := []limitFlag{
		{"project-concurrency", "runs of one project in flight at once", limit.DefaultProjectConcurrency, &c.limits.ProjectConcurrency},
		{"project-runs-per-minute", "runs one project may start per sliding minute", limit.DefaultProjectPerMinute, &c.limits.ProjectPerMinute},
		{"project-runs-per-hour", "runs one project may start per sliding hour", limit.DefaultProjectPerHour, &c.limits.ProjectPerHour},
		{"global-concurrency", "runs of all projects in flight at once", limit.DefaultGlobalConcurrency, &c.limits.GlobalConcurrency},
	}
	for _, l := range limits {
		fs.IntVar(l.dst, l.flag, l.def, l.usage+" (0 for no limit)")
	}
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	c.demoEnd = demo.Day(time.Now())
	if *demoEnd != "" {
		end, err := time.Parse(time.DateOnly, *demoEnd)
		if err != nil {
			return config{}, fmt.Errorf("-demo-end must be a date YYYY-MM-DD, got %q", *demoEnd)
		}
		c.demoEnd = end
	}
	for _, check := range []func() error{
		c.checkCounts,
		func() error { return checkLimits(limits) },
		c.checkEmbedSecret,
		c.checkTimeouts,
		c.checkEngine,
		c.checkBudgets,
		func() error { return c.checkMetrics(getenv) },
	} {
		if err := check(); err != nil {
			return config{}, err
		}
	}
	projectSet := false
	fs.Visit(func(f *flag.Flag) { projectSet = projectSet || f.Name == "project" })
	if err := c.chooseAPIKey(getenv, projectSet); err != nil {
		return config{}, err
	}
	return c, nil
}

// limitFlag is a run limit's flag: its name, usage, default and the field
// of limit.Config it sets.
type limitFlag struct {
	flag  string
	usage string
	def   int
	dst   *int
}

// checkLimits refuses a negative run limit and turns 0 into no limit.
func checkLimits(limits []limitFlag) error {
	for _, l := range limits {
		switch {
		case *l.dst < 0:
			return fmt.Errorf("-%s must be 0 or more, got %d", l.flag, *l.dst)
		case *l.dst == 0:
			*l.dst = limit.Unlimited
		}
	}
	return nil
}

// checkBudgets chooses where budgets are counted: -budgets, or redis when
// -redis is given, or memory; redis needs -redis, and -redis needs redis.
func (c *config) checkBudgets() error {
	if c.budgets == "" {
		c.budgets = budgetsMemory
		if c.redisURL != "" {
			c.budgets = budgetsRedis
		}
	}
	switch {
	case !slices.Contains([]string{budgetsMemory, budgetsStore, budgetsRedis}, c.budgets):
		return fmt.Errorf("-budgets must be memory, store or redis, got %q", c.budgets)
	case c.budgets == budgetsRedis && c.redisURL == "":
		return errors.New("-budgets redis needs -redis redis://host:port/db")
	case c.budgets != budgetsRedis && c.redisURL != "":
		return fmt.Errorf("-redis is for -budgets redis, not %s", c.budgets)
	}
	return nil
}

// checkCounts refuses a negative cache size, demo event count or refresh
// count, and an empty project.
func (c *config) checkCounts() error {
	switch {
	case c.cacheBytes < 0:
		return fmt.Errorf("-cache-bytes must be 0 or more, got %d", c.cacheBytes)
	case c.maxCachedAnswerBytes == 0:
		return fmt.Errorf("-max-cached-answer-bytes must not be 0: give a number of bytes, or a negative one for no bound")
	case c.project == "":
		return errors.New("-project must not be empty")
	case c.demoEvents < 0:
		return fmt.Errorf("-demo-events must be 0 or more, got %d", c.demoEvents)
	}
	return nil
}

// checkEmbedSecret generates the embed secret when none was given, and
// refuses one too short.
func (c *config) checkEmbedSecret() error {
	if c.embedSecret == "" {
		c.embedSecret, c.embedGenerated = rand.Text(), true
	} else if len(c.embedSecret) < embed.MinSecretBytes {
		return fmt.Errorf("-embed-secret must be at least %d bytes", embed.MinSecretBytes)
	}
	return nil
}

// checkMetrics takes the metrics key of the environment when the flag
// gives none, generates one when /metrics shares the API's address, and
// turns a -metrics-max-endpoints of 0 into no cap.
func (c *config) checkMetrics(getenv func(string) string) error {
	if c.metricsKey == "" {
		c.metricsKey = getenv(envMetricsKey)
	}
	if c.metricsKey == "" && c.metricsAddr == "" {
		c.metricsKey, c.metricsKeyGenerated = "em_"+rand.Text(), true
	}
	if strings.ContainsAny(c.metricsKey, " \t\r\n") {
		return errors.New("-metrics-key must hold no spaces or line breaks")
	}
	switch {
	case c.metricsMaxEndpoints < 0:
		return fmt.Errorf("-metrics-max-endpoints must be 0 or more, got %d", c.metricsMaxEndpoints)
	case c.metricsMaxEndpoints == 0:
		c.metricsMaxEndpoints = -1 // metrics.WithMaxEndpoints's "no cap"
	}
	return nil
}

// checkTimeouts refuses a negative time limit and turns 0 into the
// Service's "no limit"; at least one refresh must be allowed to run.
func (c *config) checkTimeouts() error {
	for _, d := range []struct {
		flag string
		v    *time.Duration
	}{{"run-timeout", &c.runTimeout}, {"refresh-timeout", &c.refreshTimeout}} {
		switch {
		case *d.v < 0:
			return fmt.Errorf("-%s must be 0 or more, got %s", d.flag, *d.v)
		case *d.v == 0:
			*d.v = -1 // the Service's "no limit"
		}
	}
	if c.mcpLoadWait < 0 {
		return fmt.Errorf("-mcp-load-wait must be 0 or more, got %s", c.mcpLoadWait)
	}
	if c.maxRefreshes < 1 {
		return fmt.Errorf("-max-refreshes must be 1 or more, got %d", c.maxRefreshes)
	}
	return nil
}

// checkEngine refuses a server engine without its -dsn, -store beside a
// temporary SQLite database, and a cluster name off ClickHouse or that
// ClickHouse would not take.
func (c *config) checkEngine() error {
	if c.cluster != "" {
		if c.driver != "clickhouse" {
			return fmt.Errorf("-clickhouse-cluster needs -driver clickhouse, not %s", c.driver)
		}
		if _, err := engine.ClickHouseCluster(c.cluster); err != nil {
			return fmt.Errorf("-clickhouse-cluster: %w", err)
		}
	}
	if c.driver != "sqlite" && c.dsn == "" && c.driver != "chdb" {
		return fmt.Errorf("-driver %s needs -dsn", c.driver)
	}
	if c.storePath != "" && c.dbPath == "" && c.driver == "sqlite" {
		return errors.New("-store needs -db: a temporary database keeps its store beside it")
	}
	return nil
}

// chooseAPIKey takes the key of -api-key, else of the environment, else
// the KEY=PROJECT key given for -project, and records which. Only when no
// key at all was given is one generated: a server given its keys as
// KEY=PROJECT accepts those and no other. Given keys for other projects
// only, the session is about the first of them, unless -project names a
// project without a key, which is refused.
func (c *config) chooseAPIKey(getenv func(string) string, projectSet bool) error {
	switch {
	case c.apiKey != "":
		c.keySource = keyFromFlag
	case getenv(envAPIKey) != "":
		c.apiKey, c.keySource = getenv(envAPIKey), keyFromEnv
	case len(c.grants) > 0:
		for _, g := range c.grants {
			if g.project == c.project {
				c.apiKey, c.keySource = g.key, keyFromGrant
				return nil
			}
		}
		if projectSet {
			return fmt.Errorf("-project %s has no API key: give -api-key KEY or -api-key KEY=%s", c.project, c.project)
		}
		c.project, c.apiKey, c.keySource = c.grants[0].project, c.grants[0].key, keyFromGrant
	default:
		c.apiKey, c.keySource = newAPIKey(), keyGenerated
	}
	return nil
}

// grant is an API key for one project.
type grant struct{ key, project string }

// keyFlag reads repeated -api-key values: a bare KEY is the key of
// -project (at most one), KEY=PROJECT the key of PROJECT.
type keyFlag struct{ c *config }

func (f *keyFlag) String() string { return "" }

func (f *keyFlag) Set(v string) error {
	key, project, ok := strings.Cut(v, "=")
	if !ok {
		if f.c.apiKey != "" {
			return errors.New("only one -api-key may be given without =PROJECT")
		}
		f.c.apiKey = v
		return nil
	}
	if key == "" || project == "" {
		return fmt.Errorf("want KEY=PROJECT, got %q", v)
	}
	f.c.grants = append(f.c.grants, grant{key, project})
	return nil
}

// projects lists the projects the server serves: -project first, then those
// of the KEY=PROJECT grants, each once.
func (c config) projects() []string {
	out := []string{c.project}
	for _, g := range c.grants {
		if !slices.Contains(out, g.project) {
			out = append(out, g.project)
		}
	}
	return out
}

// newAPIKey returns a random key: 128 bits from crypto/rand, as text that
// needs no quoting in a shell or a header.
func newAPIKey() string {
	return "ek_" + rand.Text()
}
